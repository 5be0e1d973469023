"""Quiz item analysis: every figure checked against arithmetic done by hand."""

from __future__ import annotations

import json
from math import sqrt

import pytest

from quiz.teaching.quizzes.statistics import (
    CSV_HEADER,
    Flag,
    QuizStatistics,
    Response,
    WrongAnswer,
    item_analysis,
)


def approx(value):
    return pytest.approx(value, rel=1e-9)


def resp(attempt, slot, question, fraction, max_points=1.0, **extra):
    return Response(attempt, slot, question, fraction, max_points, **extra)


# The data set: 6 attempts x 3 slots.
#
#   slot 1: "q:12", a choice question worth 1 point. How many rows has
#           GPT-2 small's token embedding? "50257" is right; "768" nobody
#           chooses; attempt 4 leaves it unanswered.
#   slot 2: "t:params-untied", a numeric question worth 2 points. The right
#           answer is "163,037,184"; two learners answer "124,439,808"
#           (they assumed the output head is tied).
#   slot 3: worth 1 point, draws "x:easy" (everyone right) for attempts 1, 2
#           and 6 and "x:hard" (everyone wrong) for 3, 4 and 5.
#
#   attempt  slot 1        slot 2              slot 3       total
#   1        0 ("50256")   2 (163,037,184)     1 (easy)     3
#   2        0 ("1024")    2 (163,037,184)     1 (easy)     3
#   3        0 ("50256")   0 (124,439,808)     0 (hard)     0
#   4        0 (none)      2 (163,037,184)     0 (hard)     2
#   5        1 ("50257")   0 (124,439,808)     0 (hard)     1
#   6        1 ("50257")   2 (163,037,184)     1 (easy)     4
#
# Notation: for series x and y over n attempts,
#   Sxy = sum(x*y) - n * mean(x) * mean(y) (n - 1 times the covariance),
#   sample variance = Sxx / (n - 1), r = Sxy / sqrt(Sxx * Syy),
#   efficiency = Sxy / Sxy', where Sxy' pairs sorted x with sorted y.

RIGHT, TIED = "163,037,184", "124,439,808"
Q12_OPTIONS = ["50257", "50256", "1024", "768"]
ROWS = [
    # attempt, slot 1 (fraction, choice), slot 2 (fraction, answer), slot 3
    (1, 0.0, "50256", 1.0, RIGHT, "x:easy", 1.0),
    (2, 0.0, "1024", 1.0, RIGHT, "x:easy", 1.0),
    (3, 0.0, "50256", 0.0, TIED, "x:hard", 0.0),
    (4, 0.0, None, 1.0, RIGHT, "x:hard", 0.0),
    (5, 1.0, "50257", 0.0, TIED, "x:hard", 0.0),
    (6, 1.0, "50257", 1.0, RIGHT, "x:easy", 1.0),
]


def data_set():
    responses = []
    for attempt, f1, choice, f2, answer, q3, f3 in ROWS:
        responses += [
            resp(attempt, 1, "q:12", f1, choice=choice),
            resp(
                attempt,
                2,
                "t:params-untied",
                f2,
                2.0,
                answer=answer,
                misconception="tied-head" if answer == TIED else None,
            ),
            resp(attempt, 3, q3, f3),
        ]
    return responses


@pytest.fixture
def report():
    return item_analysis(
        data_set(),
        options={"q:12": Q12_OPTIONS},
        correct_options={"q:12": "50257"},
    )


def question(report, key):
    return next(q for s in report.slots for q in s.questions if q.question == key)


def test_quiz_figures(report):
    # totals 3, 3, 0, 2, 1, 4: sum 13, sum of squares 9+9+0+4+1+16 = 39,
    # Stt = 39 - 13*13/6 = 65/6, variance 65/6 / 5 = 13/6.
    assert report.attempts == 6
    assert report.mean == approx(13 / 6)
    assert report.sd == approx(sqrt(13 / 6))
    # item variances (points): slot 1 (4/3)/5 = 4/15, slot 2 (16/3)/5 = 16/15,
    # slot 3 (3/2)/5 = 3/10 (worked out below); sum 8/30+32/30+9/30 = 49/30.
    # alpha = 3/2 * (1 - (49/30) / (65/30)) = 3/2 * 16/65 = 24/65.
    assert report.alpha == approx(24 / 65)
    # 27% of 6 = 1.62, rounded: 2 attempts in each group.
    assert report.group_size == 2
    assert [s.slot for s in report.slots] == [1, 2, 3]


def test_slot_1_a_choice_question_that_discriminates_negatively(report):
    slot = report.slots[0]
    # x = 0, 0, 0, 0, 1, 1: mean 1/3, Sxx = 2 - 6/9 = 4/3, variance 4/15.
    # rest = slot 2 + slot 3 = 3, 3, 0, 2, 0, 3: sum 11, mean 11/6,
    #   Syy = (9+9+0+4+0+9) - 121/6 = 31 - 121/6 = 65/6.
    # sum(x*rest) = 0 + 3 = 3, Sxy = 3 - 6 * 1/3 * 11/6 = -2/3.
    # r = (-2/3) / sqrt(4/3 * 65/6) = (-2/3) / (sqrt(130)/3) = -2/sqrt(130).
    # sorted rest 0, 0, 2, 3, 3, 3 against 0, 0, 0, 0, 1, 1: sum 6,
    #   Sxy' = 6 - 11/3 = 7/3, efficiency = (-2/3) / (7/3) = -2/7.
    assert slot.n == 6
    assert slot.facility == approx(1 / 3)
    assert slot.sd == approx(sqrt(4 / 15))
    assert slot.discrimination == approx(-2 / sqrt(130))
    assert slot.efficiency == approx(-2 / 7)
    # one question in the slot: the same figures
    (q12,) = slot.questions
    assert (q12.question, q12.n) == ("q:12", 6)
    assert q12.facility == approx(1 / 3)
    assert q12.sd == approx(sqrt(4 / 15))
    assert q12.discrimination == approx(-2 / sqrt(130))
    assert q12.efficiency == approx(-2 / 7)


def test_slot_2_a_numeric_question_worth_2_points(report):
    slot = report.slots[1]
    # x = 2, 2, 0, 2, 0, 2 points: mean 4/3, facility (4/3)/2 = 2/3;
    #   Sxx = 16 - 6 * 16/9 = 16/3, variance 16/15, SD 4/sqrt(15) points,
    #   over the 2 points: 2/sqrt(15) = sqrt(4/15).
    # rest = slot 1 + slot 3 = 1, 1, 0, 0, 1, 2: mean 5/6,
    #   Syy = (1+1+0+0+1+4) - 25/6 = 17/6.
    # sum(x*rest) = 2*(1+1+0+2) = 8, Sxy = 8 - 6 * 4/3 * 5/6 = 4/3.
    # r = (4/3) / sqrt(16/3 * 17/6) = (4/3) / (sqrt(136)/3) = 2/sqrt(34).
    # sorted rest 0, 0, 1, 1, 1, 2 against 0, 0, 2, 2, 2, 2: sum 10,
    #   Sxy' = 10 - 20/3 = 10/3, efficiency = (4/3) / (10/3) = 2/5.
    assert slot.n == 6
    assert slot.facility == approx(2 / 3)
    assert slot.sd == approx(sqrt(4 / 15))
    assert slot.discrimination == approx(2 / sqrt(34))
    assert slot.efficiency == approx(2 / 5)
    (params,) = slot.questions
    assert params.discrimination == approx(2 / sqrt(34))
    assert params.options == []  # not a choice question
    assert params.flags == []


def test_slot_3_and_the_two_questions_it_draws(report):
    slot = report.slots[2]
    # x = 1, 1, 0, 0, 0, 1: mean 1/2, Sxx = 3 - 6/4 = 3/2, variance 3/10.
    # rest = slot 1 + slot 2 = 2, 2, 0, 2, 1, 3: sum 10, mean 5/3,
    #   Syy = (4+4+0+4+1+9) - 100/6 = 22 - 50/3 = 16/3.
    # sum(x*rest) = 2+2+3 = 7, Sxy = 7 - 6 * 1/2 * 5/3 = 2.
    # r = 2 / sqrt(3/2 * 16/3) = 2 / sqrt(8) = 1/sqrt(2).
    # sorted rest 0, 1, 2, 2, 2, 3: its top three sum 7, Sxy' = 2: efficiency 1.
    assert slot.n == 6
    assert slot.facility == approx(1 / 2)
    assert slot.sd == approx(sqrt(3 / 10))
    assert slot.discrimination == approx(1 / sqrt(2))
    assert slot.efficiency == approx(1)
    # Each question alone: all right (easy) or all wrong (hard), so no
    # variance: SD 0, no correlation.
    easy, hard = slot.questions
    assert (easy.question, easy.n, easy.facility, easy.sd) == ("x:easy", 3, 1, 0)
    assert (hard.question, hard.n, hard.facility, hard.sd) == ("x:hard", 3, 0, 0)
    for q in (easy, hard):
        assert q.discrimination is None
        assert q.efficiency is None


def test_options_of_the_choice_question(report):
    q12 = question(report, "q:12")
    # Ranked by total, ties by attempt id: 6 (4), 1 (3), 2 (3), 4 (2), 5 (1),
    # 3 (0). Top 2: attempts 6 and 1 (1 beats 2 on the tie at 3);
    # bottom 2: attempts 5 and 3.
    #   top:    6 chose "50257", 1 chose "50256"
    #   bottom: 5 chose "50257", 3 chose "50256"
    # Shares are of the 6 responses, the unanswered one (attempt 4) included.
    got = [
        (o.option, o.correct, o.count, o.share, o.top_share, o.bottom_share)
        for o in q12.options
    ]
    assert got == [
        ("50257", True, 2, approx(2 / 6), 1 / 2, 1 / 2),
        ("50256", False, 2, approx(2 / 6), 1 / 2, 1 / 2),
        ("1024", False, 1, approx(1 / 6), 0, 0),
        ("768", False, 0, 0, 0, 0),
    ]
    assert all(o.listed for o in q12.options)
    assert q12.unused_options == ["768"]


def test_common_wrong_answers(report):
    # "124,439,808" from attempts 3 and 5: 2 of 6 responses.
    assert question(report, "t:params-untied").wrong_answers == [
        WrongAnswer(TIED, 2, approx(1 / 3), "tied-head")
    ]
    assert question(report, "q:12").wrong_answers == []  # no answer texts


def test_flags(report):
    assert question(report, "q:12").flags == [
        Flag(
            "negative-discrimination",
            # -2/sqrt(130) = -0.1754...
            "Discrimination -0.18: learners who did better on the rest of the "
            "quiz did worse on this one; check the key.",
        ),
        Flag(
            "unused-distractor",
            'Nobody chose "768" (0 of 6 responses); a distractor no one picks '
            "only adds reading: make it plausible or drop it.",
        ),
    ]
    assert question(report, "x:easy").flags == [
        Flag(
            "too-easy",
            "Facility 1.00: learners scored 100% on it on average; "
            "it does not separate learners.",
        )
    ]
    assert question(report, "x:hard").flags == [
        Flag(
            "too-hard",
            "Facility 0.00: learners scored 0% on it on average; "
            "check the key and the wording, or teach it again.",
        )
    ]
    assert question(report, "t:params-untied").flags == []


def test_to_dict_is_json_with_rounded_figures(report):
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    # 13/6 = 2.16666..., sqrt(13/6) = 1.47196..., 24/65 = 0.36923...
    assert (data["attempts"], data["mean"], data["sd"], data["alpha"]) == (
        6,
        2.1667,
        1.472,
        0.3692,
    )
    q12 = data["slots"][0]["questions"][0]
    # 1/3, sqrt(4/15) = 0.516398..., -2/sqrt(130) = -0.175411..., -2/7
    assert (q12["facility"], q12["sd"], q12["discrimination"]) == (
        0.3333,
        0.5164,
        -0.1754,
    )
    assert q12["efficiency"] == -0.2857
    assert q12["unused_options"] == ["768"]
    assert q12["options"][2] == {
        "option": "1024",
        "correct": False,
        "count": 1,
        "share": 0.1667,
        "top_share": 0.0,
        "bottom_share": 0.0,
        "listed": True,
    }
    assert [f["code"] for f in q12["flags"]] == [
        "negative-discrimination",
        "unused-distractor",
    ]
    hard = data["slots"][2]["questions"][1]
    assert (hard["question"], hard["discrimination"]) == ("x:hard", None)


def test_csv_rows(report):
    rows = list(report.csv_rows())
    assert rows[0] == CSV_HEADER
    assert [row[:2] for row in rows[1:]] == [
        [1, "q:12"],
        [2, "t:params-untied"],
        [3, "x:easy"],
        [3, "x:hard"],
    ]
    assert rows[1][2:] == [
        6,
        0.3333,
        0.5164,
        -0.1754,
        -0.2857,
        "768",
        "",
        "negative-discrimination; unused-distractor",
    ]
    assert rows[2][-3:] == ["", f"{TIED} (2)", ""]
    assert rows[4][-1] == "too-hard"


@pytest.mark.parametrize(
    ("n", "wrong_once_listed"),
    [(10, True), (11, False)],  # 1 of 10 is 10%; 1 of 11 is 9.1%
)
def test_wrong_answers_count_at_least_2_or_10_percent(n, wrong_once_listed):
    answers = ["41", "41", "4.2", "4.2", "40"]
    answers += ["42"] * (n - len(answers))
    responses = [
        resp(
            i,
            1,
            "t:answer",
            {"42": 1.0, "4.2": 0.5}.get(answer, 0.0),
            answer=answer,
            misconception="off by one" if (answer, i) == ("41", 0) else None,
        )
        for i, answer in enumerate(answers)
    ]
    got = item_analysis(responses).slots[0].questions[0].wrong_answers
    # 2 each for "4.2" (half marks: not right) and "41", then "40" once;
    # equal counts in text order. "41"'s label is the one given.
    expected = [
        WrongAnswer("4.2", 2, approx(2 / n), None),
        WrongAnswer("41", 2, approx(2 / n), "off by one"),
    ]
    if wrong_once_listed:
        expected.append(WrongAnswer("40", 1, approx(1 / n), None))
    assert got == expected


@pytest.mark.parametrize(
    ("attempts", "group_size"),
    # max(1, round half up(0.27 * N)): 0.27, 1.35, 1.62, 2.7, 13.5, 27, 40.5
    # (Python's round would make 40.5 into 40)
    [(1, 1), (5, 1), (6, 2), (10, 3), (50, 14), (100, 27), (150, 41)],
)
def test_group_size(attempts, group_size):
    responses = [resp(a, 1, "q:1", a % 2) for a in range(attempts)]
    assert item_analysis(responses).group_size == group_size


# Edge cases: never an exception, never NaN; None where a figure is undefined.


def test_no_responses():
    report = item_analysis([])
    assert report == QuizStatistics(
        attempts=0, mean=None, sd=None, alpha=None, slots=[], group_size=0
    )
    assert json.dumps(report.to_dict(), allow_nan=False)
    assert list(report.csv_rows()) == [CSV_HEADER]


def test_a_single_attempt():
    report = item_analysis(
        [
            resp(7, 1, "q:1", 1.0, choice="a", answer=None),
            resp(7, 2, "t:1", 0.5, 2.0, answer="3"),
        ],
        options={"q:1": ["a", "b"]},
    )
    assert (report.attempts, report.mean, report.sd, report.alpha) == (
        1,
        1.0 + 0.5 * 2.0,
        None,
        None,
    )
    assert report.group_size == 1
    q1, t1 = (s.questions[0] for s in report.slots)
    assert (q1.n, q1.facility, q1.sd, q1.discrimination, q1.efficiency) == (
        1,
        1.0,
        None,
        None,
        None,
    )
    assert t1.facility == 0.5
    # The one attempt is the top and the bottom group; which option is right
    # was not said, so "b" (unchosen) counts as a distractor.
    a, b = q1.options
    assert (a.correct, a.count, a.share, a.top_share, a.bottom_share) == (
        None,
        1,
        1.0,
        1.0,
        1.0,
    )
    assert [f.code for f in q1.flags] == ["too-easy", "unused-distractor"]
    # A partial answer given once is 100% of one response.
    assert t1.wrong_answers == [WrongAnswer("3", 1, 1.0, None)]
    assert json.dumps(report.to_dict(), allow_nan=False)


def test_zero_variance():
    # Every attempt scores 0.1 * 3 on slot 1 and 1 on slot 2; slot 3 varies,
    # but its rest (slots 1 and 2) does not.
    responses = []
    for attempt, f3 in [(1, 0.0), (2, 1.0), (3, 1.0)]:
        responses += [
            resp(attempt, 1, "q:1", 0.1, 3.0),
            resp(attempt, 2, "q:2", 1.0),
            resp(attempt, 3, "q:3", f3),
        ]
    report = item_analysis(responses)
    s1, s2, s3 = report.slots
    assert s1.facility == approx(0.1)
    assert (s1.sd, s2.sd) == (0.0, 0.0)
    for slot in (s1, s2, s3):
        assert slot.discrimination is None
        assert slot.efficiency is None
    assert s3.sd == approx(sqrt(1 / 3))  # 0, 1, 1: Sxx = 2 - 4/3 = 2/3, /2
    # alpha: totals vary (1.3, 2.3, 2.3): 3/2 * (1 - (0 + 0 + 1/3) / (1/3)) = 0
    assert report.alpha == pytest.approx(0, abs=1e-12)

    flat = item_analysis([resp(a, s, "q", 0.5) for a in (1, 2) for s in (1, 2)])
    assert (flat.sd, flat.alpha) == (0.0, None)  # the totals do not vary


def test_a_slot_worth_no_points_and_an_unlisted_choice():
    report = item_analysis(
        [
            resp(1, 1, "q:1", 0.0, 0.0, choice="c"),
            resp(2, 1, "q:1", 0.0, 0.0, choice="a"),
        ],
        options={"q:1": ["a", "b"]},
        correct_options={"q:1": ["a", "b"]},
    )
    (q1,) = report.slots[0].questions
    assert (q1.facility, q1.sd, q1.discrimination) == (None, None, None)
    # "c" is not in the list: kept, marked unlisted; "b" is right, so its
    # being unchosen is no unused distractor.
    assert [(o.option, o.correct, o.count, o.listed) for o in q1.options] == [
        ("a", True, 1, True),
        ("b", True, 0, True),
        ("c", False, 1, False),
    ]
    assert q1.flags == []
    assert q1.unused_options == ["b"]


def test_two_responses_for_one_slot_of_an_attempt_are_refused():
    with pytest.raises(ValueError, match="attempt 1, slot 2"):
        item_analysis([resp(1, 2, "q:1", 1.0), resp(1, 2, "q:2", 0.0)])
