"""Print a benchmark's figures beside the README's, and fail on regressions.

A figure nobody compares is how a 6x slowdown landed unseen: every figure a
benchmark prints that the README's table also states is printed next to
it (`show`), and the regressions a noisy 2-core machine can still measure
reliably are gates (`Gates`): a failed gate makes the benchmark exit 1, so
`make test`'s short mode fails on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_table() -> dict[str, str]:
    """The benchmark table's rows: first cell (the figure) -> "measured" cell."""
    rows: dict[str, str] = {}
    in_table = False
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("| figure | measured |"):
            in_table = True
            continue
        if in_table:
            if not line.startswith("|"):
                break
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if len(cells) >= 2 and not set(cells[0]) <= set("-"):
                rows[cells[0]] = cells[1]
    return rows


# Every row of the README's table, each printed by one benchmark;
# tests/test_benchmark_figures.py holds the table and this list equal.
FIGURES = (
    "warm grade in the sandbox, tie-weights, GPT-2 small",
    "warm grade over the same job in a plain fork",
    "warm grade over one GPT-2 small forward pass",
    "cold / warm",
    "a failed grade: extra judge time to name a slip every case agrees with",
    "held-out wrong answers named",
    "end to end, API POST -> terminal, 1 worker",
    "throughput, light grades, 2 workers",
    "idle warm pool, 1 / 2 / 4 slots, PSS",
    "extra memory per concurrent grade (PSS)",
    "lesson page, 50 clients (wrk), 3 sync workers: server time",
    "a right tie-weights behind four learners' infinite loops (`make run` defaults)",
    "surge: light",
    "surge: heavy",
    "surge: infinite loops",
    "surge: drained after the last submission",
    "verdict saved -> event received, Python clients",
    "verdict saved -> shown on the open page, Chromium",
    "surge, peak PSS",
    "surge: lost, graded twice, 5xx",
    "surge: light p95 over an idle light grade (same run)",
    "streams held on one web process",
    "streams: pages (/healthz, a lesson) p95 while all are open",
    "streams: worker's save -> event p50 / p95",
    "streams, idle: Redis connections / database queries per second",
    "streams: web process RSS",
    "streams: web restart, every page streaming again",
    "streams: web restart, pages p95 / max",
    "drill: quiz save p95 outside the faults",
    "drill: light verdict p95 outside the faults",
    "drill: recovered after worker",
    "drill: recovered after redis",
    "drill: recovered after web",
    "drill: recovered after postgres",
    "drill: a quiz saved after the network came back",
    "drill: lost, duplicated, 5xx outside the outage",
)


def show(figure: str, now: str) -> None:
    """Print `now` for the README row named `figure`, and the README's value."""
    if figure not in FIGURES:
        raise ValueError(f"{figure!r} is not one of the README's figures")
    stated = readme_table().get(figure, "(not in the README's table)")
    print(f"  {figure}\n      now:    {now}\n      README: {stated}")


class Gates:
    """Regressions that fail the run, checked after every figure is printed."""

    def __init__(self) -> None:
        self.failed: list[str] = []

    def check(self, ok: bool, what: str) -> None:
        print(f"  gate {'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            self.failed.append(what)

    def finish(self) -> None:
        if self.failed:
            print("REGRESSION: " + "; ".join(self.failed), file=sys.stderr)
            sys.exit(1)
