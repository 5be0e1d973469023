import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0011_submission_set_aside"),
    ]

    operations = [
        migrations.CreateModel(
            name="LocalCheck",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                ("key", models.CharField(max_length=64)),
                ("blob", models.BinaryField()),
                ("built_at", models.DateTimeField(auto_now=True)),
                (
                    "exercise",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="local_check",
                        to="grader.exercise",
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="exercise",
            name="declaration",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="For harness `authored` only: the inputs, cases and "
                "outputs the exercise is graded on (docs/content-format.md); the "
                "solution is its reference, each wrong solution a known mistake.",
            ),
        ),
    ]
