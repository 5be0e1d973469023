"""A process collects garbage rarely while it starts, then at the usual pace."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from grading_engine import gc_policy

from tests.conftest import PROJECT_ROOT

PROBE = """
import gc, json, sys
import config
starting = gc.get_threshold()
import config.wsgi
print(json.dumps({"starting": starting, "started": gc.get_threshold(),
                  "frozen": gc.get_freeze_count()}))
"""


def test_a_web_process_starts_with_rare_collections_then_freezes_what_it_loaded():
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert tuple(seen["starting"]) == gc_policy.STARTING
    assert tuple(seen["started"]) == gc_policy.USUAL == (700, 10, 10)
    # Django and the apps' objects: frozen, never walked by a collection again.
    assert seen["frozen"] > 50_000
