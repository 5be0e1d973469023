from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("grader", "0008_exercise_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name="exercise",
            name="right_solutions",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Right answers in other idioms [{name, code}]; tests "
                "and verification prove each passes, so the checks accept what "
                "the prompt allows and not only the reference's form.",
            ),
        ),
    ]
