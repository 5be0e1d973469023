"""Question templates: content/quiz-templates/<slug>.yaml <-> QuestionTemplate.

Read and checked before load_content's transaction (a bad file stops the
load with its path and reason), stored inside it once lessons and
diagnoses exist, and written back by export_content.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from grading_engine.quiz_bank.variants import TemplateInvalid, check

from quiz.content.models import Diagnosis, Lesson, QuestionTemplate, Section
from quiz.content.tree import TEMPLATE_DIR, ContentError, ContentProblem
from quiz.core.upsert import upsert


def read_templates(root: Path) -> list[tuple[Path, dict]]:
    """Every template file under `root`, parsed and checked, or ContentError."""
    folder = Path(root) / TEMPLATE_DIR
    records, problems, seen = [], [], {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            spec = check(yaml.safe_load(path.read_text(encoding="utf-8")))
            if spec["slug"] != path.stem:
                raise TemplateInvalid(f"slug {spec['slug']!r} is not the file's name")
            if spec["slug"] in seen:
                raise TemplateInvalid(
                    f"slug {spec['slug']!r} also in {seen[spec['slug']]}"
                )
        except (OSError, UnicodeDecodeError, yaml.YAMLError, TemplateInvalid) as exc:
            problems.append(ContentProblem(path, 0, str(exc)))
            continue
        seen[spec["slug"]] = path.name
        records.append((path, spec))
    if problems:
        raise ContentError(problems)
    return records


def load_templates(records: list[tuple[Path, dict]], relative, note) -> None:
    """Upsert each template; ContentError if it names a missing lesson or diagnosis.

    Called inside content_load's transaction, after lessons and diagnoses.
    """
    sections = {s.slug: s for s in Section.objects.all()}
    lessons = {le.slug: le for le in Lesson.objects.all()}
    diagnoses = set(Diagnosis.objects.values_list("slug", flat=True))
    problems = []
    for path, spec in records:
        missing = [s for s in spec.get("lessons") or [] if s not in lessons]
        missing += [] if spec["section"] in sections else [f"section {spec['section']}"]
        missing += [
            f"diagnosis {m['diagnosis']}"
            for m in spec.get("misconceptions") or []
            if m.get("diagnosis") and m["diagnosis"] not in diagnoses
        ]
        if missing:
            problems.append(ContentProblem(path, 0, f"no such {', '.join(missing)}"))
            continue
        outcome = upsert(
            QuestionTemplate,
            {"slug": spec["slug"]},
            {
                "title": str(spec["title"]).strip(),
                "section": sections[spec["section"]],
                "kind": spec["kind"],
                "spec": spec,
                "source_path": relative(path),
            },
        )
        template = QuestionTemplate.objects.get(slug=spec["slug"])
        wanted = {lessons[s].pk for s in spec.get("lessons") or []}
        if set(template.lessons.values_list("pk", flat=True)) != wanted:
            template.lessons.set(wanted)
            outcome = "updated" if outcome == "unchanged" else outcome
        note("template", relative(path), outcome)
    if problems:
        raise ContentError(problems)


def template_export_files() -> dict[str, str]:
    """{quiz-templates/<slug>.yaml: text} for every stored template."""
    return {
        f"{TEMPLATE_DIR}/{t.slug}.yaml": yaml.safe_dump(
            t.spec, sort_keys=False, allow_unicode=True, width=80
        )
        for t in QuestionTemplate.objects.order_by("slug")
    }
