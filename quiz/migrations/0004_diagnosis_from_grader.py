# Diagnosis is course content: it moves from the grader app to quiz without
# touching the database. Its tables keep their names (grader_diagnosis and
# grader_diagnosis_lessons); grader 0005 drops it from grader's state.

from django.db import migrations, models


def _move_content_type(apps, from_label: str, to_label: str) -> None:
    """Relabel Diagnosis' content type, so its permissions and admin log follow."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    moving = ContentType.objects.filter(app_label=from_label, model="diagnosis").first()
    if moving is None:
        return  # a fresh database: post_migrate creates the content type
    # One that post_migrate made meanwhile (a partial migrate) has no history;
    # the moving one holds the permissions and log entries, so it stays.
    ContentType.objects.filter(app_label=to_label, model="diagnosis").delete()
    moving.app_label = to_label
    moving.save(update_fields=["app_label"])


def forwards(apps, schema_editor):
    _move_content_type(apps, "grader", "quiz")


def backwards(apps, schema_editor):
    _move_content_type(apps, "quiz", "grader")


class Migration(migrations.Migration):

    dependencies = [
        ('quiz', '0003_progress_cohorts_audit_figures'),
        ('contenttypes', '0002_remove_content_type_name'),
        # So a deleted duplicate content type takes its permissions and
        # log entries' links along (the historical models must know them).
        ('auth', '0012_alter_user_first_name_max_length'),
        ('admin', '0003_logentry_add_action_flag_choices'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Diagnosis',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('slug', models.SlugField(max_length=80, unique=True)),
                        ('summary', models.CharField(blank=True, max_length=300)),
                        ('lessons', models.ManyToManyField(blank=True, related_name='diagnoses', to='quiz.lesson')),
                    ],
                    options={
                        'verbose_name_plural': 'diagnoses',
                        'db_table': 'grader_diagnosis',
                        'ordering': ['slug'],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
