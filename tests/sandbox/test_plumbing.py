"""Cgroup setup and capped pipe reading, without starting any sandbox."""

from __future__ import annotations

import os
import time

import pytest

from grader.sandbox import cgroups
from grader.sandbox.pipes import Collector, Stream

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
    assert 0.2 <= time.monotonic() - started < 1
    os.close(write)
    collector.close()
