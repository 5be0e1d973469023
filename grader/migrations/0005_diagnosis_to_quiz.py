# Diagnosis moved to the quiz app (quiz 0004 adds it to quiz's state and
# relabels its content type); here it leaves grader's state. No table changes.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('grader', '0004_harness_help_text'),
        ('quiz', '0004_diagnosis_from_grader'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='Diagnosis')],
            database_operations=[],
        ),
    ]
