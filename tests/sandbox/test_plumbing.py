"""Cgroup setup and capped pipe reading, without starting any sandbox."""

from __future__ import annotations

import os
import pathlib
import stat
import time

import pytest
from grading_engine.sandbox import cgroups
from grading_engine.sandbox.pipes import Collector, Stream

from tests.sandbox.conftest import run_attack

pytestmark = pytest.mark.sandbox


@pytest.fixture
def fake_cgroupfs(tmp_path, monkeypatch):
    monkeypatch.setattr(cgroups, "ROOT", str(tmp_path))
    monkeypatch.setattr(cgroups, "_own_path", lambda controller: "/")
    return tmp_path


def test_it_sets_memory_and_pids_caps_on_cgroup_v2(fake_cgroupfs):
    (fake_cgroupfs / "cgroup.controllers").write_text("cpu memory pids io\n")
    (fake_cgroupfs / "cgroup.subtree_control").write_text("")
    group = cgroups.create("pool-1", memory_bytes=3 << 30, pids=128)
    slot = fake_cgroupfs / "grader-pool-1"
    assert group.directories == [str(slot)]
    assert (fake_cgroupfs / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (slot / "memory.max").read_text() == str(3 << 30)
    assert (slot / "memory.swap.max").read_text() == "0"
    assert (slot / "pids.max").read_text() == "128"


def test_it_sets_memory_and_pids_caps_on_cgroup_v1(fake_cgroupfs):
    for controller in ("memory", "pids"):
        (fake_cgroupfs / controller).mkdir()
    group = cgroups.create("pool-1", memory_bytes=3 << 30, pids=128)
    memory = fake_cgroupfs / "memory" / "grader-pool-1"
    pids = fake_cgroupfs / "pids" / "grader-pool-1"
    assert group.directories == [str(memory), str(pids)]
    assert (memory / "memory.limit_in_bytes").read_text() == str(3 << 30)
    assert (pids / "pids.max").read_text() == "128"


def test_it_reports_no_cgroup_where_no_controller_is_available(fake_cgroupfs):
    # cgroup v1 layout without memory or pids hierarchies mounted
    assert cgroups.create("pool-1", memory_bytes=1 << 30, pids=64) is None


def test_it_counts_oom_kills_from_the_events_file(fake_cgroupfs, tmp_path):
    events = tmp_path / "memory.events"
    events.write_text("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n")
    group = cgroups.SlotCgroup("x", [], oom_file=str(events))
    assert group.oom_kills() == 2


def _collector(cap: int, flood: int) -> tuple[Collector, int]:
    read, write = os.pipe()
    return Collector({"stdout": Stream(read, cap)}, flood_limit=flood), write


def test_it_keeps_only_the_cap_but_drains_everything():
    collector, write = _collector(cap=10, flood=10_000)
    os.write(write, b"x" * 100)
    os.close(write)
    assert collector.pump(time.monotonic() + 5) == "eof"
    stream = collector.streams["stdout"]
    assert bytes(stream.data) == b"x" * 10 and stream.total == 100
    assert "kept 10 of 100 bytes" in stream.text()
    collector.close()


def test_it_stops_at_a_flood():
    collector, write = _collector(cap=10, flood=1000)
    os.write(write, b"y" * 5000)
    assert collector.pump(time.monotonic() + 5) == "flood"
    os.close(write)
    collector.close()


def test_it_stops_at_the_deadline_while_the_pipe_stays_open():
    collector, write = _collector(cap=10, flood=1000)
    started = time.monotonic()
    assert collector.pump(started + 0.2) == "timeout"
    assert 0.2 <= time.monotonic() - started < 10  # the deadline, not EOF, ended it
    os.close(write)
    collector.close()


def _as_nobody(task) -> int:
    """Run `task()` in a fork as an unprivileged uid (root ignores modes)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            if os.geteuid() == 0:
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            code = 0 if task() else 2
        except BaseException:  # noqa: BLE001 - shown in the test's output
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


@pytest.fixture
def nobody_dir():
    """A directory an unprivileged uid can reach (pytest's tmp_path is 0700)."""
    import shutil
    import tempfile

    path = tempfile.mkdtemp(prefix="scrub-test-")
    os.chmod(path, 0o755)
    yield pathlib.Path(path)
    from grading_engine.sandbox.worker import scrub

    scrub(path)  # shutil.rmtree recurses: it cannot remove a deep tree
    shutil.rmtree(path, ignore_errors=True)


def test_the_scrub_empties_a_deep_locked_tree_and_follows_no_link(nobody_dir):
    from grading_engine.sandbox.worker import scrub

    top, outside = nobody_dir / "scratch", nobody_dir / "outside"
    top.mkdir()
    outside.mkdir()
    (outside / "keep").write_text("not the job's")
    os.chown(top, 65534, 65534)

    def build_and_scrub() -> bool:
        os.setxattr(top, "user.note", b"left")
        os.symlink(outside, top / "link")
        os.symlink(top, top / "loop")
        os.chdir(top)
        for depth in range(1500):  # deeper than the recursion limit
            name = "d" * 200 if depth % 2 else "e"  # and than PATH_MAX
            os.mkdir(name)
            open(os.path.join(name, "f"), "w").close()
            os.chdir(name)
            os.chmod("..", 0o500)
        os.mkfifo("fifo")
        os.chmod(".", 0)
        os.chdir("/")
        os.chmod(top, 0o500)
        return scrub(str(top), 0o755) and os.listdir(top) == []

    assert _as_nobody(build_and_scrub) == 0
    assert (outside / "keep").read_text() == "not the job's"
    assert stat.S_IMODE(top.stat().st_mode) == 0o755
    assert os.listxattr(top) == []


def test_the_scrub_reports_what_it_cannot_remove_instead_of_raising(tmp_path):
    from grading_engine.sandbox.worker import scrub

    assert scrub(str(tmp_path / "missing")) is False
    (tmp_path / "file").write_text("not a directory")
    assert scrub(str(tmp_path / "file")) is False


def test_the_worker_scratch_starts_empty_and_is_reset_after_a_change(nobody_dir):
    from grading_engine.sandbox.worker import Scratch

    top = nobody_dir / "scratch"
    top.mkdir()
    (top / "torchinductor_uid_0").mkdir()  # left by preload, before any job
    scratch = Scratch(str(top))
    assert scratch.reset() and os.listdir(top) == []  # the first reset scrubs
    (top / "note").write_text("from one job")
    assert scratch.reset() and os.listdir(top) == []
    os.mkdir(top / "dir")
    (top / "dir" / "note").write_text("from another")
    assert scratch.reset() and os.listdir(top) == []


def test_the_sandbox_entry_point_is_imported_not_run_by_runpy():
    # `python -m grading_engine.sandbox.boot` made runpy print a RuntimeWarning
    # ("found in sys.modules ...") whenever anything had imported boot first,
    # and the warning reached every learner's verdict. The command imports
    # boot and calls main, even with boot (and the package) already loaded.
    import subprocess
    import sys

    from grading_engine.sandbox import boot

    args = boot.argv("no-such-mode")
    assert args[0] == "-c" and "-m" not in args
    preload = "import grading_engine.sandbox.boot, grading_engine.sandbox.probe; "
    code = args[1].replace("import sys; ", "import sys; " + preload, 1)
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code, *args[2:]],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(pathlib.Path(boot.__file__).parents[2])},
    )
    assert done.returncode == 1
    assert (
        done.stderr == "usage: boot zygote FD LIMITS PRELOAD | probe UID|none LIMITS\n"
    )


@pytest.mark.slow
def test_numpy_in_a_job_asks_for_no_huge_pages(pool):
    """A job's CPU time must not depend on how fragmented the machine's
    memory is: numpy's huge pages can make a fault compact memory first, in
    the job's CPU time (grading_engine.sandbox.bwrap.environment)."""
    verdict = run_attack(
        pool,
        """
        import numpy
        print("huge pages:", numpy._core.multiarray._get_madvise_hugepage())
        def tie_weights(model):
            model.lm_head.weight = model.transformer.wte.weight
        """,
    )
    assert verdict.status == "passed", verdict.checks
    assert "huge pages: False" in verdict.stdout


@pytest.mark.slow
def test_a_job_collects_garbage_at_pythons_usual_pace(pool):
    """The zygote collects rarely while it loads torch and the models
    (grading_engine.gc_policy); a job must not inherit that: learner code that
    makes cyclic garbage would hold more memory than on the learner's machine."""
    verdict = run_attack(
        pool,
        """
        import gc
        print("thresholds:", gc.get_threshold())
        def tie_weights(model):
            model.lm_head.weight = model.transformer.wte.weight
        """,
    )
    assert verdict.status == "passed", verdict.checks
    assert "thresholds: (700, 10, 10)" in verdict.stdout
