"""A verdict (the server's JSON, or a local check's) as text or HTML.

Both shapes carry the same checks (name, passed, message, expected, got,
diagnosis, hidden), so one renderer shows a local check and a submission
alike. Learner-controlled text is escaped: control characters for the
terminal (grading_engine.terminal), markup for the notebook.
"""

from __future__ import annotations

import html

from grading_engine.terminal import fenced, terminal_escape


def _summary(verdict: dict) -> str:
    checks = verdict.get("checks") or []
    passed = sum(1 for c in checks if c.get("passed"))
    status = verdict.get("status", "?")
    if status == "error":
        return "error: your code did not run to the end"
    return f"{status}, {passed} of {len(checks)} checks passed"


def mistakes(verdict: dict, diagnoses: dict[str, dict]) -> list[dict]:
    """Each diagnosis of a failed check once, in check order, with its hint."""
    seen: dict[str, dict] = {}
    for check in verdict.get("checks") or []:
        slug = check.get("diagnosis")
        if check.get("passed") or not isinstance(slug, str) or not slug:
            continue
        row = diagnoses.get(slug) or {}
        entry = seen.setdefault(
            slug,
            {
                "diagnosis": slug,
                "hint": row.get("summary") or "",
                "lessons": row.get("lessons") or [],
                "count": 0,
            },
        )
        entry["count"] += 1
    return list(seen.values())


def text(verdict: dict, *, slug: str, diagnoses: dict, local: bool) -> str:
    where = " (local check of the visible cases)" if local else ""
    lines = [f"{slug}: {_summary(verdict)}{where}"]
    for check in verdict.get("checks") or []:
        mark = "PASS" if check.get("passed") else "FAIL"
        hidden = " (hidden case)" if check.get("hidden") else ""
        tag = f"  [diagnosis: {check['diagnosis']}]" if check.get("diagnosis") else ""
        name = terminal_escape(str(check.get("name", "")))
        lines.append(f"  {mark} {name}{hidden}{tag}")
        if check.get("passed"):
            continue
        for line in terminal_escape(str(check.get("message", ""))).splitlines():
            lines.append(f"       {line}")
        for label in ("expected", "got"):
            if check.get(label) is not None:
                lines.append(f"       {label}: {terminal_escape(str(check[label]))}")
    found = mistakes(verdict, diagnoses)
    if found:
        lines.append("Likely mistake" + ("s:" if len(found) > 1 else ":"))
        for item in found:
            count = f" ({item['count']} checks)" if item["count"] > 1 else ""
            lines.append(f"  - {item['hint'] or item['diagnosis']}{count}")
            for lesson in item["lessons"]:
                lines.append(f"    review: {lesson.get('title')}  {lesson.get('url')}")
    if verdict.get("stdout"):
        lines.append("Your code printed (between the lines; not part of the verdict):")
        lines.append("  +--")
        lines.append(fenced(verdict["stdout"]))
        lines.append("  +-- end of your code's output")
    if verdict.get("stderr"):
        lines.append("Your code wrote to stderr:")
        lines.append(fenced(verdict["stderr"]))
    return "\n".join(lines)


_STYLE = (
    "<style>.course-verdict .pass strong{color:#1a7f37}"
    ".course-verdict .fail strong{color:#b42318}"
    ".course-verdict pre{white-space:pre-wrap;margin:.2em 0 .4em}"
    ".course-verdict .diagnosis-tag{font-size:.85em;border:1px solid;"
    "border-radius:3px;padding:0 .3em}"
    ".course-verdict .mistakes{border-left:3px solid #b42318;padding-left:.6em}</style>"
)


def html_verdict(
    verdict: dict, *, slug: str, diagnoses: dict, local: bool, review_url: str = ""
) -> str:
    """The submission page's results block (its classes and wording)."""
    e = html.escape
    status = e(str(verdict.get("status", "")))
    where = " · local check of the visible cases" if local else ""
    parts = [
        _STYLE,
        f'<div class="course-verdict" data-status="{status}">',
        f'<p>{e(slug)}: <strong class="status-{status}">{e(_summary(verdict))}'
        f"</strong>{e(where)}</p>",
    ]
    found = mistakes(verdict, diagnoses)
    if found:
        plural = "s" if len(found) > 1 else ""
        parts.append(
            f'<div class="mistakes" role="note"><p><strong>Likely mistake{plural}'
            "</strong></p><ul>"
        )
        for item in found:
            count = f" ({item['count']} checks)" if item["count"] > 1 else ""
            links = ", ".join(
                f'<a href="{e(str(lesson.get("url", "")))}">'
                f"{e(str(lesson.get('title', '')))}</a>"
                for lesson in item["lessons"]
            )
            review = f"<br>Review: {links}" if links else ""
            parts.append(
                f'<li class="diagnosis">{e(item["hint"] or item["diagnosis"])}'
                f"{e(count)}{review}</li>"
            )
        parts.append("</ul></div>")
    parts.append('<ul class="checks">')
    for check in verdict.get("checks") or []:
        ok = bool(check.get("passed"))
        hidden = " (hidden case)" if check.get("hidden") else ""
        tag = (
            ' <span class="diagnosis-tag" title="diagnosis">'
            f"{e(str(check['diagnosis']))}</span>"
            if check.get("diagnosis")
            else ""
        )
        item = (
            f'<li class="{"pass" if ok else "fail"}"><strong>{"PASS" if ok else "FAIL"}'
            f"</strong> {e(str(check.get('name', '')))}{hidden}{tag}"
        )
        if not ok:
            item += f"<pre>{e(str(check.get('message', '')))}</pre>"
            for label in ("expected", "got"):
                if check.get(label) is not None:
                    value = e(str(check[label]))
                    item += f"<div>{label.title()}: <code>{value}</code></div>"
        parts.append(item + "</li>")
    parts.append("</ul>")
    if verdict.get("stdout"):
        parts.append(f"<p>Your code printed</p><pre>{e(verdict['stdout'])}</pre>")
    if local:
        parts.append(
            "<p><em>Hidden cases run on the server when you submit "
            f"(<code>%%submit {e(slug)}</code>).</em></p>"
        )
    if review_url:
        parts.append(f'<p><a href="{e(review_url)}">Review this submission</a></p>')
    parts.append("</div>")
    return "".join(parts)
