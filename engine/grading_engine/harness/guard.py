"""Keep the grader's own code out of reach of the learner's imports.

The child imports the exercise harness (and through it the reference model
classes) before the learner's code runs. `sealed()` then takes every `grading_engine`
module out of `sys.modules` and puts a finder first on `sys.meta_path` that
refuses `grading_engine` and its submodules, so `import grading_engine.reference`,
`importlib.import_module("grading_engine.checks")` and
`sys.modules["grading_engine..."]` all fail: the learner must write the
function, not borrow the answer.

The harness keeps working: its functions hold their module globals, not
`sys.modules` entries. Removing the finder does not help either, because the
sandbox stage holds no answer code (grading_engine.sandbox.staging). This is not a
wall against introspecting the objects a case hands over (a model, a frame);
it closes the import paths.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.abc import MetaPathFinder
from types import ModuleType

PACKAGE = "grading_engine"
# The Django app of the same project, refused too: no sandbox has it, but a
# plain-subprocess runner (development) might find it on the path.
REFUSED = (PACKAGE, "grader")


def refusal(name: str) -> str:
    return f"{name} is not available to submissions: write the function yourself"


def _is_grader(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in REFUSED)


class RefuseGrader(MetaPathFinder):
    """Refuse to find `grading_engine` or any `grading_engine.*` module."""

    def find_spec(self, fullname, path=None, target=None):
        if isinstance(fullname, str) and _is_grader(fullname):
            raise ImportError(refusal(fullname), name=fullname)
        return None


class _Sealed(ModuleType):
    """What `sys.modules["grading_engine"]` holds once sealed: nothing to borrow."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(refusal(f"{PACKAGE}.{name}"))


@contextmanager
def sealed() -> Iterator[None]:
    """Hide every `grading_engine` module while the block runs, then put them back.

    Enter it after everything the job needs is imported: inside, an import
    of a `grading_engine` module fails, the grader's own included. Putting them back
    only matters in-process (tests); a child exits after its job.
    """
    hidden = {name: mod for name, mod in sys.modules.items() if _is_grader(name)}
    for name in hidden:
        del sys.modules[name]
    stub = _Sealed(PACKAGE, "the grader (not available to submissions)")
    stub.__path__ = []  # a package, so `import grading_engine.x` asks the finders
    sys.modules[PACKAGE] = stub
    finder = RefuseGrader()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in [name for name in sys.modules if _is_grader(name)]:
            del sys.modules[name]
        sys.modules.update(hidden)
