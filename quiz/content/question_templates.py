"""Question templates: content/quiz-templates/<slug>.yaml <-> QuestionTemplate.

Read and checked before load_content's transaction (a bad file stops the
load with its path and reason), stored inside it once lessons and
diagnoses exist, and written back by export_content.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from grading_engine.quiz_bank.variants import TemplateInvalid, check

from quiz.content.bank_loading import bank_rows_load
from quiz.content.models import QuestionTemplate
from quiz.content.tree import TEMPLATE_DIR, ContentError, ContentProblem


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
    bank_rows_load(
        records,
        relative,
        note,
        model=QuestionTemplate,
        label="template",
        values=lambda spec: {
            "title": str(spec["title"]).strip(),
            "kind": spec["kind"],
            "spec": spec,
        },
        line=0,
    )


def template_export_files() -> dict[str, str]:
    """{quiz-templates/<slug>.yaml: text} for every stored template."""
    return {
        f"{TEMPLATE_DIR}/{t.slug}.yaml": yaml.safe_dump(
            t.spec, sort_keys=False, allow_unicode=True, width=80
        )
        for t in QuestionTemplate.objects.order_by("slug")
    }
