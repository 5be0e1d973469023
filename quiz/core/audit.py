"""Audit trail of authored records: who changed what, and when.

`audit_record` is the one write; `AuditedAdminMixin` calls it for every save
and delete made in the admin, inlines included, so the trail does not depend
on each admin remembering to log. Values are snapshots of plain JSON (related
rows by their text, long text cut short) so an entry stays readable after the
row it describes is gone.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

from django.db import models, transaction

from quiz.core.models import AuditEntry

# Long Markdown bodies would make every entry huge; the first part is enough to
# recognise the edit, and the full text is in the row (or in git).
MAX_VALUE_CHARS = 300
_SKIPPED = (models.AutoField, models.BigAutoField)

Action = AuditEntry.Action


def _plain(value):
    """A JSON-able, length-capped stand-in for a field value."""
    if isinstance(value, datetime | date):
        value = value.isoformat()
    elif isinstance(value, Decimal):
        value = str(value)
    elif isinstance(value, models.Model):
        value = str(value)
    if isinstance(value, dict | list):
        text = json.dumps(value, sort_keys=True, default=str)
        if len(text) <= MAX_VALUE_CHARS:
            return value
        value = text
    if isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
        return f"{value[:MAX_VALUE_CHARS]}… ({len(value):,} characters)"
    return value


def audit_snapshot(instance: models.Model) -> dict:
    """The audited fields of `instance` as plain values (m2m as sorted text)."""
    snapshot = {}
    for field in instance._meta.concrete_fields:
        if isinstance(field, _SKIPPED) or getattr(field, "auto_now", False):
            continue
        if getattr(field, "auto_now_add", False):
            continue
        if field.is_relation:
            related_id = getattr(instance, field.attname)
            value = str(getattr(instance, field.name)) if related_id else None
        else:
            value = field.value_from_object(instance)
        snapshot[field.name] = _plain(value)
    if instance.pk is not None:
        for field in instance._meta.many_to_many:
            snapshot[field.name] = sorted(
                str(obj) for obj in getattr(instance, field.name).all()
            )
    return snapshot


def audit_changes(*, old: dict, new: dict) -> dict:
    """`{field: [old, new]}` for each field whose value differs."""
    names = list(dict.fromkeys([*old, *new]))
    return {
        name: [old.get(name), new.get(name)]
        for name in names
        if old.get(name) != new.get(name)
    }


def audit_record(
    *, actor, action: str, instance: models.Model, changes: dict
) -> AuditEntry:
    """Write one entry; `actor` is None for commands such as load_content."""
    if action not in Action.values:
        raise ValueError(f"unknown audit action {action!r}")
    meta = instance._meta
    return AuditEntry.objects.create(
        actor=actor if actor is not None and actor.is_authenticated else None,
        action=action,
        model=f"{meta.app_label}.{meta.object_name}",
        object_id=str(instance.pk)[:64],
        object_repr=str(instance)[:200],
        changes=changes,
    )


def audit_created(*, actor, instance: models.Model) -> AuditEntry:
    return audit_record(
        actor=actor,
        action=Action.CREATE,
        instance=instance,
        changes=audit_changes(old={}, new=audit_snapshot(instance)),
    )


def audit_deleted(*, actor, instance: models.Model, snapshot: dict) -> AuditEntry:
    return audit_record(
        actor=actor,
        action=Action.DELETE,
        instance=instance,
        changes=audit_changes(old=snapshot, new={}),
    )


def _fetch(model, pk) -> models.Model | None:
    return model._default_manager.filter(pk=pk).first() if pk is not None else None


class AuditedAdminMixin:
    """Record every admin create/update/delete, including inline rows.

    The parent row is recorded after its inlines and many-to-many fields are
    saved, so one entry holds the whole edit of the form. Everything runs in
    the admin's own transaction: an entry is never written for an edit that
    was rolled back.
    """

    def save_model(self, request, obj, form, change):
        before = _fetch(type(obj), obj.pk) if change else None
        request._audit_before = audit_snapshot(before) if before else None
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        obj = form.instance
        before = getattr(request, "_audit_before", None)
        if before is None:
            audit_created(actor=request.user, instance=obj)
            return
        changes = audit_changes(old=before, new=audit_snapshot(obj))
        if changes:
            audit_record(
                actor=request.user,
                action=Action.UPDATE,
                instance=obj,
                changes=changes,
            )

    def save_formset(self, request, form, formset, change):
        # Django clears the pk of a deleted row, so remember each form's pk.
        pk_of = {id(f.instance): f.instance.pk for f in formset.initial_forms}
        before = {
            obj.pk: audit_snapshot(obj)
            for obj in formset.model._default_manager.filter(
                pk__in=[pk for pk in pk_of.values() if pk is not None]
            )
        }
        super().save_formset(request, form, formset, change)
        for obj in formset.new_objects:
            audit_created(actor=request.user, instance=obj)
        for obj, _fields in formset.changed_objects:
            changes = audit_changes(old=before.get(obj.pk, {}), new=audit_snapshot(obj))
            if changes:
                audit_record(
                    actor=request.user,
                    action=Action.UPDATE,
                    instance=obj,
                    changes=changes,
                )
        for obj in formset.deleted_objects:
            obj.pk = pk_of.get(id(obj))
            audit_deleted(
                actor=request.user, instance=obj, snapshot=before.get(obj.pk, {})
            )

    def delete_model(self, request, obj):
        snapshot, original_pk = audit_snapshot(obj), obj.pk
        with transaction.atomic():
            super().delete_model(request, obj)
            obj.pk = original_pk  # for the entry's object_id
            audit_deleted(actor=request.user, instance=obj, snapshot=snapshot)

    def delete_queryset(self, request, queryset):
        rows = [(obj, obj.pk, audit_snapshot(obj)) for obj in queryset]
        with transaction.atomic():
            super().delete_queryset(request, queryset)
            for obj, pk, snapshot in rows:
                obj.pk = pk
                audit_deleted(actor=request.user, instance=obj, snapshot=snapshot)
