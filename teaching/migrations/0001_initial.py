# Cohorts, assignments and quizzes move from the quiz app to their own app,
# teaching, without touching the database: every table keeps its quiz_ name
# (db_table, the cohort's instructors too), so this migration only takes the
# models into teaching's state. It relabels their content types, so their
# permissions, the groups granted them and their admin log entries follow,
# and the audit trail's entries, which name a model as app_label.ModelName.
# lms 0004 points lms's foreign keys here; quiz 0013 then drops the models
# from quiz's state (docs/architecture.md, "Teaching moved to its own app").

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# The moved models by class name: the audit trail names a model app_label.Name,
# a content type by the lower-case name.
MOVED = [
    "Cohort",
    "CohortMembership",
    "Assignment",
    "AssignmentItem",
    "AssignmentExtension",
    "ScoreOverride",
    "Quiz",
    "QuizSlot",
    "QuizAttempt",
    "QuizCodeAnswer",
    "QuizAccommodation",
    "QuizRegrade",
    "QuizRegradeResult",
    "QuizQuestionChange",
    "QuizItemOverride",
]


def _relabel(apps, from_label: str, to_label: str) -> None:
    """Move the models' content types and audit entries to `to_label`."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    for name in MOVED:
        model = name.lower()
        moving = ContentType.objects.filter(app_label=from_label, model=model).first()
        if moving is None:
            continue  # a fresh database: post_migrate creates the content type
        # One that post_migrate made meanwhile (a partial migrate) has no
        # history; the moving one holds the permissions and log entries.
        ContentType.objects.filter(app_label=to_label, model=model).delete()
        moving.app_label = to_label
        moving.save(update_fields=["app_label"])
    AuditEntry = apps.get_model("quiz", "AuditEntry")
    for name in MOVED:
        AuditEntry.objects.filter(model=f"{from_label}.{name}").update(
            model=f"{to_label}.{name}"
        )


def forwards(apps, schema_editor):
    _relabel(apps, "quiz", "teaching")


def backwards(apps, schema_editor):
    _relabel(apps, "teaching", "quiz")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('quiz', '0012_apitoken_scopes'),
        ('grader', '0011_submission_set_aside'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
        # So a deleted duplicate content type takes its permissions and
        # log entries' links along (the historical models must know them).
        ('auth', '0012_alter_user_first_name_max_length'),
        ('admin', '0003_logentry_add_action_flag_choices'),
    ]
    # quiz gives the models up once teaching holds them (quiz 0013 names
    # no higher app; the order is declared here, from above).
    run_before = [('quiz', '0013_teaching_models_leave')]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Cohort',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('join_code', models.CharField(help_text='Learners join with this code or link.', max_length=16, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('instructors', models.ManyToManyField(blank=True, db_table='quiz_cohort_instructors', related_name='cohorts_taught', to=settings.AUTH_USER_MODEL)),
                        ('owner', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='cohorts_owned', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_cohort',
                        'ordering': ['name', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='Assignment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('title', models.CharField(max_length=200)),
                        ('opens_at', models.DateTimeField(help_text='When learners see it (UTC).')),
                        ('due_at', models.DateTimeField(help_text='When it is due (UTC).')),
                        ('late_policy', models.CharField(choices=[('none', 'Late work counts in full'), ('penalty', 'A penalty per day late, up to a cap'), ('no_credit', 'No credit after the due date')], default='none', max_length=10)),
                        ('penalty_per_day', models.FloatField(default=0.0, help_text="Share of an item's credit lost per day late (0-1).")),
                        ('penalty_cap', models.FloatField(default=1.0, help_text='The most that lateness may take (0-1).')),
                        ('archived_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='assignments_created', to=settings.AUTH_USER_MODEL)),
                        ('cohort', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='assignments', to='teaching.cohort')),
                    ],
                    options={
                        'db_table': 'quiz_assignment',
                        'ordering': ['due_at', 'id'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('due_at__gte', models.F('opens_at'))), name='assignment_due_after_opening'), models.CheckConstraint(condition=models.Q(('penalty_per_day__gte', 0), ('penalty_per_day__lte', 1), ('penalty_cap__gte', 0), ('penalty_cap__lte', 1)), name='assignment_penalty_in_unit_interval')],
                    },
                ),
                migrations.CreateModel(
                    name='CohortMembership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('joined_at', models.DateTimeField(auto_now_add=True)),
                        ('cohort', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='teaching.cohort')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cohort_memberships', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_cohortmembership',
                        'ordering': ['joined_at'],
                        'constraints': [models.UniqueConstraint(fields=('cohort', 'user'), name='cohort_member_once')],
                    },
                ),
                migrations.CreateModel(
                    name='Quiz',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('title', models.CharField(max_length=200)),
                        ('opens_at', models.DateTimeField()),
                        ('closes_at', models.DateTimeField()),
                        ('time_limit', models.FloatField(blank=True, help_text='Minutes per attempt (fractions allowed: 7.5 is 7 min 30 s); empty for none.', null=True)),
                        ('attempts_allowed', models.PositiveSmallIntegerField(default=1)),
                        ('combine', models.CharField(choices=[('best', 'The best attempt counts'), ('last', 'The last attempt counts'), ('average', 'The average of the attempts counts')], default='best', max_length=8)),
                        ('feedback', models.CharField(choices=[('immediate', 'At once: each answer is checked as it is given'), ('after_submit', 'Once the learner has submitted their last attempt (or their close has passed)'), ('after_close', 'Once the quiz has closed for everyone')], default='after_submit', max_length=12)),
                        ('shuffle', models.BooleanField(default=True, help_text='Shuffle question order and option order per attempt.')),
                        ('archived_at', models.DateTimeField(blank=True, null=True)),
                        ('released_at', models.DateTimeField(blank=True, help_text='When held-back scores last went out (scores_changed) after the quiz closed for everyone; cleared when it can be answered again.', null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('cohort', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='quizzes', to='teaching.cohort')),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name_plural': 'quizzes',
                        'db_table': 'quiz_quiz',
                        'ordering': ['closes_at', 'id'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('closes_at__gt', models.F('opens_at'))), name='quiz_closes_after_opening'), models.CheckConstraint(condition=models.Q(('attempts_allowed__gte', 1)), name='quiz_allows_an_attempt'), models.CheckConstraint(condition=models.Q(('time_limit__isnull', True), ('time_limit__gt', 0), _connector='OR'), name='quiz_time_limit_positive')],
                    },
                ),
                migrations.CreateModel(
                    name='AssignmentItem',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('exercise', 'Exercise'), ('lesson', 'Lesson'), ('quiz', 'Quiz')], max_length=8)),
                        ('weight', models.FloatField(default=1.0, help_text='Points this item is worth.')),
                        ('order', models.PositiveIntegerField(default=0)),
                        ('assignment', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='items', to='teaching.assignment')),
                        ('exercise', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, to='grader.exercise')),
                        ('lesson', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, to='quiz.lesson')),
                        ('quiz', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='assignment_items', to='teaching.quiz')),
                    ],
                    options={
                        'db_table': 'quiz_assignmentitem',
                        'ordering': ['order', 'id'],
                        'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('exercise__isnull', False), ('kind', 'exercise'), ('lesson', None), ('quiz', None)), models.Q(('exercise', None), ('kind', 'lesson'), ('lesson__isnull', False), ('quiz', None)), models.Q(('exercise', None), ('kind', 'quiz'), ('lesson', None), ('quiz__isnull', False)), _connector='OR'), name='assignment_item_names_one_thing'), models.CheckConstraint(condition=models.Q(('weight__gt', 0)), name='assignment_item_weight_positive')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizAccommodation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('time_factor', models.FloatField(default=1.0)),
                        ('closes_at', models.DateTimeField(blank=True, null=True)),
                        ('extra_attempts', models.PositiveSmallIntegerField(default=0, help_text="Attempts beyond the quiz's own (a reopen gives one).")),
                        ('granted_at', models.DateTimeField(auto_now=True)),
                        ('granted_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('quiz', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='accommodations', to='teaching.quiz')),
                    ],
                    options={
                        'db_table': 'quiz_quizaccommodation',
                        'constraints': [models.UniqueConstraint(fields=('quiz', 'learner'), name='quiz_accommodation_once'), models.CheckConstraint(condition=models.Q(('time_factor__gte', 1)), name='quiz_time_factor_at_least_one')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizAttempt',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('number', models.PositiveSmallIntegerField()),
                        ('preview', models.BooleanField(default=False)),
                        ('seed', models.CharField(max_length=32)),
                        ('items', models.JSONField(default=list)),
                        ('answers', models.JSONField(default=dict)),
                        ('state', models.CharField(choices=[('in_progress', 'In Progress'), ('submitted', 'Submitted')], default='in_progress', max_length=12)),
                        ('started_at', models.DateTimeField()),
                        ('deadline', models.DateTimeField()),
                        ('submitted_at', models.DateTimeField(blank=True, null=True)),
                        ('submitted_by', models.CharField(blank=True, help_text='learner, deadline or instructor', max_length=12)),
                        ('points', models.FloatField(blank=True, null=True)),
                        ('possible', models.FloatField(blank=True, null=True)),
                        ('score', models.FloatField(blank=True, help_text='points / possible', null=True)),
                        ('results', models.JSONField(blank=True, default=list, help_text='Per item: its fraction right (0-1).')),
                        ('saves', models.PositiveIntegerField(default=0)),
                        ('code_waiting', models.BooleanField(default=False, help_text='Saved code not yet sent to the grader: it goes when the feedback policy lets its checks show (quizzes.code).')),
                        ('flags', models.JSONField(blank=True, default=list, help_text='Question numbers flagged for review.')),
                        ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('quiz', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='attempts', to='teaching.quiz')),
                    ],
                    options={
                        'db_table': 'quiz_quizattempt',
                        'ordering': ['quiz', 'learner', 'number'],
                        'indexes': [models.Index(condition=models.Q(('state', 'in_progress')), fields=['deadline'], name='quiz_attempt_open_deadline'), models.Index(condition=models.Q(('code_waiting', True)), fields=['quiz'], name='quiz_attempt_code_waiting')],
                        'constraints': [models.UniqueConstraint(fields=('quiz', 'learner', 'preview', 'number'), name='quiz_attempt_number_once'), models.UniqueConstraint(condition=models.Q(('state', 'in_progress')), fields=('quiz', 'learner'), name='quiz_one_attempt_in_progress')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizCodeAnswer',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('item', models.PositiveSmallIntegerField(help_text="The question's number.")),
                        ('refused', models.CharField(blank=True, max_length=300)),
                        ('fraction', models.FloatField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('attempt', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='code_answers', to='teaching.quizattempt')),
                        ('submission', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='grader.submission')),
                    ],
                    options={
                        'db_table': 'quiz_quizcodeanswer',
                        'ordering': ['attempt', 'item'],
                        'constraints': [models.UniqueConstraint(fields=('attempt', 'item'), name='quiz_code_answer_once')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizItemOverride',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('item', models.PositiveSmallIntegerField(help_text="The question's number.")),
                        ('fraction', models.FloatField(help_text="Its share of the question's points, 0-1.")),
                        ('comment', models.TextField()),
                        ('set_at', models.DateTimeField(auto_now=True)),
                        ('attempt', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='overrides', to='teaching.quizattempt')),
                        ('set_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_quizitemoverride',
                        'ordering': ['attempt', 'item'],
                        'constraints': [models.UniqueConstraint(fields=('attempt', 'item'), name='quiz_item_override_once'), models.CheckConstraint(condition=models.Q(('fraction__gte', 0), ('fraction__lte', 1)), name='quiz_item_override_fraction')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizQuestionChange',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('ref', models.CharField(help_text='The question: q:, t:, b: or x:', max_length=100)),
                        ('action', models.CharField(choices=[('key', 'Change the key'), ('tolerance', 'Change the tolerance'), ('full_credit', 'Full credit for everyone'), ('drop', 'Drop the question')], max_length=12)),
                        ('answer', models.JSONField(blank=True, help_text='key: the right option (its index as stored) or the number.', null=True)),
                        ('tolerance_absolute', models.FloatField(blank=True, null=True)),
                        ('tolerance_relative', models.FloatField(blank=True, null=True)),
                        ('comment', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now=True)),
                        ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('quiz', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='question_changes', to='teaching.quiz')),
                    ],
                    options={
                        'db_table': 'quiz_quizquestionchange',
                        'ordering': ['quiz', 'ref'],
                        'constraints': [models.UniqueConstraint(fields=('quiz', 'ref'), name='quiz_question_change_once')],
                    },
                ),
                migrations.CreateModel(
                    name='QuizRegrade',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('what', models.CharField(blank=True, help_text='What changed: empty for a plain regrade, else the question and its change.', max_length=300)),
                        ('total', models.PositiveIntegerField(default=0)),
                        ('changed', models.PositiveIntegerField(default=0)),
                        ('quiz', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='regrades', to='teaching.quiz')),
                        ('requested_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_quizregrade',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='QuizRegradeResult',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('old_points', models.FloatField(null=True)),
                        ('old_score', models.FloatField(null=True)),
                        ('old_results', models.JSONField(default=list)),
                        ('new_points', models.FloatField(null=True)),
                        ('new_score', models.FloatField(null=True)),
                        ('new_results', models.JSONField(default=list)),
                        ('changed', models.BooleanField(default=False)),
                        ('attempt', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.quizattempt')),
                        ('regrade', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='results', to='teaching.quizregrade')),
                    ],
                    options={
                        'db_table': 'quiz_quizregraderesult',
                        'ordering': ['pk'],
                    },
                ),
                migrations.CreateModel(
                    name='QuizSlot',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('order', models.PositiveSmallIntegerField(default=0)),
                        ('points', models.FloatField(default=1.0)),
                        ('draw', models.PositiveSmallIntegerField(default=1)),
                        ('pool', models.JSONField(default=dict)),
                        ('quiz', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='slots', to='teaching.quiz')),
                    ],
                    options={
                        'db_table': 'quiz_quizslot',
                        'ordering': ['quiz', 'order', 'id'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('points__gt', 0)), name='quiz_slot_points_positive'), models.CheckConstraint(condition=models.Q(('draw__gte', 1)), name='quiz_slot_draws')],
                    },
                ),
                migrations.CreateModel(
                    name='ScoreOverride',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('score', models.FloatField()),
                        ('reason', models.TextField()),
                        ('set_at', models.DateTimeField(auto_now=True)),
                        ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='overrides', to='teaching.assignmentitem')),
                        ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='overrides', to=settings.AUTH_USER_MODEL)),
                        ('set_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_scoreoverride',
                        'constraints': [models.UniqueConstraint(fields=('item', 'learner'), name='one_override_per_item_and_learner'), models.CheckConstraint(condition=models.Q(('score__gte', 0), ('score__lte', 1)), name='override_score_in_unit_interval')],
                    },
                ),
                migrations.CreateModel(
                    name='AssignmentExtension',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('due_at', models.DateTimeField()),
                        ('granted_at', models.DateTimeField(auto_now=True)),
                        ('assignment', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='extensions', to='teaching.assignment')),
                        ('granted_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('learner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='extensions', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'quiz_assignmentextension',
                        'constraints': [models.UniqueConstraint(fields=('assignment', 'learner'), name='one_extension_per_learner')],
                    },
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
