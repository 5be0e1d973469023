from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("grader", "0010_cpu_time_budgets")]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="set_aside",
            field=models.BooleanField(
                default=False,
                help_text="Stopped once as a likely loop while others waited: it "
                "runs again at the lowest priority, in a burst slot (grader.lanes).",
            ),
        ),
    ]
