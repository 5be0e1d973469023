# Cohorts, assignments and quizzes moved to the teaching app (teaching 0001
# takes them into its state, with their quiz_ tables); here they leave quiz's
# state. No table changes. teaching 0001 and lms 0004 declare that they run
# before this one (run_before), so every foreign key that pointed here points
# to teaching first, and no quiz migration names a higher app.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('quiz', '0012_apitoken_scopes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                # Those pointed to last: what points to a model leaves first.
                migrations.DeleteModel(name='ScoreOverride'),
                migrations.DeleteModel(name='AssignmentExtension'),
                migrations.DeleteModel(name='AssignmentItem'),
                migrations.DeleteModel(name='Assignment'),
                migrations.DeleteModel(name='QuizItemOverride'),
                migrations.DeleteModel(name='QuizQuestionChange'),
                migrations.DeleteModel(name='QuizRegradeResult'),
                migrations.DeleteModel(name='QuizRegrade'),
                migrations.DeleteModel(name='QuizAccommodation'),
                migrations.DeleteModel(name='QuizCodeAnswer'),
                migrations.DeleteModel(name='QuizAttempt'),
                migrations.DeleteModel(name='QuizSlot'),
                migrations.DeleteModel(name='Quiz'),
                migrations.DeleteModel(name='CohortMembership'),
                migrations.DeleteModel(name='Cohort'),
            ],
            database_operations=[],
        ),
    ]
