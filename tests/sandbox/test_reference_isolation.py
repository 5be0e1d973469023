"""Learner code cannot borrow the reference answers from inside the sandbox.

Before, a submission could `from grading_engine.reference import count_parameters`
(passing count-params), call `block_parameter_count` (block-param-count) or
run the reference GPT on the state dict it was given (0.9 on gpt2-forward),
which defeats showing the solution only after a pass or five attempts. Now
every `grader` import path is refused with a clear message while the
learner's code runs, and the staged copy of the grader inside the sandbox
holds stubs instead of the answer modules. Every test runs cold and warm.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml
from grading_engine.grading import grade

from tests.sandbox.conftest import messages

REFUSED = "is not available to submissions: write the function yourself"
EXERCISES = Path(__file__).resolve().parents[2] / "content" / "exercises"


@pytest.fixture(params=["cold", "warm"])
def runner(request):
    return request.getfixturevalue("cold_runner" if request.param == "cold" else "pool")


def run(runner, harness: str, entry_point: str, code: str):
    return grade(
        harness=harness,
        code=textwrap.dedent(code),
        entry_point=entry_point,
        runner=runner,
        timeout=60.0,
    )


def test_count_params_cannot_import_the_reference_count(runner):
    verdict = run(
        runner,
        "count-params",
        "count_params",
        """\
        from grading_engine.reference import count_parameters

        def count_params(model):
            return count_parameters(model)
        """,
    )
    assert verdict.status != "passed"
    assert verdict.score == 0.0
    assert f"grading_engine.reference {REFUSED}" in messages(verdict)


def test_block_param_count_cannot_call_the_reference_formula(runner):
    verdict = run(
        runner,
        "block-param-count",
        "block_param_count",
        """\
        def block_param_count(n_embd):
            import importlib
            reference = importlib.import_module("grading_engine.reference")
            return reference.block_parameter_count(n_embd)
        """,
    )
    assert verdict.status != "passed"
    assert verdict.score == 0.0
    assert f"grading_engine.reference {REFUSED}" in messages(verdict)


def test_gpt2_forward_cannot_delegate_to_the_reference_gpt(runner):
    verdict = run(
        runner,
        "gpt2-forward",
        "gpt2_forward",
        """\
        import sys

        def gpt2_forward(idx, state_dict, n_head):
            try:
                ref = sys.modules["grading_engine.reference"]
            except KeyError:
                import grading_engine.reference as ref
            wte = state_dict["transformer.wte.weight"]
            n_layer = len({k.split(".")[2] for k in state_dict if ".h." in k})
            config = ref.GPTConfig(
                vocab_size=wte.shape[0],
                block_size=state_dict["transformer.wpe.weight"].shape[0],
                n_layer=n_layer,
                n_head=n_head,
                n_embd=wte.shape[1],
                tied="lm_head.weight" not in state_dict,
            )
            model = ref.GPT(config)
            model.load_state_dict(state_dict, strict=False)
            return model(idx)
        """,
    )
    assert verdict.status != "passed"
    assert verdict.score == 0.0
    assert f"grading_engine.reference {REFUSED}" in messages(verdict)


# Every other way in: each route either fails or yields something useless,
# and the function reports what it found in the message of the error it
# raises (the verdict carries it).
PROBE = """\
import importlib
import importlib.util
import os
import re
import sys


def _routes():
    yield "import", lambda: __import__("grading_engine.reference").reference
    yield "from-import", lambda: exec("from grading_engine import reference")
    yield "import_module", lambda: importlib.import_module(
        "grading_engine.reference.counts"
    )
    yield "exercise", lambda: importlib.import_module(
        "grading_engine.exercises.count_params"
    )
    yield "checks", lambda: importlib.import_module(
        "grading_engine.checks.fingerprints"
    )
    yield "grading", lambda: importlib.import_module("grading_engine.grading")
    yield "sys.modules", lambda: sys.modules["grading_engine.reference.model"]
    yield "attribute", lambda: sys.modules["grading_engine"].reference
    yield "find_spec", lambda: importlib.util.find_spec("grading_engine.reference")


def _unguarded():
    # Take the guard away and load the staged files: they are stubs.
    sys.meta_path[:] = [f for f in sys.meta_path if "Refuse" not in type(f).__name__]
    sys.modules.pop("grading_engine", None)
    counts = importlib.import_module("grading_engine.reference.counts")
    fingerprints = importlib.import_module("grading_engine.checks.fingerprints")
    out = []
    for fn, args in (
        (counts.count_parameters, (None,)),
        (counts.block_parameter_count, (768,)),
        (fingerprints.gpt2_logits, (None, {}, 1)),
    ):
        try:
            out.append(repr(fn(*args)))
        except RuntimeError as exc:
            out.append("refused: " + str(exc))
    return out


def _answers_on_disk():
    walked, found = 0, []
    for top, _, files in os.walk("/sandbox/lib"):
        for name in files:
            if name.endswith(".py"):
                walked += 1
                with open(os.path.join(top, name)) as f:
                    text = f.read()
                for answer in ANSWERS:
                    if re.search(rf"^def {answer}\\(", text, re.MULTILINE):
                        found.append(f"{name}:{answer}")
    return walked, found


ANSWERS = (
    "check_case",
    "reference",
    "count_parameters",
    "block_parameter_count",
    "gpt2_parameter_count",
    "parameter_breakdown",
    "convert_hf_state_dict",
    "gpt2_logits",
)


def count_params(model):
    leaked, refusals = [], {}
    for name, route in _routes():
        try:
            route()
            leaked.append(name)
        except (ImportError, KeyError, AttributeError) as exc:
            refusals[name] = (type(exc).__name__, str(exc))
    walked, on_disk = _answers_on_disk()
    report = {
        "leaked": leaked,
        "refusals": refusals,
        "unguarded": _unguarded(),
        "walked": walked,
        "on_disk": on_disk,
    }
    raise RuntimeError("REPORT " + repr(report))
"""


def _report(verdict) -> dict:
    text = messages(verdict)
    assert "REPORT " in text, text
    return eval(text.split("REPORT ", 1)[1].splitlines()[0])  # noqa: S307 - ours


def test_no_import_route_reaches_the_grader_and_the_stage_holds_no_answers(runner):
    report = _report(run(runner, "count-params", "count_params", PROBE))

    assert report["leaked"] == [], report
    refusals = report["refusals"]
    assert refusals.pop("sys.modules")[0] == "KeyError"
    assert len(refusals) == 8, report
    for kind, message in refusals.values():
        assert kind in ("ImportError", "ModuleNotFoundError", "AttributeError")
        assert REFUSED in message, report
    # The first missing package is named: grading_engine.reference for its .counts.
    assert refusals["import_module"][1].startswith("grading_engine.reference ")
    assert refusals["grading"][1].startswith("grading_engine.grading ")
    assert len(report["unguarded"]) == 3
    for out in report["unguarded"]:
        assert out.startswith("refused: ") and "not available in the sandbox" in out
    # The search does read the staged grader (the child's own modules)...
    assert report["walked"] > 20, report
    # ...and finds none of the answers there.
    assert report["on_disk"] == [], report


def test_the_right_answers_still_pass_with_the_grader_sealed(runner):
    for slug in ("count-params", "gpt2-forward"):
        spec = yaml.safe_load((EXERCISES / f"{slug}.yaml").read_text("utf-8"))
        verdict = run(runner, spec["harness"], spec["entry_point"], spec["solution"])
        assert verdict.status == "passed", messages(verdict)


def test_a_verdict_carries_only_the_learners_own_stderr(runner):
    # The sandbox used to start with a runpy RuntimeWarning about
    # grading_engine.sandbox.boot that reached every verdict.
    verdict = run(
        runner,
        "count-params",
        "count_params",
        """\
        import sys

        def count_params(model):
            print("mine", file=sys.stderr)
            return 0
        """,
    )
    assert verdict.status == "failed", messages(verdict)
    lines = verdict.stderr.splitlines()
    assert lines and set(lines) == {"mine"}, verdict.stderr[:2000]


def test_the_stage_keeps_run_case_and_drops_the_parents_half(tmp_path):
    # No sandbox needed: this is the copy every sandbox is built from.
    from grading_engine.sandbox.staging import PARENT_ONLY, _stage_grader

    package = Path(_stage_grader(str(tmp_path))) / "grading_engine"
    exercises = sorted((package / "exercises").glob("*.py"))
    harnesses = [p for p in exercises if p.name not in ("__init__.py", "base.py")]
    assert len(harnesses) >= 60
    for path in harnesses:
        text = path.read_text()
        # written (`def run_case(`) or declared (`run_case = calls(...)`)
        assert re.search(r"^(def run_case\(|run_case = )", text, re.M), path.name
        for parent_side in ("check_case", "reference", "make_cases", "_diagnose"):
            defined = rf"^(def {parent_side}\(|{parent_side} = )"
            assert not re.search(defined, text, re.MULTILINE), (
                path.name,
                parent_side,
            )
    calls = (package / "checks" / "learner_calls.py").read_text()
    assert "def capture_tensor(" in calls
    checks = (package / "checks" / "tensors.py").read_text()
    assert "def compare_tensor(" not in checks
    for relative in PARENT_ONLY:
        text = (package / relative).read_text()
        assert "runs in the trusted parent only" in text
        assert "import torch" not in text
    # The reference GPT runs in the child (cases build models with it), but
    # its source, the solution to several exercises, is not there to print.
    reference = package / "reference"
    assert not (reference / "model.py").exists()
    assert (reference / "model.pyc").is_file()


# A wrong answer that wrecks the model it was given: zeroes the embedding,
# points the head elsewhere and renames a block. It runs on the cached GPT-2
# itself in a job's fork (no 0.4 s, 0.5 GB copy), so the fork must be where
# the damage ends.
WRECK = """\
import torch

def tie_weights(model):
    with torch.no_grad():
        model.transformer.wte.weight.zero_()
    model.lm_head.weight = torch.nn.Parameter(torch.ones(3, 3))
    model.transformer.h[0] = torch.nn.Identity()
"""
MODEL_PROBE = """\
def tie_weights(model):
    wte = model.transformer.wte.weight
    raise RuntimeError(
        f"wte-sum={float(wte.abs().sum()) > 0} "
        f"head-shape={tuple(model.lm_head.weight.shape)} "
        f"block0={type(model.transformer.h[0]).__name__}"
    )
"""


def test_a_wrong_answer_that_wrecks_its_model_leaves_the_next_grade_a_whole_one(
    runner,
):
    for _ in range(2):  # on each slot of the warm pool
        wrecked = run(runner, "tie-weights", "tie_weights", WRECK)
        assert wrecked.status == "failed", messages(wrecked)
    for _ in range(2):
        text = messages(run(runner, "tie-weights", "tie_weights", MODEL_PROBE))
        assert "wte-sum=True head-shape=(50257, 768) block0=Block" in text, text


def test_the_cached_model_is_handed_out_only_where_the_process_ends_with_its_job():
    """In a long-lived process a caller gets a copy; in a job's fork, the cache."""
    import subprocess
    import sys

    code = textwrap.dedent(
        """\
        from grading_engine.reference import cache
        shared = cache.reference_model("tiny", tied=False)
        before = cache.model_to_change("tiny", tied=False) is shared
        cache.process_ends_with_its_job()
        after = cache.model_to_change("tiny", tied=False) is shared
        print(before, after)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"], out.stderr
