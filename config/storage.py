"""Static files as production serves them: hashed names and gzip copies.

`collectstatic` writes each file under a content-hashed name (cached for a
year by browsers) plus a .gz copy that WhiteNoise sends to clients that
accept gzip (the editor bundle: 467 KB -> about 150 KB).
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class CompressedManifestStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage that still renders pages
    before `collectstatic` has run (a fresh checkout, DEBUG=0 tools): with no
    manifest, `{% static %}` gives the plain name instead of a 500."""

    def stored_name(self, name: str) -> str:
        if not self.hashed_files:
            return name
        return super().stored_name(name)
