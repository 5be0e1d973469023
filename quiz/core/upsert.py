"""Create-or-update helpers shared by the content and exercise loaders."""

from __future__ import annotations


def apply_values(obj, values: dict) -> bool:
    """Set `values` on `obj`; return True when anything changed."""
    changed = False
    for name, value in values.items():
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed = True
    return changed


def upsert(model, lookup: dict, values: dict) -> str:
    """Create or update one row; return "created", "updated" or "unchanged"."""
    obj = model.objects.filter(**lookup).first()
    if obj is None:
        model.objects.create(**lookup, **values)
        return "created"
    if apply_values(obj, values):
        obj.save()
        return "updated"
    return "unchanged"
