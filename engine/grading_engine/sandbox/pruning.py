"""Cut the parent's half out of the engine modules staged into the sandbox.

An exercise module holds both sides of a grade: `run_case` (the child) and
`check_case` with the reference answer it compares against (the parent).
The sandbox needs only the first, so the stage keeps, per module, the
top-level statements the child's entry points reach by name, and drops the
rest: `check_case`, `reference`, the diagnoses, and the imports only they
used. What remains is what a learner could read or call from inside anyway.

Reachability is by name: the module-level names each kept statement uses
(every branch, defaults, decorators, annotations; function bodies resolved
with `symtable`), so it keeps a little more than it must and never less,
unless a module looks names up dynamically (none does; the staged exercises
are graded through the sandbox in tests/grader/test_exercise_files.py).
"""

from __future__ import annotations

import ast
import os
import symtable

# What grading_engine.harness.child uses of an exercise module.
EXERCISE_ROOTS = ("run_case", "preload", "SLUG", "ENTRY_POINT", "SIGNATURE")
# The decorator of a server-computed value (grading_engine.expected).
EXPECTATION = "expectation"
_EMPTY = None  # the symbol table of a cut-out body: it uses nothing
_STUB_DOC = "Computed by the server: the learner edition reads its shipped values."
PRUNED_PACKAGES = ("exercises", "checks")
KEPT_WHOLE = ("__init__.py", "base.py")


def _bound(stmt: ast.stmt) -> set[str]:
    """Top-level names a statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {
            node.id
            for target in targets
            for node in ast.walk(target)
            if isinstance(node, ast.Name)
        }
    return set()


def _names(*nodes) -> set[str]:
    return {
        found.id
        for node in nodes
        if node is not None
        for found in ast.walk(node)
        if isinstance(found, ast.Name)
    }


def _globals_of(table: symtable.SymbolTable | None) -> set[str]:
    """Module-level names a function or class body (nested ones too) uses."""
    if table is None:
        return set()
    names = {s.get_name() for s in table.get_symbols() if s.is_global()}
    for child in table.get_children():
        names |= _globals_of(child)
    return names


def is_expectation_def(stmt: ast.stmt) -> bool:
    """A def decorated `@expectation` (grading_engine.expected)."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for decorator in stmt.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id == EXPECTATION:
            return True
    return False


def _used(stmt: ast.stmt, scopes: dict, *, stubs: bool = False) -> set[str]:
    """Module-level names a statement needs when it runs or is called.

    A def's body is resolved with `symtable`, so a local that shares a
    module-level name (`mlp = model.mlp` next to `def mlp`) does not pull
    that name in; what runs at definition (decorators, defaults,
    annotations, bases) is taken whole. With `stubs`, an expectation's body
    counts for nothing: it is cut out (see `_stub`).
    """
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        table = scopes.get((stmt.name, stmt.lineno))
        if stubs and is_expectation_def(stmt):
            table = _EMPTY
        elif table is None:
            return _names(stmt)  # not found: keep everything it names
        if isinstance(stmt, ast.ClassDef):
            evaluated = _names(*stmt.decorator_list, *stmt.bases, *stmt.keywords)
        else:
            args = stmt.args
            evaluated = _names(
                *stmt.decorator_list,
                *args.defaults,
                *args.kw_defaults,
                stmt.returns,
                *(a.annotation for a in (*args.posonlyargs, *args.args)),
                *(
                    a.annotation
                    for a in (*args.kwonlyargs, args.vararg, args.kwarg)
                    if a
                ),
            )
        return evaluated | _globals_of(table)
    return _names(stmt)


def _always_kept(stmt: ast.stmt) -> bool:
    """Docstrings, __future__ and any statement that is not a definition."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return not _bound(stmt)


def _stub(stmt: ast.FunctionDef) -> ast.FunctionDef:
    """An expectation with its body cut out: the decorator returns shipped
    values before the body would run; called outside a bundle, it raises."""
    message = f"{stmt.name} is computed by the course server only"
    body = [
        ast.Expr(ast.Constant(_STUB_DOC)),
        ast.Raise(
            ast.Call(ast.Name("LookupError", ast.Load()), [ast.Constant(message)], []),
            None,
        ),
    ]
    stub = type(stmt)(**{**vars(stmt), "body": body})
    return ast.copy_location(stub, stmt)


def prune(
    source: str, roots: set[str], filename: str = "<staged>", *, stubs: bool = False
) -> ast.Module:
    """The statements of `source` that `roots` reach, imports narrowed.

    With `stubs`, each `@expectation` def that is reached keeps its name,
    signature and decorator, but not its body, nor what only its body used.
    """
    tree = ast.parse(source, filename=filename)
    scopes = {
        (table.get_name(), table.get_lineno()): table
        for table in symtable.symtable(source, filename, "exec").get_children()
    }
    body = tree.body
    binders: dict[str, list[int]] = {}
    for index, stmt in enumerate(body):
        for name in _bound(stmt):
            binders.setdefault(name, []).append(index)
    needed: set[str] = set()
    todo = set(roots)
    for stmt in body:
        if _always_kept(stmt):
            todo |= _used(stmt, scopes, stubs=stubs)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        for index in binders.get(name, ()):
            stmt = body[index]
            if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
                todo |= _used(stmt, scopes, stubs=stubs) - needed
    kept = []
    for stmt in body:
        if _always_kept(stmt):
            kept.append(stmt)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [
                a for a in stmt.names if (a.asname or a.name).split(".")[0] in needed
            ]
            if names:
                narrowed = type(stmt)(**{**vars(stmt), "names": names})
                kept.append(ast.copy_location(narrowed, stmt))
        elif _bound(stmt) & needed:
            kept.append(_stub(stmt) if stubs and is_expectation_def(stmt) else stmt)
    return ast.Module(body=kept, type_ignores=[])


def _imports_from(tree: ast.Module, package: str) -> list[tuple[str, set[str]]]:
    """(module, names) for every `from grading_engine.<package>.<module> import ...`
    (or deeper: `exercises.kit.cases`), inside functions too (grading.py
    imports shared_checks where it judges)."""
    found = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
            parts = stmt.module.split(".")
            if len(parts) >= 3 and parts[0] == "grading_engine" and parts[1] == package:
                module = "/".join(parts[1:]) + ".py"
                found.append((module, {a.name for a in stmt.names}))
    return found


def prune_stage(
    package_dir: str,
    *,
    skip: tuple[str, ...] = (),
    exercise_roots: tuple[str, ...] = EXERCISE_ROOTS,
    stubs: bool = False,
    subpackages: tuple[str, ...] = (),
) -> list[str]:
    """Prune the staged `grading_engine` package in place; returns the pruned files.

    Roots: an exercise's entry points (`exercise_roots`), plus every name
    another staged module (pruned or whole) imports from a pruned one, until
    nothing changes. `stubs`: see `prune` (the learner edition's judge side).
    `subpackages` (e.g. "exercises/kit") are pruned too, not kept whole.
    """
    trees: dict[str, str] = {}  # relative path -> source
    for package in (*PRUNED_PACKAGES, *subpackages):
        directory = os.path.join(package_dir, package)
        for name in sorted(os.listdir(directory)):
            relative = f"{package}/{name}"
            if name.endswith(".py") and name not in KEPT_WHOLE and relative not in skip:
                with open(os.path.join(package_dir, relative)) as f:
                    trees[relative] = f.read()
    roots = {
        relative: set(exercise_roots) if relative.startswith("exercises/") else set()
        for relative in trees
    }
    whole = []  # staged modules kept as they are (not the skipped ones) import too
    for directory, _, files in os.walk(package_dir):
        for name in files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, package_dir)
            if name.endswith(".py") and relative not in trees and relative not in skip:
                with open(path) as f:
                    whole.append(ast.parse(f.read(), filename=relative))
    for tree in whole:
        for package in PRUNED_PACKAGES:
            for module, names in _imports_from(tree, package):
                roots.setdefault(module, set()).update(names)
    pruned: dict[str, ast.Module] = {}
    changed = True
    while changed:
        changed = False
        for relative, source in trees.items():
            pruned[relative] = prune(source, roots[relative], relative, stubs=stubs)
            for package in PRUNED_PACKAGES:
                for module, names in _imports_from(pruned[relative], package):
                    if module in roots and not names <= roots[module]:
                        roots[module] |= names
                        changed = True
    for relative, tree in pruned.items():
        with open(os.path.join(package_dir, relative), "w") as f:
            f.write(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
    return sorted(pruned)
