"""Quiz item analysis: every figure checked against arithmetic done by hand."""

from __future__ import annotations

import json
from math import inf, nan, sqrt

import pytest

from teaching.quizzes.chart import HEIGHT, RADIUS, WIDTH, facility_chart
from teaching.quizzes.item_analysis.calculation import (
    CSV_HEADER,
    MIN_RESPONSES_TO_FLAG,
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
    assert report.mean_points == approx(13 / 6)
    assert report.sd_points == approx(sqrt(13 / 6))
    # One scale with an attempt's score: out of 1 + 2 + 1 = 4 points, the
    # scores are 3/4, 3/4, 0, 2/4, 1/4, 4/4, whose mean is 13/24.
    assert report.possible == 4
    assert report.mean == approx(13 / 24)
    assert report.mean == approx(sum([3, 3, 0, 2, 1, 4]) / 4 / 6)
    assert report.sd == approx(sqrt(13 / 6) / 4)
    assert report.not_recorded == 0
    # item variances (points): slot 1 (4/3)/5 = 4/15, slot 2 (16/3)/5 = 16/15,
    # slot 3 (3/2)/5 = 3/10 (worked out below); sum 8/30+32/30+9/30 = 49/30.
    # alpha = 3/2 * (1 - (49/30) / (65/30)) = 3/2 * 16/65 = 24/65.
    assert report.alpha == approx(24 / 65)
    # 27% of 6 = 1.62, rounded: 2 attempts in each group.
    assert report.group_size == 2
    assert [s.slot for s in report.slots] == [1, 2, 3]
    # Items are numbered 1.. in slot order, one number per question.
    assert [(q.item, q.question) for s in report.slots for q in s.questions] == [
        (1, "q:12"),
        (2, "t:params-untied"),
        (3, "x:easy"),
        (4, "x:hard"),
    ]


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
    assert question(report, "t:params-untied").flags == []
    for key in ("q:12", "t:params-untied"):  # 6 responses: flagged as found
        assert not question(report, key).flags_withheld
        assert question(report, key).note is None
    # x:easy (all right) and x:hard (all wrong) have 3 responses each: too
    # few to call them too easy or too hard; the note says so instead.
    for key in ("x:easy", "x:hard"):
        q = question(report, key)
        assert (q.n, q.flags, q.flags_withheld) == (3, [], True)
        assert q.note == "too few responses (n < 5) to flag"


@pytest.mark.parametrize(("n", "flagged"), [(4, False), (5, True)])
def test_flags_need_5_responses(n, flagged):
    # Everyone right on q:1 (too easy), and a listed option nobody chose;
    # q:2 varies so that the attempts differ.
    responses = []
    for a in range(n):
        responses += [
            resp(a, 1, "q:1", 1.0, choice="a"),
            resp(a, 2, "q:2", a % 2),
        ]
    report = item_analysis(
        responses, options={"q:1": ["a", "b"]}, correct_options={"q:1": "a"}
    )
    assert MIN_RESPONSES_TO_FLAG == report.min_responses_to_flag == 5
    q1 = report.slots[0].questions[0]
    assert q1.facility == 1.0
    if flagged:
        assert [f.code for f in q1.flags] == ["too-easy", "unused-distractor"]
        assert (q1.flags_withheld, q1.note) == (False, None)
    else:
        assert (q1.flags, q1.flags_withheld) == ([], True)
        assert q1.note == "too few responses (n < 5) to flag"
    data = report.to_dict()
    assert data["min_responses_to_flag"] == 5
    assert data["slots"][0]["questions"][0]["flags_withheld"] is not flagged


def test_to_dict_is_json_with_rounded_figures(report):
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    # 13/24 = 0.541666..., sqrt(13/6)/4 = 0.36799..., 24/65 = 0.36923...
    assert (data["attempts"], data["mean"], data["sd"], data["alpha"]) == (
        6,
        0.5417,
        0.368,
        0.3692,
    )
    # 13/6 = 2.16666..., sqrt(13/6) = 1.47196... points, of 4
    assert (data["mean_points"], data["sd_points"], data["possible"]) == (
        2.1667,
        1.472,
        4.0,
    )
    assert (data["not_recorded"], data["min_responses_to_flag"]) == (0, 5)
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
    assert (q12["item"], q12["not_recorded"], q12["note"]) == (1, 0, None)
    hard = data["slots"][2]["questions"][1]
    assert (hard["question"], hard["discrimination"]) == ("x:hard", None)
    assert (hard["item"], hard["flags_withheld"]) == (4, True)
    assert hard["note"] == "too few responses (n < 5) to flag"


def test_csv_rows(report):
    rows = list(report.csv_rows())
    assert rows[0] == CSV_HEADER
    assert rows[0][:4] == ["item", "slot", "question", "title"]
    # Without names: slot numbers and question keys.
    assert [row[:4] for row in rows[1:]] == [
        [1, 1, "q:12", "q:12"],
        [2, 2, "t:params-untied", "t:params-untied"],
        [3, 3, "x:easy", "x:easy"],
        [4, 3, "x:hard", "x:hard"],
    ]
    assert rows[1][4:] == [
        6,
        0,
        0.3333,
        0.5164,
        -0.1754,
        -0.2857,
        "768",
        "",
        "negative-discrimination; unused-distractor",
        "",
    ]
    assert rows[2][-4:] == ["", f"{TIED} (2)", "", ""]
    assert rows[4][-2:] == ["", "too few responses (n < 5) to flag"]
    # The page's names: slot labels and question titles, numbered the same.
    named = list(
        report.csv_rows(
            labels={3: "3"}, titles={"x:easy": "Easy one", "x:hard": "Hard one"}
        )
    )
    assert [row[:4] for row in named[3:]] == [
        [3, "3", "x:easy", "Easy one"],
        [4, "3", "x:hard", "Hard one"],
    ]


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
        attempts=0,
        mean=None,
        sd=None,
        alpha=None,
        slots=[],
        group_size=0,
        mean_points=None,
        sd_points=None,
        possible=0.0,
        not_recorded=0,
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
    assert (report.attempts, report.mean_points, report.sd, report.alpha) == (
        1,
        1.0 + 0.5 * 2.0,
        None,
        None,
    )
    assert (report.possible, report.mean) == (3.0, approx(2 / 3))
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
    # The one attempt is the top and the bottom group.
    a, b = q1.options
    assert (a.correct, a.count, a.share, a.top_share, a.bottom_share) == (
        None,
        1,
        1.0,
        1.0,
        1.0,
    )
    # One response calls nothing too easy, nor "b" a distractor nobody chose.
    assert (q1.flags, q1.note) == ([], "too few responses (n < 5) to flag")
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


# A result that is not a finite number (NaN from a dropped or broken item,
# infinity, None) is not recorded: left out of every figure and counted.
#
#   attempt  slot 1 (q:1)  slot 2 (q:2)  total
#   1        1             1             2
#   2        1             (bad)         1
#   3        0             0             0
#   4        0             1             1
#   5        1             0             1


@pytest.mark.parametrize("bad", [nan, inf, -inf, None])
def test_a_result_that_is_not_a_number_is_left_out_and_counted(bad):
    rows = [(1, 1, 1), (2, 1, bad), (3, 0, 0), (4, 0, 1), (5, 1, 0)]
    responses = []
    for attempt, f1, f2 in rows:
        responses += [resp(attempt, 1, "q:1", f1), resp(attempt, 2, "q:2", f2)]
    report = item_analysis(responses)
    s1, s2 = report.slots
    # Slot 1: x = 1, 1, 0, 0, 1; rests (slot 2, attempt 2's left out: 0)
    # 1, 0, 0, 1, 0. Sxx = 3 - 9/5 = 6/5, Syy = 2 - 4/5 = 6/5,
    # Sxy = 1 - 5 * 3/5 * 2/5 = -1/5: r = -1/6.
    assert (s1.n, s1.not_recorded) == (5, 0)
    assert s1.facility == approx(3 / 5)
    assert s1.discrimination == approx(-1 / 6)
    # Slot 2 over attempts 1, 3, 4, 5: x = 1, 0, 1, 0 against rests 1, 0,
    # 0, 1: Sxy = 1 - 4 * 1/2 * 1/2 = 0, Sxx = Syy = 1: r = 0.
    (q2,) = s2.questions
    assert (s2.n, s2.not_recorded, q2.n, q2.not_recorded) == (4, 1, 4, 1)
    assert (s2.facility, q2.facility) == (0.5, 0.5)
    assert s2.discrimination == approx(0)
    assert s2.sd == approx(sqrt(1 / 3))  # Sxx 1 over 3
    # Totals 2, 1, 0, 1, 1 points: mean 1. Attempt 2 is out of 1 point (its
    # slot 2 left out, as a dropped question), the others of 2: possible
    # 9/5 on average; scores 2/2, 1/1, 0/2, 1/2, 1/2, mean 3/5 (as the
    # results' would be), SD: Sxx = 2.5 - 5 * 9/25 = 0.7, over 4.
    assert (report.attempts, report.not_recorded) == (5, 1)
    assert (report.mean_points, report.possible) == (1, approx(9 / 5))
    assert report.mean == approx(3 / 5)
    assert report.sd == approx(sqrt(0.7 / 4))
    assert json.dumps(report.to_dict(), allow_nan=False)
    assert list(report.csv_rows())[2][5] == 1  # not_recorded, in the CSV too


def test_an_item_with_no_recorded_response_is_shown_not_dropped():
    # q:2 was dropped (None for everyone), q:3 was named but nobody drew it:
    # both stay in the report, numbered, with "no responses".
    responses = []
    for attempt, f1 in [(1, 1.0), (2, 0.0), (3, 1.0)]:
        responses += [resp(attempt, 1, "q:1", f1), resp(attempt, 2, "q:2", None)]
    report = item_analysis(responses, expected=[(2, "q:2"), (3, "q:3")])
    assert [(s.slot, s.n, s.not_recorded) for s in report.slots] == [
        (1, 3, 0),
        (2, 0, 3),
        (3, 0, 0),
    ]
    dropped, unseen = report.slots[1].questions[0], report.slots[2].questions[0]
    for q, item, missing in ((dropped, 2, 3), (unseen, 3, 0)):
        assert (q.item, q.n, q.not_recorded) == (item, 0, missing)
        assert (q.facility, q.sd, q.discrimination, q.flags) == (None, None, None, [])
        assert q.note == "no responses"
    # Nothing recorded on slots 2 and 3: only slot 1's point is possible.
    assert (report.possible, report.mean) == (1.0, approx(2 / 3))
    rows = list(report.csv_rows())
    assert [row[0] for row in rows[1:]] == [1, 2, 3]
    assert rows[3][-1] == "no responses"
    assert json.dumps(report.to_dict(), allow_nan=False)


def test_options_of_a_question_nobody_answered():
    report = item_analysis(
        [resp(1, 1, "q:1", nan, choice="a")], options={"q:1": ["a", "b"]}
    )
    (q1,) = report.slots[0].questions
    assert [(o.option, o.count, o.share) for o in q1.options] == [
        ("a", 0, None),
        ("b", 0, None),
    ]


# The chart: labels are item numbers, placed where they overlap nothing.


def chart_stats(points):
    """A statistics dict (as analysis_dict gives) with one slot per point."""
    return {
        "slots": [
            {
                "label": str(n),
                "questions": [
                    {
                        "item": n,
                        "title": f"Question {n}",
                        "n": 0 if f is None else 6,
                        "facility": f,
                        "discrimination": d,
                        "flags": [],
                    }
                ],
            }
            for n, (f, d) in enumerate(points, start=1)
        ]
    }


def overlap(a, b):
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


@pytest.mark.parametrize(
    "points",
    [
        # The instructors' case: three close questions, whose labels overlapped.
        [(0.5, 0.3), (0.52, 0.31), (0.51, 0.29)],
        # Ten all-right questions with no discrimination: one spot, ten labels;
        # and corners of the plot.
        [(1.0, None)] * 10 + [(0.0, -1.0), (0.0, 1.0), (1.0, 1.0), (1.0, -1.0)],
    ],
)
def test_chart_labels_overlap_nothing(points):
    chart = facility_chart(chart_stats(points))
    placed = chart["points"]
    assert [p["label"] for p in placed] == [str(n) for n in range(1, len(points) + 1)]
    circles = [
        (p["x"] - RADIUS, p["y"] - RADIUS, p["x"] + RADIUS, p["y"] + RADIUS)
        for p in placed
    ]
    for i, p in enumerate(placed):
        box = p["box"]
        assert 0 <= box[0] < box[2] <= WIDTH and 0 <= box[1] < box[3] <= HEIGHT
        assert (box[0] + box[2]) / 2 == pytest.approx(p["lx"], abs=0.1)
        for other in placed[i + 1 :]:
            assert not overlap(box, other["box"]), (p["label"], other["label"])
        for circle in circles:
            assert not overlap(box, circle), p["label"]


def test_chart_lists_what_it_cannot_plot():
    chart = facility_chart(chart_stats([(0.5, 0.2), (None, None)]))
    assert [p["label"] for p in chart["points"]] == ["1"]
    assert chart["missing"] == [
        {"item": "2", "title": "Question 2", "why": "no responses"}
    ]
