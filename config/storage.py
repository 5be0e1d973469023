"""Static files as production serves them: hashed names and gzip copies.

`collectstatic` writes each file under a content-hashed name (cached for a
year by browsers) plus a .gz copy that WhiteNoise sends to clients that
accept gzip (the editor bundle: 467 KB -> about 150 KB).
"""

from __future__ import annotations

from whitenoise.compress import Compressor
from whitenoise.storage import CompressedManifestStaticFilesStorage


class CompressedManifestStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's compressed manifest storage that still renders pages
    before `collectstatic` has run (a fresh checkout, DEBUG=0 tools): with no
    manifest, `{% static %}` gives the plain name instead of a 500."""

    def stored_name(self, name: str) -> str:
        if not self.hashed_files:
            return name
        return super().stored_name(name)

    def create_compressor(self, **kwargs) -> Compressor:
        # gzip only, whatever is installed: the service's requirements bring
        # no brotli, and the test tools' copy (a load tester's dependency)
        # made each collectstatic 24 s instead of 2 s, and the benchmarks
        # serve what production does not.
        return Compressor(**{**kwargs, "use_brotli": False})
