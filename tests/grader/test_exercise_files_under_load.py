"""The exhaustive tier of test_exercise_files: every grade again, on a busy
machine (a CPU hog on every core the whole time), each held to its
production budget measured under that load. The default tier proves the
same structurally (CPU-time budgets, and every grade within half of its
budget); this repeats every grade under hogs to show it case by case.
Run with `make test-exhaustive`.
"""

from __future__ import annotations

import pytest

from tests.grader.test_exercise_files import (  # noqa: F401 (collected here too)
    SANDBOX,
    test_reference_solution_passes,
    test_right_solution_passes,
    test_wrong_solution_fails_with_its_diagnosis,
)

pytestmark = [pytest.mark.exhaustive, pytest.mark.xdist_group("exercise-files-load")]


@pytest.fixture(scope="module")
def runner():
    if not SANDBOX:
        pytest.skip("needs bubblewrap: a plain child counts wall time")
    from grading_engine.sandbox import WarmPool

    from tests.cpu_load import cpu_hogs

    with cpu_hogs(), WarmPool(1) as pool:
        yield pool
