"""The three roles as Django groups, kept in step with the app's permissions."""

from django.contrib.auth.models import Group, Permission

LEARNER = "learner"
INSTRUCTOR = "instructor"
ADMIN = "admin"
ROLES = (LEARNER, INSTRUCTOR, ADMIN)

_CONTENT_APPS = ("quiz", "grader", "teaching")


def ensure_roles(**kwargs) -> None:
    """Create the role groups and grant their permissions (idempotent).

    Admins may change all course content; instructors may view it (their
    cohort tools come with their own permissions); learners need none.
    """
    content_perms = Permission.objects.filter(content_type__app_label__in=_CONTENT_APPS)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    admin.permissions.set(content_perms)
    instructor, _ = Group.objects.get_or_create(name=INSTRUCTOR)
    instructor.permissions.set(content_perms.filter(codename__startswith="view_"))
    Group.objects.get_or_create(name=LEARNER)


def user_role(user) -> str | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return ADMIN
    names = set(user.groups.values_list("name", flat=True))
    for role in (ADMIN, INSTRUCTOR, LEARNER):
        if role in names:
            return role
    return None


def assign_role(user, role: str) -> None:
    """Put `user` in exactly one role; admins also get the admin site."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    ensure_roles()
    user.groups.set([Group.objects.get(name=role)])
    user.is_staff = role == ADMIN
    user.save(update_fields=["is_staff"])
