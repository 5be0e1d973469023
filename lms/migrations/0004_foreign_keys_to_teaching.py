# Cohorts, assignments and quizzes moved from the quiz app to teaching
# (teaching 0001): lms's foreign keys now point there. Their tables kept their
# names, so the database is not touched. This runs before quiz 0013, which
# drops the models from quiz's state (run_before: declared here, from above,
# so no quiz migration names a higher app).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('lms', '0003_quiz_line_items'),
        ('teaching', '0001_initial'),
    ]
    run_before = [('quiz', '0013_teaching_models_leave')]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='lineitem',
                    name='assignment',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='lms_line_items', to='teaching.assignment'),
                ),
                migrations.AlterField(
                    model_name='lineitem',
                    name='quiz',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='lms_line_items', to='teaching.quiz'),
                ),
                migrations.AlterField(
                    model_name='lmscourse',
                    name='cohort',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='lms_course', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='scoresync',
                    name='assignment',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='lms_score_syncs', to='teaching.assignment'),
                ),
                migrations.AlterField(
                    model_name='scoresync',
                    name='quiz',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='lms_score_syncs', to='teaching.quiz'),
                ),
            ],
            database_operations=[],
        ),
    ]
