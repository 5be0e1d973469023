"""Cold sandbox vs warm pool: time per grade of tie-weights, and memory.

    .venv/bin/python benchmarks/sandbox_bench.py [--short] [--runs N]

Prints every figure beside the README's, then fails (exit 1) on the
regressions a noisy machine still measures reliably: extra PSS per
concurrent grade over 100 MB; a warm sandbox grade over 5x either of two
baselines timed in the same run, so machine speed cancels out: the same
job in a plain fork of a warm process (the learner client's local runner:
catches the sandbox's own costs) and one forward pass of GPT-2 small over
16 tokens on one thread (catches the exercise's costs, which the fork
shares: the 0.4 s deepcopy that made grades 6x slower); cold/warm under
20x. "sandbox" times are the runner's own
(from starting the job to its result); "grade" times add the parent-side
checks of grading_engine.grading. Memory is read from /proc/PID/smaps_rollup of
every process of the pool's uids, the zygote's and the slots' (needs root,
as the pool does). PSS splits each shared page between the processes that
map it, so the slots' copy-on-write sharing of the zygote shows there, not
in RSS. Targets: warm >= 20x faster than cold, warm median < 150 ms, 2 slots
< 1.8 GB PSS, < 100 MB extra per concurrent grade.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grading_engine.grading import grade  # noqa: E402
from grading_engine.sandbox import SandboxRunner, WarmPool  # noqa: E402
from grading_engine.sandbox.slots import uid_pids  # noqa: E402
from readme_figures import Gates, show  # noqa: E402

RIGHT = """\
def tie_weights(model):
    model.lm_head.weight = model.transformer.wte.weight
"""
HOLD = """\
import time
def tie_weights(model):
    model.lm_head.weight = model.transformer.wte.weight
    time.sleep(HOLD_SECONDS)
"""
MB = 1024 * 1024
MAX_EXTRA_PSS_MB = 100
MAX_WARM_OVER_PLAIN_FORK = 5.0
MAX_WARM_OVER_FORWARD = 5.0
MIN_COLD_OVER_WARM = 20.0


class Recording:
    """A runner wrapper that keeps each ChildOutcome's duration."""

    def __init__(self, runner):
        self.runner = runner
        self.durations: list[float] = []

    def run(self, job, *, timeout, **_ignored):
        outcome = self.runner.run(job, timeout=timeout)
        self.durations.append(outcome.duration_ms)
        return outcome


def grade_once(runner, code: str = RIGHT) -> tuple[str, float]:
    start = time.monotonic()
    verdict = grade(
        harness="tie-weights",
        code=code,
        entry_point="tie_weights",
        runner=runner,
        timeout=60,
        seed=1,
    )
    return verdict.status, (time.monotonic() - start) * 1000


def rollup(pid: int) -> dict[str, int]:
    """Rss/Pss/Private_* in bytes from smaps_rollup (0 if the pid is gone)."""
    found: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    found[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    return found


def pool_memory(pool: WarmPool) -> dict[str, int]:
    """Summed Rss, Pss and USS over every process of the pool's uids."""
    total = {"Rss": 0, "Pss": 0, "Uss": 0, "processes": 0}
    for uid in pool.uids():
        for pid in uid_pids(uid):
            r = rollup(pid)
            total["Rss"] += r.get("Rss", 0)
            total["Pss"] += r.get("Pss", 0)
            total["Uss"] += r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
            total["processes"] += 1
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


FORWARD_TOKENS = 16


def forward_pass_ms(runs: int) -> float:
    """Median ms of one forward pass of GPT-2 small over FORWARD_TOKENS tokens
    on one thread, in this process: the machine's speed at the work grades
    are made of, timed in the same run as the grades (threads restored)."""
    import torch
    from grading_engine.reference.cache import reference_model

    model = reference_model("gpt2")
    idx = torch.arange(FORWARD_TOKENS).unsqueeze(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        times = []
        with torch.no_grad():
            model(idx)
            for _ in range(runs):
                start = time.perf_counter()
                model(idx)
                times.append((time.perf_counter() - start) * 1000)
    finally:
        torch.set_num_threads(threads)
    return statistics.median(times)


def naming_extra_ms(short: bool) -> list[float]:
    """Extra judge time, per failed grade, of naming a slip only when every
    case agrees with it (checks.slip_rules): each known wrong solution of
    the harnesses with a declared judge, judged in this process with the
    rule and without it on one draw (the best of 3 each). Parent side only:
    the child's run is the same either way. `short`: 2 per harness."""
    import yaml
    from grading_engine.exercises.base import load_harness
    from grading_engine.grading import judge_cases
    from grading_engine.reference.tokenizer import get_encoding

    get_encoding()  # the tokenizer's files, offline
    extra = []
    for path in sorted((ROOT / "content" / "exercises").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if spec["harness"] == "authored":  # its judge is built per grade
            continue
        module = load_harness(spec["harness"])
        if not hasattr(module.check_case, "slip_agrees"):
            continue
        for wrong in spec["wrong_solutions"][: 2 if short else None]:
            runs = _runs(module, spec, wrong["code"], seed=1)
            extra.append(
                _best_ms(judge_cases, module, runs, True)
                - _best_ms(judge_cases, module, runs, False)
            )
    return extra


def _runs(module, spec: dict, code: str, *, seed: int) -> list:
    """(case, data, tensors) of `code` on one draw, run in this process as the
    sandbox's child runs it: what the parent judges."""
    from grading_engine.harness.inputs import run_watched

    space = {"__name__": "__submission__"}
    exec(compile(code, "<submission>", "exec"), space)  # noqa: S102
    fn = space[spec["entry_point"]]
    return [(c, *run_watched(module, fn, c)) for c in module.make_cases(seed)]


def held_out_named(seeds: tuple[int, ...], folder: str = "heldout") -> dict[str, int]:
    """How the held-out submissions fare (tests/grader/heldout/: written from
    each exercise's prompt and solution only, never from its known mistakes
    or the grader): wrong ones failed and named, right ones passed and named
    (which must be none), per grade on each of `seeds`. `folder="devset"`:
    the development set, written the same way, that slips are built from."""
    import yaml
    from grading_engine.exercises.base import load_harness
    from grading_engine.grading import judge_cases
    from grading_engine.reference.tokenizer import get_encoding

    get_encoding()  # the tokenizer's files, offline
    specs = {
        path.stem: yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in (ROOT / "content" / "exercises").glob("*.yaml")
    }
    kinds = ("wrong", "wrong failed", "wrong named")
    counts = dict.fromkeys((*kinds, "right", "right passed", "right named"), 0)
    for path in sorted((ROOT / "tests" / "grader" / folder).glob("*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8"))["submissions"]:
            spec, kind = specs[item["slug"]], item["kind"]
            module = load_harness(spec["harness"])
            for seed in seeds:
                runs = _runs(module, spec, item["code"], seed=seed)
                failed = [c for c in judge_cases(module, runs) if not c.passed]
                counts[kind] += 1
                counts[f"{kind} {'failed' if kind == 'wrong' else 'passed'}"] += (
                    bool(failed) if kind == "wrong" else not failed
                )
                counts[f"{kind} named"] += any(c.diagnosis for c in failed)
    return counts


def _best_ms(judge, module, runs: list, rule: bool) -> float:
    """The fastest of 3 judges of the same runs, in ms."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        judge(module, runs, every_case_agrees=rule)
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="few runs, for CI")
    parser.add_argument("--runs", type=int, default=None, help="warm grades")
    parser.add_argument("--slots", type=int, default=2, help="warm pool size")
    args = parser.parse_args()
    runs = args.runs or (5 if args.short else 30)
    cold_runs = 1 if args.short else 3

    print(f"== cold: {cold_runs} grade(s) in a fresh sandbox each")
    cold = Recording(SandboxRunner(concurrency=1))
    cold_grades = [grade_once(cold) for _ in range(cold_runs)]
    cold.runner.close()
    cold_ms = statistics.median(cold.durations)
    cold_grade_ms = statistics.median(ms for _, ms in cold_grades)
    print(f"  statuses {[s for s, _ in cold_grades]}")
    # A cold sandbox loads Python, torch and the harness's models before the
    # job's clock starts, so its "sandbox" time is the job alone; the whole
    # grade is what a cold grade costs.
    print(f"  sandbox {cold_ms:8.0f} ms (median)   grade {cold_grade_ms:8.0f} ms")

    print(f"== warm pool ({args.slots} slots)")
    started = time.monotonic()
    pool = WarmPool(args.slots).start()
    print(f"  pool start {time.monotonic() - started:.1f} s")
    warm = Recording(pool)
    grade_once(warm)  # the parent's own first-use costs (reference models)
    warm.durations.clear()
    grades = [grade_once(warm) for _ in range(runs)]
    statuses = {s for s, _ in grades}
    warm_ms = statistics.median(warm.durations)
    grade_ms = [ms for _, ms in grades]
    print(f"  {runs} grades, statuses {sorted(statuses)}")
    warm_p95 = percentile(warm.durations, 0.95)
    print(
        f"  sandbox median {warm_ms:6.0f} ms  p95 {warm_p95:6.0f} ms"
        f"   grade median {statistics.median(grade_ms):6.0f} ms"
        f"  p95 {percentile(grade_ms, 0.95):6.0f} ms"
    )
    warm_grade_ms = statistics.median(grade_ms)
    print(f"  cold / warm (whole grade): {cold_grade_ms / warm_grade_ms:5.1f}x")

    # The same job in a plain fork of a warm process, no sandbox: what the
    # job itself costs on this machine now, so a regression in the sandbox
    # or the exercise shows as a ratio that machine speed does not move.
    from course.forkrunner import ForkRunner

    fork = Recording(ForkRunner())
    grade_once(fork)  # its server's start and models
    fork.durations.clear()
    fork_statuses = {grade_once(fork)[0] for _ in range(runs)}
    fork_ms = statistics.median(fork.durations)
    print(f"  plain fork median {fork_ms:6.0f} ms, statuses {sorted(fork_statuses)}")
    # The fork shares the exercise's own costs (a 0.4 s copy of GPT-2 in the
    # harness was in both): a forward pass of the model measures those.
    forward_ms = forward_pass_ms(runs)
    print(
        f"  GPT-2 small forward, {FORWARD_TOKENS} tokens, 1 thread: {forward_ms:.0f} ms"
    )

    idle = pool_memory(pool)
    print("== memory")
    print(
        f"  idle pool: {idle['processes']} processes, RSS {idle['Rss'] / MB:.0f} MB,"
        f" PSS {idle['Pss'] / MB:.0f} MB"
    )
    hold = 3.0
    jobs = [
        threading.Thread(
            target=grade_once,
            args=(pool, HOLD.replace("HOLD_SECONDS", str(hold))),
        )
        for _ in range(args.slots)
    ]
    for job in jobs:
        job.start()
    time.sleep(hold / 2)
    busy = pool_memory(pool)
    for job in jobs:
        job.join()
    extra_pss = (busy["Pss"] - idle["Pss"]) / args.slots
    print(
        f"  with {args.slots} concurrent grades: {busy['processes']} processes,"
        f" RSS {busy['Rss'] / MB:.0f} MB, PSS {busy['Pss'] / MB:.0f} MB"
    )
    print(f"  extra per concurrent grade (PSS delta / grades): {extra_pss / MB:.0f} MB")
    pool.close()

    print("== naming a failed grade's mistake (parent side, in this process)")
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # as a worker's judge runs; restored after
    try:
        extra = naming_extra_ms(args.short)
        held = held_out_named((1,) if args.short else (1, 2))
        dev = None if args.short else held_out_named((1, 2), "devset")
    finally:
        torch.set_num_threads(before)
    naming_median, naming_p95 = statistics.median(extra), percentile(extra, 0.95)
    print(
        f"  {len(extra)} wrong solutions: extra judge time median "
        f"{naming_median:.1f} ms, p95 {naming_p95:.1f} ms, max {max(extra):.1f} ms"
    )
    named_share = held["wrong named"] / held["wrong"]
    print(f"  held-out submissions: {held}")
    if dev is not None:
        print(f"  development submissions (the slips were built from them): {dev}")

    print("== beside the README")
    show(
        "warm grade in the sandbox, tie-weights, GPT-2 small",
        f"median {warm_ms:.0f} ms, p95 {warm_p95:.0f} ms",
    )
    over_fork = warm_ms / fork_ms
    show(
        "warm grade over the same job in a plain fork",
        f"{over_fork:.1f}x (sandbox median {warm_ms:.0f} ms, plain fork "
        f"{fork_ms:.0f} ms)",
    )
    over_forward = warm_ms / forward_ms
    show(
        "warm grade over one GPT-2 small forward pass",
        f"{over_forward:.1f}x (sandbox median {warm_ms:.0f} ms, forward pass "
        f"{forward_ms:.0f} ms)",
    )
    cold_over_warm = cold_grade_ms / warm_grade_ms
    show("cold / warm", f"{cold_over_warm:.1f}x (whole grade)")
    show(
        "idle warm pool, 1 / 2 / 4 slots, PSS",
        f"{args.slots} slots: {idle['Pss'] / MB:,.0f} MB",
    )
    show("extra memory per concurrent grade (PSS)", f"{extra_pss / MB:.0f} MB")
    show(
        "a failed grade: extra judge time to name a slip every case agrees with",
        f"median {naming_median:.1f} ms, p95 {naming_p95:.1f} ms "
        f"({len(extra)} wrong solutions, {'2' if args.short else 'all'} a harness)",
    )
    show(
        "held-out wrong answers named",
        f"{named_share:.0%} ({held['wrong named']} of {held['wrong']} grades; "
        f"{held['wrong failed']} failed; right: {held['right passed']} of "
        f"{held['right']} passed, {held['right named']} named)",
    )

    gates = Gates()
    gates.check(
        statuses == {"passed"} and fork_statuses == {"passed"},
        "every timed grade passed",
    )
    gates.check(
        extra_pss / MB <= MAX_EXTRA_PSS_MB,
        f"extra PSS per concurrent grade {extra_pss / MB:.0f} MB"
        f" <= {MAX_EXTRA_PSS_MB} MB",
    )
    gates.check(
        over_fork <= MAX_WARM_OVER_PLAIN_FORK,
        f"warm grade {over_fork:.1f}x the plain fork <= {MAX_WARM_OVER_PLAIN_FORK:g}x",
    )
    gates.check(
        over_forward <= MAX_WARM_OVER_FORWARD,
        f"warm grade {over_forward:.1f}x a forward pass <= {MAX_WARM_OVER_FORWARD:g}x",
    )
    gates.check(
        cold_over_warm >= MIN_COLD_OVER_WARM,
        f"cold / warm {cold_over_warm:.1f}x >= {MIN_COLD_OVER_WARM:g}x",
    )
    gates.finish()


if __name__ == "__main__":
    main()
