"""Budgets become CPU time: forget the wall-clock measurements.

A wall-clock reference taken on a busy machine stays stored and gives a
budget (and a lane) several times too large. Clearing them makes each
worker measure the exercise again, in CPU time, before its next grade
(grader.submission_grading), as for an exercise never measured.
"""

from django.db import migrations, models


def forget_wall_clock_budgets(apps, schema_editor):
    Exercise = apps.get_model("grader", "Exercise")
    Exercise.objects.exclude(reference_ms=None, time_budget_seconds=None).update(
        reference_ms=None, time_budget_seconds=None
    )


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0009_exercise_right_solutions"),
    ]

    operations = [
        migrations.AlterField(
            model_name="exercise",
            name="reference_ms",
            field=models.FloatField(
                blank=True,
                help_text="The CPU time the reference solution's job used in the sandbox (ms), measured when the exercise was last verified.",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="exercise",
            name="time_budget_seconds",
            field=models.FloatField(
                blank=True,
                help_text="CPU seconds a grade may use, measured at verification (10× the reference, at least 1.5 s); options.time_budget_seconds overrides it.",
                null=True,
            ),
        ),
        migrations.RunPython(forget_wall_clock_budgets, migrations.RunPython.noop),
    ]
