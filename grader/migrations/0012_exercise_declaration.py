from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0011_submission_set_aside"),
    ]

    operations = [
        migrations.AddField(
            model_name="exercise",
            name="local_check",
            field=models.BinaryField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="exercise",
            name="local_check_key",
            field=models.CharField(blank=True, editable=False, max_length=64),
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
