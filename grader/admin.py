from django.contrib import admin

from grader.models import Exercise


@admin.register(Exercise)
class ExerciseAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "lesson", "harness", "published", "updated_at"]
    list_filter = ["published", "harness"]
    search_fields = ["slug", "title", "prompt"]
    autocomplete_fields = ["lesson"]
    fieldsets = [
        (None, {"fields": ["slug", "title", "lesson", "published"]}),
        ("Grading", {"fields": ["harness", "entry_point", "signature"]}),
        ("Learner view", {"fields": ["prompt", "starter"]}),
        ("Answers", {"fields": ["solution", "wrong_solutions"]}),
    ]
