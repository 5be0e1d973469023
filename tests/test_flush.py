"""The suite's flush between transactional tests (tests/conftest.py) empties
every table, as Django's TRUNCATE did."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_foreign_key_is_deferrable():
    """A DELETE per table, in any order, passes its foreign keys only if they
    are checked at the flush's commit."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint "
            "WHERE contype = 'f' AND NOT (condeferrable AND condeferred) "
            "AND connamespace = 'public'::regnamespace"
        )
        assert cursor.fetchall() == []
        cursor.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' "
            "AND connamespace = 'public'::regnamespace"
        )
        assert cursor.fetchone()[0] > 50  # the check above looked at them


def test_a_flush_empties_every_table(make_user, block_exercise):
    from grader.models import Submission

    user = make_user("flushed")
    Submission.objects.create(user=user, exercise=block_exercise, code="x = 1", seed=1)
    tables = connection.introspection.django_table_names(only_existing=True)
    assert "grader_submission" in tables

    call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=True)

    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    assert {table: n for table, n in counts.items() if n} == {}
    assert len(counts) > 50
