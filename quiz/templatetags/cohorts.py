"""`{% load cohorts %}{% if user|can_teach %}`: show the instructor link."""

from django import template

from quiz.teaching.selectors import user_can_teach

register = template.Library()


@register.filter(name="can_teach")
def can_teach(user) -> bool:
    return user_can_teach(user)
