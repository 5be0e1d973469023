"""/metrics of the web command as deployed (deploy/gunicorn.conf.py) with 2
workers: whichever process answers the scrape, it counts both."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import wait_for


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode()
    except urllib.error.HTTPError as error:  # the 404 is the point
        return error.read().decode()


PAGE = "/no-such-page"  # nobody else asks for it: its count is ours


def counted(text: str) -> float:
    """How many requests of ours the scrape counts."""
    found = re.search(
        r'^course_request_seconds_count\{method="GET",view="unmatched"\} (\S+)$',
        text,
        re.MULTILINE,
    )
    return float(found.group(1)) if found else 0.0


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_scrape_sums_both_workers(db_stack, tmp_path):
    shared = tmp_path / "metrics"
    shared.mkdir()
    (shared / "counter_1.db").write_bytes(b"left by an earlier server")
    url = db_stack.start_web(asgi=True, workers=2, PROMETHEUS_MULTIPROC_DIR=str(shared))
    assert not (shared / "counter_1.db").exists()  # removed at start
    sent = 0

    def both_served() -> bool:
        """A request more, until each worker has timed one (its file)."""
        nonlocal sent
        fetch(url + PAGE)  # a new connection: either worker takes it
        sent += 1
        return len(list(shared.glob("histogram_*.db"))) == 2

    wait_for(both_served, timeout=60, interval=0, what="both workers to serve")
    sent += 10
    for _ in range(10):
        fetch(url + PAGE)
    scrapes = [counted(fetch(url + "/metrics")) for _ in range(6)]
    assert scrapes == [sent] * 6
    pids = {p.stem.split("_")[-1] for p in Path(shared).glob("histogram_*.db")}
    assert len(pids) == 2


def test_the_deployed_config_shares_metrics_by_itself(tmp_path):
    """Without PROMETHEUS_MULTIPROC_DIR, each server gets a directory of its
    own (two servers on one host never mix); a dead worker's live gauges go."""
    script = (
        "import os, runpy\n"
        "runpy.run_path('deploy/gunicorn.conf.py')\n"
        "print(os.environ['PROMETHEUS_MULTIPROC_DIR'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    made = [
        subprocess.run(
            [sys.executable, "-c", script], cwd=PROJECT_ROOT, env=env,
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        for _ in range(2)
    ]  # fmt: skip
    assert made[0] != made[1] and all(Path(d).is_dir() for d in made)
    for directory in made:
        shutil.rmtree(directory)

    conf = runpy.run_path(str(PROJECT_ROOT / "deploy/gunicorn.conf.py"))
    gone, other = tmp_path / "gauge_livesum_4242.db", tmp_path / "gauge_livesum_7.db"
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path)
    try:
        gone.write_bytes(b""), other.write_bytes(b"")
        conf["child_exit"](None, SimpleNamespace(pid=4242))
    finally:
        del os.environ["PROMETHEUS_MULTIPROC_DIR"]
    assert not gone.exists() and other.exists()
