"""The development set's wrong answers the grader fails to name: where slips come from.

    PYTHONPATH=. .venv/bin/python scripts/unnamed_mistakes.py [--seeds 1,2] [--slugs a]
    PYTHONPATH=. .venv/bin/python scripts/unnamed_mistakes.py --held-out

Grades every submission of tests/grader/devset/ in this process (as
tests/grader/inprocess.py does) and prints each wrong one no failed check
names, with the writer's note and the first failed message, then the share
named. A wrong verdict (a wrong answer passing, a right one failing or named)
is printed too: that is a bug, not a missing slip.

`--held-out` measures tests/grader/heldout/ and prints only the counts and
the wrong verdicts: its unnamed answers stay unseen, so the set keeps
measuring mistakes the slips were not built around (docs/architecture.md,
"Adding a slip").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1", help="draws, comma-separated")
    parser.add_argument("--slugs", default="", help="only these exercises")
    parser.add_argument("--held-out", action="store_true", help="counts only")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.grader.inprocess import grade_in_process

    torch.set_num_threads(1)  # as the sandboxed child and the judge run
    folder = ROOT / "tests" / "grader" / ("heldout" if args.held_out else "devset")
    seeds = [int(s) for s in args.seeds.split(",")]
    only = set(filter(None, args.slugs.split(",")))
    wrong = named = bad = 0
    for path in sorted(folder.glob("*.yaml")):
        items = yaml.safe_load(path.read_text(encoding="utf-8"))["submissions"]
        for index, item in enumerate(items):
            if only and item["slug"] not in only:
                continue
            for seed in seeds:
                failed = [
                    r
                    for r in grade_in_process(item["slug"], item["code"], seed)
                    if not r.passed
                ]
                names = {r.diagnosis for r in failed} - {None}
                where = f"{path.stem}#{index} {item['slug']} (draw {seed})"
                if item["kind"] == "right":
                    if failed:
                        bad += 1
                        print(f"WRONG VERDICT {where}: a right answer failed {names}")
                    continue
                wrong += 1
                if not failed:
                    bad += 1
                    print(f"WRONG VERDICT {where}: a wrong answer passed")
                elif names:
                    named += 1
                elif not args.held_out:
                    first = failed[0].message[:300]
                    print(f"UNNAMED {where}: {item['mistake']}\n    -> {first}")
    share = named / wrong if wrong else 0.0
    print(f"{folder.name}: {named} of {wrong} wrong grades named ({share:.1%}); "
          f"{bad} wrong verdicts")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
