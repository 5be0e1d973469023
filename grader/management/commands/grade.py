"""`manage.py grade SLUG FILE [--json]`: grade a local file like a submission."""

from __future__ import annotations

import json as _json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from grading_engine.source import SourceUnreadable, read_source
from grading_engine.terminal import fenced, terminal_escape

from grader import selectors
from grader.models import Exercise
from grader.process_runner import exercise_grade, runner_get


class Command(BaseCommand):
    help = "Grade a Python file against an exercise; exits 0 whatever the verdict."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="Exercise slug, e.g. tie-weights.")
        parser.add_argument("file", help="Python file defining the entry point.")
        parser.add_argument(
            "--json", action="store_true", help="Print one JSON object."
        )
        parser.add_argument("--seed", type=int, default=None, help="Fix the case draw.")

    def handle(self, *args, slug, file, json: bool = False, seed=None, **options):
        exercise = self._exercise(slug)
        code = self._read(Path(file))
        from grading_engine.sandbox import SandboxUnavailable

        try:
            runner_get(
                "cold"
            )  # fail early, with the sandbox's reason, if it cannot run
        except SandboxUnavailable as exc:
            raise CommandError(f"cannot grade here: {exc}") from None
        verdict = exercise_grade(
            exercise=exercise, code=code, seed=seed, runner_kind="cold"
        )
        if json:
            self.stdout.write(_json.dumps(verdict.to_dict()))
        else:
            self._print(exercise, verdict)

    def _exercise(self, slug: str) -> Exercise:
        try:
            return selectors.exercise_get(slug=slug)
        except Exercise.DoesNotExist:
            known = ", ".join(selectors.exercise_list().values_list("slug", flat=True))
            hint = (
                f" (known: {known})" if known else " (run manage.py load_content first)"
            )
            raise CommandError(
                f"unknown exercise {slug!r}{hint}", returncode=2
            ) from None

    def _read(self, path: Path) -> str:
        try:
            return read_source(path)
        except SourceUnreadable as exc:
            raise CommandError(str(exc), returncode=2) from None

    def _print(self, exercise: Exercise, verdict) -> None:
        style = {"passed": self.style.SUCCESS, "failed": self.style.WARNING}.get(
            verdict.status, self.style.ERROR
        )
        self.stdout.write(
            style(
                f"{exercise.slug}: {verdict.status} (score {verdict.score:.2f}, "
                f"{verdict.duration_ms:.0f} ms)"
            )
        )
        for check in verdict.checks:
            mark = "PASS" if check.passed else "FAIL"
            hidden = " (hidden case)" if check.hidden else ""
            self.stdout.write(f"  {mark} {terminal_escape(check.name)}{hidden}")
            if not check.passed:
                for line in terminal_escape(check.message).splitlines():
                    self.stdout.write(f"       {line}")
        if verdict.stdout:
            # Learner text: control characters escaped, every line behind "| ".
            self.stdout.write(
                "Your code printed (between the lines; not part of the verdict):"
            )
            self.stdout.write("  +--")
            self.stdout.write(fenced(verdict.stdout))
            self.stdout.write("  +-- end of your code's output")
