"""LMS identities to local accounts: by (issuer, sub), never by name or email.

A matching email is not proof of identity (any platform admin can set one),
so an LMS user gets a new local account the first time and that same account
ever after. Roles follow the LMS: an Instructor (or course administrator) is
an instructor here; everyone else a learner. Nobody is demoted by a launch:
a local admin who launches as a learner stays an admin.
"""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils.text import slugify
from lti_tool.lti_core.constants import ContextRole
from lti_tool.lti_core.utils import normalize_role

from lms.models import LmsAccount
from quiz.core.roles import ADMIN, INSTRUCTOR, LEARNER, assign_role, user_role

TEACHING_ROLES = {
    ContextRole.INSTRUCTOR,
    ContextRole.ADMINISTRATOR,
    ContextRole.CONTENT_DEVELOPER,
}
TEACHING_SUB_ROLES = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#"
INSTITUTION_ADMIN = (
    "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"
)


def role_for(roles: list[str]) -> str:
    """Instructor or learner, from an LTI roles claim (or NRPS member roles)."""
    normal = {normalize_role(str(role)) for role in roles or []}
    if normal & TEACHING_ROLES or INSTITUTION_ADMIN in normal:
        return INSTRUCTOR
    if any(role.startswith(TEACHING_SUB_ROLES) for role in normal):
        return INSTRUCTOR  # e.g. a teaching assistant
    return LEARNER


def _username(claims: dict, issuer: str, sub: str) -> str:
    """Readable and unique: a slug of the name and a digest of (issuer, sub)."""
    base = (
        claims.get("name")
        or " ".join(filter(None, [claims.get("given_name"), claims.get("family_name")]))
        or str(claims.get("email") or "").split("@")[0]
        or "learner"
    )
    slug = slugify(str(base))[:40].strip("-") or "learner"
    digest = hashlib.sha256(f"{issuer}\n{sub}".encode()).hexdigest()
    User = get_user_model()
    for length in (6, 10, 16, 64):
        candidate = f"{slug}-{digest[:length]}"
        if not User.objects.filter(username__iexact=candidate).exists():
            return candidate
    raise IntegrityError("no free username")


def account_for(*, issuer: str, sub: str, claims: dict, role: str):
    """The local user for (issuer, sub): found, or made with an unusable password."""
    User = get_user_model()
    link = LmsAccount.objects.select_related("user").filter(issuer=issuer, sub=sub)
    found = link.first()
    if found is not None:
        user = found.user
    else:
        try:
            with transaction.atomic():
                user = User(
                    username=_username(claims, issuer, sub),
                    first_name=str(claims.get("given_name") or "")[:150],
                    last_name=str(claims.get("family_name") or "")[:150],
                    email=str(claims.get("email") or "")[:254],
                )
                user.set_unusable_password()
                user.save()
                LmsAccount.objects.create(issuer=issuer, sub=sub, user=user)
        except IntegrityError:  # a concurrent first launch made it
            user = link.get().user
    role_raise(user, role)
    return user


def role_raise(user, role: str) -> None:
    """Give `role` unless the user already has it or a higher one."""
    rank = {None: 0, LEARNER: 1, INSTRUCTOR: 2, ADMIN: 3}
    if rank[role] > rank[user_role(user)]:
        assign_role(user, role)
