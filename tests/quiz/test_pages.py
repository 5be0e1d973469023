"""Reading pages render the loaded content."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quiz.content.loader import content_load

pytestmark = pytest.mark.django_db


def test_home_lists_sections_with_lesson_counts(client, content_tree):
    content_load(root=content_tree.root)
    html = client.get(reverse("home")).content.decode()
    assert "1. Basics" in html and "2 lessons" in html
    assert "2. Advanced" in html and "1 lesson<" in html


def test_a_lesson_page_renders_its_answer_follow_ups_and_self_checks(
    client, content_tree
):
    content_load(root=content_tree.root)
    response = client.get(reverse("lesson", args=["first-lesson"]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "What is first-lesson?" in html
    assert "<h2>What you need to know</h2>" in html
    assert "Follow-up questions to expect" in html and "Because." in html
    assert "Pick one." in html


def test_an_unknown_lesson_is_a_404(client):
    assert client.get(reverse("lesson", args=["nope"])).status_code == 404


def test_home_renders_with_a_constant_number_of_queries(
    client, content_tree, django_assert_max_num_queries
):
    content_load(root=content_tree.root)
    with django_assert_max_num_queries(4):
        client.get(reverse("home"))


def test_healthz_reports_database_and_broker(client):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok"}


def test_the_sandbox_health_view_lists_protections_for_admins(client, admin_user):
    client.force_login(admin_user)
    body = client.get(reverse("healthz-sandbox")).json()
    assert body["status"] == "ok" and body["missing_required"] == []
    assert body["required"]["seccomp"] is True
    assert body["required"]["network_isolation"] is True


def test_the_sandbox_health_view_is_refused_to_learners(client, learner):
    client.force_login(learner)
    assert client.get(reverse("healthz-sandbox")).status_code == 403
