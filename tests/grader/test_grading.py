"""Grading end to end: the verdict is decided in the parent, never the child."""

from __future__ import annotations

import textwrap

import pytest
from grading_engine.exercises import kv_cache_bytes
from grading_engine.grading import grade, judge
from grading_engine.harness.subprocess_runner import SubprocessRunner
from grading_engine.harness.wire import VERSION, encode_result
from grading_engine.runner import BUSY_LIMIT, CPU_LIMIT, WALL_LIMIT, ChildOutcome

KV = "kv-cache-bytes"
RIGHT = textwrap.dedent(
    """\
    def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):
        return 2 * n_layer * n_embd * seq_len * batch_size * bytes_per_element
    """
)


def grade_kv(code: str, *, timeout: float = 60.0, seed: int = 1):
    return grade(
        harness=KV,
        code=code,
        entry_point="kv_cache_bytes",
        runner=SubprocessRunner(),
        seed=seed,
        timeout=timeout,
    )


def with_body(body: str, *, prelude: str = "") -> str:
    head = (
        "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    )
    return prelude + head + textwrap.indent(textwrap.dedent(body), "    ")


def test_a_verdict_carries_only_the_learners_own_stderr():
    # Nothing of the grader's own (a runpy or import warning, a log line)
    # may reach the learner's stderr: exactly what the code printed.
    code = "import sys\n\nprint('hello', file=sys.stderr)\n\n" + RIGHT
    verdict = grade_kv(code)
    assert verdict.status == "passed", [c.message for c in verdict.checks]
    assert verdict.stderr == "hello\n"
    assert verdict.stdout == ""


# -- judge() on raw outcomes (no child process) ---------------------------------


def outcome(**fields) -> ChildOutcome:
    base = dict(
        exit_code=0,
        timed_out=False,
        stdout="",
        stderr="",
        result=b"",
        duration_ms=5.0,
    )
    return ChildOutcome(**(base | fields))


def test_a_timeout_is_an_error_that_names_the_limit():
    cases = kv_cache_bytes.make_cases(0)
    verdict = judge(kv_cache_bytes, cases, outcome(timed_out=True), timeout=60)
    assert verdict.status == "error" and verdict.score == 0
    assert "took longer than 60 s" in verdict.checks[0].message


def test_the_time_limit_message_says_which_limit_stopped_the_job():
    cases = kv_cache_bytes.make_cases(0)
    budget = "10× the reference solution's 0.12 s of CPU time, at least 1.5 s"

    def message(**fields) -> str:
        verdict = judge(
            kv_cache_bytes, cases, outcome(**fields), timeout=1.5, budget=budget
        )
        assert verdict.status == "error" and verdict.checks[0].name == "time limit"
        return verdict.checks[0].message

    cpu = message(timed_out=True, killed_reason=CPU_LIMIT, cpu_ms=1560.0)
    assert cpu.startswith(
        f"used more than 1.5 s of CPU time, this exercise's time budget ({budget}), "
        "and was stopped: look for a loop"
    )
    # RLIMIT_CPU's signal, the kernel's own stop, reads the same.
    assert message(exit_code=-24, killed_reason=CPU_LIMIT) == cpu
    waited = message(
        timed_out=True, killed_reason=WALL_LIMIT, cpu_ms=40.0, duration_ms=6512.0
    )
    assert waited.startswith(
        "ran for 7 s of wall-clock time without finishing, having used 0.0 s of "
        f"the 1.5 s of CPU time it may use, this exercise's time budget ({budget}), "
        "and was stopped at the limit for code that waits"
    )
    # Computing, but kept from a core past even the moved backstop: not
    # blamed on waiting.
    busy = message(
        timed_out=True, killed_reason=BUSY_LIMIT, cpu_ms=900.0, duration_ms=13010.0
    )
    assert busy.startswith(
        "was still computing after 13 s of wall-clock time on a busy machine, "
        "having used 0.9 s of the 1.5 s of CPU time it may use, this exercise's "
        f"time budget ({budget}), and was stopped: look for a loop"
    )


def test_a_memory_kill_is_reported_as_such():
    cases = kv_cache_bytes.make_cases(0)
    crash = outcome(exit_code=-9, killed_reason="memory limit")
    verdict = judge(kv_cache_bytes, cases, crash, timeout=60)
    assert verdict.status == "error"
    assert "killed: memory limit" in verdict.checks[0].message


def test_a_crash_names_the_signal():
    cases = kv_cache_bytes.make_cases(0)
    verdict = judge(kv_cache_bytes, cases, outcome(exit_code=-11), timeout=60)
    assert "SIGSEGV" in verdict.checks[0].message


def test_an_unreadable_result_is_an_error_not_a_pass():
    cases = kv_cache_bytes.make_cases(0)
    junk = outcome(result=b'{"status": "passed", "score": 1.0}')
    verdict = judge(kv_cache_bytes, cases, junk, timeout=60)
    assert verdict.status == "error"
    assert "could not read the result" in verdict.checks[0].message


def test_a_result_with_too_few_cases_is_an_error():
    cases = kv_cache_bytes.make_cases(0)
    blob = encode_result({"version": VERSION, "error": None, "cases": []}, {})
    verdict = judge(kv_cache_bytes, cases, outcome(result=blob), timeout=60)
    assert verdict.status == "error"


def test_forged_case_data_fails_in_the_parent():
    cases = kv_cache_bytes.make_cases(0)
    forged = {"type": "builtins.int", "value": 1, "repr": "1"}
    records = [{"ok": True, "data": {"result": forged}} for _ in cases]
    blob = encode_result({"version": VERSION, "error": None, "cases": records}, {})
    verdict = judge(kv_cache_bytes, cases, outcome(result=blob), timeout=60)
    assert verdict.status == "failed"
    assert verdict.score == 0


def test_malformed_case_data_fails_without_crashing_the_grader():
    cases = kv_cache_bytes.make_cases(0)
    records = [{"ok": True, "data": {"result": ["not", "a", "record"]}} for _ in cases]
    blob = encode_result({"version": VERSION, "error": None, "cases": records}, {})
    verdict = judge(kv_cache_bytes, cases, outcome(result=blob), timeout=60)
    assert verdict.status == "failed"


def test_verdict_to_dict_has_the_documented_keys():
    cases = kv_cache_bytes.make_cases(0)
    verdict = judge(kv_cache_bytes, cases, outcome(timed_out=True), timeout=60)
    data = verdict.to_dict()
    assert set(data) == {"status", "score", "checks", "stdout", "stderr", "duration_ms"}
    assert set(data["checks"][0]) >= {
        "name",
        "passed",
        "message",
        "expected",
        "got",
        "diagnosis",
        "hidden",
    }


# -- grade() through real child processes ----------------------------------------


@pytest.mark.slow
def test_a_right_answer_passes_with_full_score():
    verdict = grade_kv(RIGHT + "print('working')\n")
    assert verdict.status == "passed"
    assert verdict.score == 1.0
    assert verdict.stdout.strip() == "working"
    assert len(verdict.checks) == len(kv_cache_bytes.make_cases(1))


@pytest.mark.slow
def test_a_syntax_error_is_an_error_with_its_line():
    verdict = grade_kv("x = 1\n\ndef kv_cache_bytes(n_layer\n    return 1\n")
    assert verdict.status == "error"
    assert verdict.checks[0].message.startswith("line 3:")


@pytest.mark.slow
def test_a_missing_entry_point_is_an_error_that_says_what_to_define():
    verdict = grade_kv("def kv_bytes(*args):\n    return 0\n")
    assert verdict.status == "error"
    assert "define a function named kv_cache_bytes" in verdict.checks[0].message


@pytest.mark.slow
def test_an_exception_is_an_error_with_line_and_cause():
    code = with_body("config = None\nreturn config.n_layer\n")
    verdict = grade_kv(code)
    assert verdict.status == "error"
    assert verdict.checks[0].message.startswith("line 3: AttributeError:")


@pytest.mark.slow
def test_an_endless_loop_is_stopped_and_reported():
    verdict = grade_kv(with_body("while True:\n    pass\n"), timeout=8)
    assert verdict.status == "error"
    assert "took longer than 8 s" in verdict.checks[0].message


@pytest.mark.slow
def test_printing_a_passing_verdict_and_exiting_is_not_a_pass():
    code = textwrap.dedent(
        """\
        import json, os, sys
        print(json.dumps({"status": "passed", "score": 1.0, "checks": []}))
        sys.stdout.flush()
        os._exit(0)
        """
    )
    verdict = grade_kv(code)
    assert verdict.status == "error"
    assert "exit" in verdict.checks[0].message


@pytest.mark.slow
def test_writing_a_forged_result_to_the_grader_channel_is_not_a_pass():
    code = textwrap.dedent(
        """\
        import os
        from grading_engine.harness.wire import encode_result
        forged = {"type": "builtins.int", "value": 7, "repr": "7"}
        meta = {"version": 1, "error": None,
                "cases": [{"ok": True, "data": {"result": forged}}] * 7}
        os.write(3, encode_result(meta, {}))
        os._exit(0)
        """
    )
    verdict = grade_kv(code)
    assert verdict.status != "passed"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prelude", "expression", "named"),
    [
        (
            "class Always:\n    def __eq__(self, other):\n        return True\n\n",
            "Always()",
            "Always",
        ),
        ("", "float(2 * n_layer * n_embd * seq_len)", "float"),
    ],
    ids=["rigged-eq", "float"],
)
def test_lookalike_ints_fail_and_the_type_is_named(prelude, expression, named):
    verdict = grade_kv(with_body(f"return {expression}\n", prelude=prelude))
    assert verdict.status == "failed"
    assert verdict.score == 0
    assert all(named in check.message for check in verdict.checks)
    assert {check.diagnosis for check in verdict.checks} == {"not-an-int"}


@pytest.mark.slow
def test_an_int_subclass_is_judged_by_its_stored_value_not_its_eq():
    prelude = (
        "class Sneaky(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n\n"
    )
    verdict = grade_kv(with_body("return Sneaky(0)\n", prelude=prelude))
    assert verdict.status == "failed" and verdict.score == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("prelude", "body"),
    [
        (
            "import numpy as np\n\n",
            "return np.prod([2, n_layer, n_embd, seq_len, batch_size, "
            "bytes_per_element])\n",
        ),
        (
            "import torch\n\n",
            "return torch.tensor(2 * n_layer * n_embd * seq_len * batch_size)"
            " * bytes_per_element\n",
        ),
    ],
    ids=["numpy-int", "0-d-tensor"],
)
def test_an_integer_from_numpy_or_torch_is_a_right_count(prelude, body):
    verdict = grade_kv(with_body(body, prelude=prelude))
    assert verdict.status == "passed", [c.message for c in verdict.checks]


@pytest.mark.slow
def test_patching_the_childs_capture_and_builtins_cannot_pass():
    prelude = textwrap.dedent(
        """\
        import builtins
        import torch
        import grading_engine.exercises.kv_cache_bytes as harness

        torch.equal = lambda *args, **kwargs: True
        torch.allclose = lambda *args, **kwargs: True
        builtins.isinstance = lambda *args: True
        harness.capture_int = lambda value: {
            "type": "builtins.int", "value": 75497472, "repr": "75497472"
        }

        """
    )
    verdict = grade_kv(with_body("return 0\n", prelude=prelude))
    assert verdict.status != "passed"
    assert verdict.score < 1.0


@pytest.mark.slow
def test_a_tied_gradient_is_recomputed_in_the_parent_not_trusted():
    # A learner who aliases .data and patches torch's comparisons in the child
    # still fails: the gradient is compared in the parent.
    code = textwrap.dedent(
        """\
        import torch
        torch.equal = lambda *args, **kwargs: True
        torch.allclose = lambda *args, **kwargs: True

        def tie_weights(model):
            model.lm_head.weight.data = model.transformer.wte.weight.data
        """
    )
    verdict = grade(
        harness="tie-weights",
        code=code,
        entry_point="tie_weights",
        runner=SubprocessRunner(),
        seed=3,
        timeout=120,
    )
    assert verdict.status == "failed"
    assert "aliased-data" in {check.diagnosis for check in verdict.checks}


NOISY_SOFTMAX = textwrap.dedent(
    """
    import torch


    def next_token_probs(logits, temperature=1.0):
        p = torch.softmax(logits / temperature, dim=-1)
        return p * (1 + 1e-3)  # off by 0.1%: outside the default rtol of 1e-4
    """
)


def test_admin_tolerances_loosen_the_checks_for_one_grade():
    from grading_engine.exercises import softmax_temperature

    def run(options):
        return grade(
            harness="softmax-temperature",
            code=NOISY_SOFTMAX,
            entry_point="next_token_probs",
            runner=SubprocessRunner(),
            seed=3,
            timeout=120.0,
            options=options,
        )

    assert run(None).status == "failed"
    assert run({"rtol": 0.01, "atol": 0.0}).status == "passed"
    assert (softmax_temperature.RTOL, softmax_temperature.ATOL) == (1e-4, 1e-7)


def test_tolerances_ignore_options_a_harness_does_not_have():
    from grading_engine.grading import tolerances

    with tolerances(kv_cache_bytes, {"rtol": 0.5}):
        assert not hasattr(kv_cache_bytes, "RTOL")


def test_a_declared_tensor_check_reads_the_tolerances_in_force_when_it_judges():
    # checks.judges.tensor_check is built once, at import; an exercise's own
    # rtol/atol (grading.tolerances) must still reach it at judge time.
    from grading_engine.exercises import rms_norm
    from grading_engine.expected import one_check
    from grading_engine.grading import tolerances

    case = rms_norm.make_cases(seed=0)[0]

    def off_by_half_a_percent(x, weight, eps):
        return rms_norm.reference(x, weight, eps) * 1.005

    data, tensors = rms_norm.run_case(off_by_half_a_percent, case)

    def passed(options):
        with tolerances(rms_norm, options), one_check():
            return all(r.passed for r in rms_norm.check_case(case, data, tensors))

    assert not passed(None)
    assert passed({"rtol": 0.01, "atol": 0.0})
    assert not passed(None)  # put back afterwards
    assert (rms_norm.RTOL, rms_norm.ATOL) == (1e-4, 1e-5)
