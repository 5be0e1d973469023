"""Package attributes imported on first use (PEP 562), for two packages.

`grading_engine.reference` must not import torch for its tokenizer command,
and `grading_engine.sandbox` must not load the parent-side runners inside the
sandbox it boots; both export names from their modules lazily through this.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable


def lazy_exports(
    package: str, exports: dict[str, Iterable[str]], namespace: dict
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: {module: names} on demand.

    A name found once is stored in the package's `namespace` (its globals), so
    later lookups never reach `__getattr__` again.
    """
    module_of = {name: module for module, names in exports.items() for name in names}

    def getattr_(name: str):
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(module_of))

    return getattr_, dir_
