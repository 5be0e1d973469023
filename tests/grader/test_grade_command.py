"""`manage.py grade SLUG FILE [--json]`: the contract scripts and CI rely on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest

from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import load_exercises

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TIE = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)
COPY = (
    "import torch\n"
    "def tie_weights(model):\n"
    "    copy = model.transformer.wte.weight.clone()\n"
    "    model.lm_head.weight = torch.nn.Parameter(copy)\n"
)


@pytest.fixture
def loaded(transactional_db):
    """The exercise rows the command reads, from their real files (not the
    whole course: its lessons and figures are no business of `grade`)."""
    load_exercises("tie-weights", "block-param-count")


def grade(*args: str) -> subprocess.CompletedProcess:
    from django.db import connection

    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "grade", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_right_answer_prints_one_passing_json_object(loaded, tmp_path):
    path = tmp_path / "tie.py"
    path.write_text(TIE)
    result = grade("tie-weights", str(path), "--json")
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert set(verdict) == {
        "status",
        "score",
        "checks",
        "stdout",
        "stderr",
        "duration_ms",
    }
    assert verdict["status"] == "passed" and verdict["score"] == 1.0
    assert all({"name", "passed", "message"} <= set(c) for c in verdict["checks"])
    assert verdict["duration_ms"] > 0


def test_a_copied_head_fails_with_the_diagnosis_and_exit_status_zero(loaded, tmp_path):
    """A copied head that also prints hostile bytes (HOSTILE, below): --json
    gives the diagnosis, and the output exactly as printed, escaped only by
    JSON (one cold sandbox for both: each costs seconds of CPU)."""
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE)
    result = grade("tie-weights", str(path), "--seed", "1", "--json")
    assert result.returncode == 0
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "failed" and 0 <= verdict["score"] < 1
    failed = [c for c in verdict["checks"] if not c["passed"]]
    assert any(c["diagnosis"] == "copied-not-shared" for c in failed)
    assert any("38,597,376" in c["message"] for c in failed)
    assert verdict["stdout"].startswith("\x1b]52;c;ZWNobyBwd25lZA==\x07clipboard\n")
    assert "over\rwrite \x9b2J \x00 tab\there" in verdict["stdout"]


def test_a_syntax_error_is_an_error_verdict_naming_the_line(loaded, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def tie_weights(model):\n    x = (\n")
    result = grade("tie-weights", str(path), "--json")
    assert result.returncode == 0
    verdict = json.loads(result.stdout)
    assert verdict["status"] == "error" and verdict["score"] == 0
    assert "line 2" in verdict["checks"][0]["message"]


def test_the_human_readable_report_lists_each_check(loaded, tmp_path):
    path = tmp_path / "tie.py"
    path.write_text(TIE)
    result = grade("tie-weights", str(path))
    assert result.returncode == 0
    assert result.stdout.startswith("tie-weights: passed (score 1.00")
    assert "PASS gpt2 structure: one shared weight" in result.stdout


def test_an_unknown_slug_exits_2_naming_the_known_ones(loaded, tmp_path):
    path = tmp_path / "tie.py"
    path.write_text(TIE)
    result = grade("no-such-exercise", str(path), "--json")
    assert result.returncode == 2
    assert "unknown exercise 'no-such-exercise'" in result.stderr
    assert "tie-weights" in result.stderr and "block-param-count" in result.stderr


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b"def f():\n    return '\xff'\n"), "not UTF-8"),
    ],
)
def test_an_unreadable_file_exits_2_with_the_reason(loaded, tmp_path, setup, reason):
    path = tmp_path / "answer.py"
    setup(path)
    result = grade("tie-weights", str(path), "--json")
    assert result.returncode == 2
    assert reason in result.stderr
    assert result.stdout == ""


HOSTILE = (
    "print('\\x1b]52;c;ZWNobyBwd25lZA==\\x07clipboard')\n"
    "print('tie-weights: passed (score 1.00, 1 ms)')\n"
    "print('over\\rwrite \\x9b2J \\x00 tab\\there')\n" + COPY
)


def test_learner_output_is_escaped_and_fenced_in_text_mode(loaded, tmp_path):
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE)
    text = grade("tie-weights", str(path), "--seed", "1")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].startswith("tie-weights: failed (score")
    # No control character but newline and tab reaches the terminal.
    assert not any(
        unicodedata.category(c) == "Cc" and c not in "\n\t" for c in text.stdout
    )
    assert "  | \\x1b]52;c;ZWNobyBwd25lZA==\\x07clipboard" in lines
    assert "  | over\\x0dwrite \\x9b2J \\x00 tab\there" in lines
    # The fake verdict is only ever shown as learner output, behind the fence.
    assert [line for line in lines if "tie-weights: passed" in line] == [
        "  | tie-weights: passed (score 1.00, 1 ms)"
    ]
    # --json of the same file keeps the output as printed: the copied-head test.
