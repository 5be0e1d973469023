from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from quiz.content.export import ExportError, content_export
from quiz.content.tree import ContentError


class Command(BaseCommand):
    help = (
        "Write sections, lessons and exercises from the database to content files "
        "(the format load_content reads), so admin edits can be committed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "path", nargs="?", default=None, help="Target folder (default: content/)."
        )
        parser.add_argument(
            "--source",
            default=None,
            help="Folder whose figures and other files are copied through "
            "(default: content/).",
        )

    def handle(self, *args, path=None, source=None, **options):
        root = Path(path) if path else settings.CONTENT_DIR
        source = Path(source) if source else settings.CONTENT_DIR
        try:
            report = content_export(root=root, source=source)
        except ExportError as exc:
            raise CommandError(f"nothing was exported: {exc}") from exc
        except ContentError as exc:
            count = len(exc.problems)
            raise CommandError(
                f"the database would export {count} invalid "
                f"file{'s' if count != 1 else ''}; nothing was written:\n"
                + "\n".join(f"  {p}" for p in exc.problems)
            ) from exc
        except OSError as exc:
            raise CommandError(f"cannot write to {root}: {exc}") from exc
        for relative in report.written:
            self.stdout.write(f"wrote    {relative}")
        for relative in report.copied:
            self.stdout.write(f"copied   {relative}")
        for relative in report.removed:
            self.stdout.write(self.style.WARNING(f"removed  {relative}"))
        self.stdout.write(
            self.style.SUCCESS(
                f"Exported to {root}: {len(report.written)} written, "
                f"{len(report.copied)} copied, {len(report.removed)} removed, "
                f"{len(report.unchanged)} unchanged."
            )
        )
