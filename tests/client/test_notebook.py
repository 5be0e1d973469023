"""`%load_ext course` and the `%%check` / `%%submit` cell magics, in a real
kernel run by nbclient, against gunicorn and a Celery worker."""

from __future__ import annotations

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from tests.client.conftest import course_login
from tests.conftest import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("client")]

SPEC = yaml.safe_load(
    (PROJECT_ROOT / "content/exercises/block-param-count.yaml").read_text()
)
WRONG = SPEC["wrong_solutions"][0]


def html_of(cell) -> str:
    """The cell's last HTML output (a display the magic updated in place)."""
    shown = [
        out["data"]["text/html"]
        for out in cell.outputs
        if "text/html" in out.get("data", {})
    ]
    assert shown, cell.outputs
    assert not [out for out in cell.outputs if out.get("output_type") == "error"]
    return shown[-1]


def test_check_and_submit_from_a_notebook(course_server, course_home):
    home = course_home
    user = course_server.user("notebook")
    login = course_login(home, course_server.url, user)
    assert login.returncode == 0, login.stderr
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            f"import os\nos.environ['COURSE_CONFIG_DIR'] = {str(home / 'config')!r}\n"
            "%load_ext course"
        ),
        nbformat.v4.new_code_cell("%%check block-param-count\n" + SPEC["solution"]),
        nbformat.v4.new_code_cell("%%check block-param-count\n" + WRONG["code"]),
        nbformat.v4.new_code_cell("%%submit block-param-count\n" + SPEC["solution"]),
        nbformat.v4.new_code_cell("%%check no-such-exercise\npass"),
        nbformat.v4.new_code_cell("%%submit\npass"),
    ]
    NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        resources={"metadata": {"path": str(home)}},
    ).execute()
    _, right, wrong, submitted, unknown, no_slug = notebook.cells

    shown = html_of(right)
    assert 'data-status="passed"' in shown and "<strong>PASS</strong>" in shown
    assert "local check of the visible cases" in shown
    assert "Hidden cases run on the server when you submit" in shown
    assert "<strong>FAIL</strong>" not in shown

    shown = html_of(wrong)
    assert 'data-status="failed"' in shown and "<strong>FAIL</strong>" in shown
    assert WRONG["diagnosis"] in shown

    shown = html_of(submitted)
    assert 'data-status="passed"' in shown and "(hidden case)" in shown
    assert f'href="{course_server.url}/submissions/' in shown

    shown = html_of(unknown)
    assert "course-error" in shown and "no exercise named" in shown
    assert "Traceback" not in str(unknown.outputs)
    assert "%%submit SLUG" in html_of(no_slug)
