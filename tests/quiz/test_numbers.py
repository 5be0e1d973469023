"""One number format for learners: thousands separators, no trailing zeros."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.template import Context, Template

from quiz.core.numbers import format_number


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (154.4, "154.4"),
        (0.1, "0.1"),
        (38597376, "38,597,376"),
        (38597376.0, "38,597,376"),
        (-1234567.25, "-1,234,567.25"),
        (7087872, "7,087,872"),
        (0, "0"),
        (1e-05, "1e-05"),
        (Decimal("2.500"), "2.5"),
        ("154.400000", "154.4"),
        ("50048", "50,048"),
        ("-0.250", "-0.25"),
        ("12.000", "12"),
        ("38597376", "38,597,376"),  # a float check's expected/got
        ("1,234.500", "1,234.5"),
        ("50,048", "50,048"),
        ("1,23", "1,23"),  # not a grouped number: left alone
        ("(50257, 768)", "(50257, 768)"),  # a shape is not a number
        ("a copy", "a copy"),
        (True, "True"),
        (None, ""),
        (float("inf"), "inf"),
    ],
)
def test_format_number(value, shown):
    assert format_number(value) == shown


def test_the_template_filter_uses_it():
    html = Template("{% load course %}{{ a|number }} ± {{ b|number }}").render(
        Context({"a": 154.4, "b": 0.1})
    )
    assert html == "154.4 ± 0.1"
