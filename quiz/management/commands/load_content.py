from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from quiz.content.loader import content_load
from quiz.content.tree import ContentError


class Command(BaseCommand):
    help = "Load sections, lessons and exercises from content/ (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument(
            "path", nargs="?", default=None, help="Content folder (default: content/)."
        )
        parser.add_argument(
            "--no-figures",
            action="store_true",
            help="Leave the lessons' figures out (neither drawn nor stored), "
            "for a server whose lesson pages nobody reads (a test server).",
        )

    def handle(self, *args, path=None, no_figures=False, **options):
        root = Path(path) if path else settings.CONTENT_DIR
        width = 0

        def progress(step: int, total: int, label: str, outcome: str) -> None:
            nonlocal width
            width = width or len(str(total))
            self.stdout.write(f"[{step:>{width}}/{total}] {outcome:<9} {label}")

        try:
            report = content_load(root=root, progress=progress, figures=not no_figures)
        except ContentError as exc:
            count = len(exc.problems)
            raise CommandError(
                f"{count} problem{'s' if count != 1 else ''} in {root}; nothing was "
                f"loaded:\n" + "\n".join(f"  {p}" for p in exc.problems)
            ) from exc
        for slug in report.missing_from_files:
            self.stdout.write(
                self.style.WARNING(
                    f"lesson {slug!r} is in the database but in no file under {root}; "
                    "left in place (delete it in the admin if it should go)"
                )
            )
        for slug in report.quiz_questions_missing_from_files:
            self.stdout.write(
                self.style.WARNING(
                    f"quiz question {slug!r} is in the database but in no file "
                    f"under {root}; left in place, since quizzes may draw it "
                    "(delete it in the admin if it should go)"
                )
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded {root}: {len(report.created)} created, "
                f"{len(report.updated)} updated, {len(report.unchanged)} unchanged."
            )
        )
