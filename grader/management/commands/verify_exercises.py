"""`manage.py verify_exercises [SLUG ...]`: grade each reference solution."""

from django.core.management.base import BaseCommand, CommandError

from grader.models import Exercise
from grader.verify import exercise_verify_audited


class Command(BaseCommand):
    help = (
        "Grade the reference solution of each exercise (all by default); one "
        "that fails its own checks is unpublished. Exits 1 if any fails."
    )

    def add_arguments(self, parser):
        parser.add_argument("slugs", nargs="*", help="Exercise slugs (default: all).")

    def handle(self, *args, slugs=(), **options):
        exercises = Exercise.objects.order_by("slug")
        if slugs:
            exercises = exercises.filter(slug__in=slugs)
            unknown = sorted(set(slugs) - set(exercises.values_list("slug", flat=True)))
            if unknown:
                raise CommandError(f"unknown exercise {', '.join(unknown)}")
        failed = []
        for exercise in exercises:
            outcome = exercise_verify_audited(exercise=exercise, actor=None)
            status = outcome.verification["status"]
            if outcome.passed:
                self.stdout.write(self.style.SUCCESS(f"{exercise.slug}: {status}"))
            else:
                failed.append(exercise.slug)
                self.stdout.write(
                    self.style.ERROR(
                        f"{exercise.slug}: {status}, unpublished: {outcome.summary()}"
                    )
                )
        if failed:
            raise CommandError(
                f"{len(failed)} exercise(s) fail their own checks: {', '.join(failed)}"
            )
