"""How a score is written (quiz.templatetags.scores, the `percent` and
`points_of` filters): percent to one decimal place at most, half away from
zero on the number as written; points to two places. Pages, the gradebook's
CSV and its sort all read the same function."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from quiz.templatetags.scores import percent_text, percent_value, points_text
from teaching.assignments.gradebook import percent


@pytest.mark.parametrize(
    ("score", "shown", "value"),
    [
        (0.625, "62.5%", 62.5),
        (0.5, "50%", 50.0),  # no ".0"
        (1, "100%", 100.0),
        (0.0, "0%", 0.0),
        (1 / 3, "33.3%", 33.3),
        (2 / 3, "66.7%", 66.7),
        # A half rounds away from zero, read as written: round(100 * 0.1235, 1)
        # gives 12.3 (binary noise, then half to even), the old CSV figure.
        (0.1235, "12.4%", 12.4),
        (0.12345, "12.3%", 12.3),
        (0.0005, "0.1%", 0.1),
        (0.00049, "0%", 0.0),
        (0.99949, "99.9%", 99.9),
        (0.99951, "100%", 100.0),
        (-0.0005, "-0.1%", -0.1),  # away from zero both ways
        (-0.0, "0%", 0.0),  # never "-0"
        (None, "", None),
        (float("nan"), "", None),
    ],
)
def test_a_score_is_a_percent_to_one_decimal_half_away_from_zero(score, shown, value):
    assert percent_text(score) == shown
    assert percent_value(score) == value
    if value is not None:
        assert percent(score) == value  # the CSVs' and the sort's number
    rendered = Template("{% load course %}{{ s|percent }}").render(
        Context({"s": score})
    )
    assert rendered == shown


@pytest.mark.parametrize(
    ("points", "possible", "shown"),
    [
        (2.5, 4, "2.5 of 4 points"),
        (1, 1, "1 of 1 point"),
        (0.0, 3.0, "0 of 3 points"),
        (0.125, 1, "0.13 of 1 point"),  # round(0.125, 2) would give 0.12
        (1.005, 2, "1.01 of 2 points"),  # round(1.005, 2) would give 1.0
        (1.875, 4.0, "1.88 of 4 points"),
        (None, 4, ""),
    ],
)
def test_points_are_written_to_two_decimals_with_their_unit(points, possible, shown):
    assert points_text(points, possible) == shown
    rendered = Template("{% load course %}{{ p|points_of:q }}").render(
        Context({"p": points, "q": possible})
    )
    assert rendered == shown
