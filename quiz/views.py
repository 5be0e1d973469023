from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render

from quiz.accounts import user_signup
from quiz.forms import SignupForm
from quiz.learner_views import lesson_page
from quiz.models import Lesson
from quiz.progress import home_progress, lesson_read_record
from quiz.selectors import lesson_get, section_list


def home(request):
    view = home_progress(user=request.user, sections=section_list())
    return render(request, "quiz/home.html", {"home": view})


def lesson_detail(request, slug: str):
    try:
        lesson = lesson_get(slug=slug)
    except Lesson.DoesNotExist:
        raise Http404("No such lesson.") from None
    if request.user.is_authenticated:
        lesson_read_record(user=request.user, lesson=lesson)
    return lesson_page(request, lesson)


def signup(request):
    if request.user.is_authenticated:
        return redirect("home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_signup(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                email=form.cleaned_data.get("email", ""),
            )
        except ValidationError as refused:
            form.add_error("username", refused)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "registration/signup.html", {"form": form})
