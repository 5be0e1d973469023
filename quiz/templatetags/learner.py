from django import template

from quiz.learning.review import cards_due_count

register = template.Library()


@register.simple_tag
def review_due_count(user) -> int:
    """Due review cards for the nav badge (one indexed COUNT per page)."""
    if not user.is_authenticated:
        return 0
    return cards_due_count(user=user)
