"""Jupyter: `%load_ext course`, then `%%check SLUG` and `%%submit SLUG` cells.

The cell's text is the code (it is checked or submitted, not run in the
kernel). The verdict renders as HTML, in the submission page's layout; a
problem (not logged in, unknown slug, server down) is one line, never a
traceback. Log in first with `course login URL` in a terminal (or `!course
login URL --username NAME --password-stdin` from a cell).
"""

from __future__ import annotations

import html

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.display import HTML, display

from course import actions, render, store
from course.errors import CourseError


def _slug(line: str, magic: str) -> str:
    words = line.split()
    if len(words) != 1:
        raise CourseError(
            f"name one exercise: %%{magic} SLUG (e.g. %%{magic} tie-weights)"
        )
    return words[0]


def _problem(exc: CourseError) -> HTML:
    return HTML(
        '<div class="course-verdict course-error" role="alert">'
        f"<strong>course:</strong> {html.escape(str(exc))}</div>"
    )


@magics_class
class CourseMagics(Magics):
    @cell_magic
    def check(self, line: str, cell: str):
        """Run the exercise's visible cases on this cell's code, locally."""
        try:
            slug = _slug(line, "check")
            verdict = actions.check(slug, cell)
        except CourseError as exc:
            display(_problem(exc))
            return
        display(
            HTML(
                render.html_verdict(
                    verdict, slug=slug, diagnoses=store.diagnoses_load(), local=True
                )
            )
        )

    @cell_magic
    def submit(self, line: str, cell: str):
        """Submit this cell's code and show the server's verdict when it lands."""
        handle = display(HTML("<p>Submitting…</p>"), display_id=True)

        def progress(submission: dict) -> None:
            status = html.escape(str(submission.get("status", "")))
            position = submission.get("queue_position")
            where = f", position {int(position)} among yours" if position else ""
            handle.update(HTML(f"<p>Grading: {status}{where}…</p>"))

        try:
            slug = _slug(line, "submit")
            submission = actions.submit(slug, cell, progress=progress)
        except CourseError as exc:
            handle.update(_problem(exc))
            return
        handle.update(
            HTML(
                render.html_verdict(
                    submission,
                    slug=slug,
                    diagnoses=store.diagnoses_load(),
                    local=False,
                    review_url=submission.get("html_url") or "",
                )
            )
        )
