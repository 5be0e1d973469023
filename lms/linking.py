"""Deep Linking 2.0: the content items an instructor picked, signed for the LMS."""

from __future__ import annotations

from django.urls import reverse
from pylti1p3.deep_link_resource import DeepLinkResource

from lms.grades import line_item_spec
from lms.targets import ASSIGNMENT, QUIZ, target_get
from lms.tool import tool_key

MAX_ITEMS = 100


def deep_link_resources(
    request, chosen: list[str], *, cohort_id: int | None, multiple: bool
) -> list[DeepLinkResource]:
    """Resource links for `chosen` ("kind:key" each); ValueError says what is wrong."""
    chosen = list(dict.fromkeys(str(c) for c in chosen))
    if not chosen:
        raise ValueError("Pick at least one lesson, exercise, assignment or quiz.")
    if not multiple and len(chosen) > 1:
        raise ValueError("Your course accepts one link at a time here: pick one.")
    if len(chosen) > MAX_ITEMS:
        raise ValueError(f"Pick at most {MAX_ITEMS} at once.")
    launch_url = request.build_absolute_uri(reverse("lti-launch"))
    resources = []
    for resource in chosen:
        target = target_get(resource, cohort_id=cohort_id)
        if target is None:
            raise ValueError(f"{resource!r} is not something this course can link.")
        link = (
            DeepLinkResource()
            .set_title(target.title)
            .set_url(launch_url)
            .set_custom_params({"resource": target.resource})
        )
        if target.kind == ASSIGNMENT:
            # The LMS makes its gradebook column with the link; scores find it
            # again by resourceId (lms.grades).
            link.set_lineitem(
                line_item_spec(assignment_id=target.key, title=target.title)
            )
        elif target.kind == QUIZ:  # the same, by resourceId quiz-ID
            link.set_lineitem(line_item_spec(quiz_id=target.key, title=target.title))
        resources.append(link)
    return resources


def deep_link_response_jwt(message_launch, resources: list[DeepLinkResource]) -> str:
    tool_key()
    return message_launch.get_deep_link().get_response_jwt(resources)
