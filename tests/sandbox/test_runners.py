"""The probe, the refusal to grade unprotected, and the cold runner."""

from __future__ import annotations

import logging
import subprocess
import sys
import time

import pytest
from grading_engine import sandbox
from grading_engine.harness.subprocess_runner import ENGINE_ROOT
from grading_engine.sandbox import probe
from grading_engine.sandbox.slots import uid_pids

from tests.sandbox.conftest import RIGHT, messages, needs_bwrap, run_attack

pytestmark = pytest.mark.sandbox


@pytest.fixture
def seccomp_missing(monkeypatch):
    """Pretend the kernel refused the seccomp filter."""
    found = {name: True for name in probe.REQUIRED + probe.OPTIONAL}
    found["seccomp"] = False
    monkeypatch.setitem(probe._cache, "result", found)


@pytest.fixture(scope="module")
def cold():
    needs_bwrap()
    runner = sandbox.SandboxRunner(concurrency=1)
    yield runner
    runner.close()


def test_the_probe_finds_every_required_protection_here():
    needs_bwrap()
    found = sandbox.probe_protections()
    assert probe.missing_required(found) == [], sandbox.protection_report(found)
    report = sandbox.protection_report(found)
    for name in probe.REQUIRED:
        assert f"[     ok] {name} (required)" in report


def test_the_probes_sandbox_loads_no_torch():
    """Every cold runner and grading worker probes first; the probe's sandbox
    runs the lock-down, which once imported torch (1 s of the probe's 1.4)."""
    code = (
        "import sys\n"
        "from grading_engine.sandbox.boot import main\n"
        "from grading_engine.sandbox.zygote import probe_slot\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ENGINE_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_it_refuses_to_grade_when_a_required_protection_is_missing(seccomp_missing):
    with pytest.raises(sandbox.SandboxUnavailable) as refused:
        sandbox.SandboxRunner()
    assert refused.value.missing == ["seccomp"]
    assert "GRADER_ALLOW_UNSAFE_SANDBOX" in str(refused.value)
    with pytest.raises(sandbox.SandboxUnavailable):
        sandbox.WarmPool(1).start()


def test_degraded_mode_grades_but_warns_loudly(seccomp_missing, caplog):
    with caplog.at_level(logging.WARNING, logger="grading_engine.sandbox"):
        runner = sandbox.SandboxRunner(allow_degraded=True)
    runner.close()
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "UNSAFE SANDBOX" in warning and "seccomp" in warning
    assert runner.limits.require_seccomp is False


def test_make_runner_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="pool or cold"):
        sandbox.make_runner("docker")


def test_the_cold_runner_grades_the_right_answer(cold):
    verdict = run_attack(cold, RIGHT, timeout=60)
    assert verdict.status == "passed", messages(verdict)


def test_the_cold_runner_kills_a_loop_and_leaves_no_process(cold):
    started = time.monotonic()
    verdict = run_attack(
        cold,
        """
        def tie_weights(model):
            while True:
                pass
        """,
        timeout=3,
    )
    assert verdict.status == "error"
    assert verdict.checks[0].name == "time limit"
    assert time.monotonic() - started < 30
    for slot in cold.slots.slots:
        assert uid_pids(slot.uid) == []
    verdict = run_attack(cold, RIGHT, timeout=60)
    assert verdict.status == "passed", messages(verdict)


def test_without_bwrap_it_refuses_unless_degraded_and_then_still_grades(
    monkeypatch, caplog
):
    needs_bwrap()  # the suite's rule; here bwrap is hidden on purpose
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setitem(probe._cache, "result", probe._probe())
    assert probe.probe_protections()["bubblewrap"] is False
    with pytest.raises(sandbox.SandboxUnavailable) as refused:
        sandbox.SandboxRunner()
    assert "bubblewrap" in refused.value.missing
    with caplog.at_level(logging.WARNING, logger="grading_engine.sandbox"):
        runner = sandbox.SandboxRunner(allow_degraded=True, concurrency=1)
    try:
        assert "UNSAFE SANDBOX" in caplog.text
        verdict = run_attack(runner, RIGHT, timeout=60)
        assert verdict.status == "passed", messages(verdict)
    finally:
        runner.close()
