"""The benchmarks print each figure beside the README's: the two must name
the same rows, or a figure is printed beside nothing (or a README figure is
never measured again)."""

from __future__ import annotations

import ast
import sys

import pytest

from tests.conftest import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "benchmarks"))
import readme_figures  # noqa: E402


def test_the_readme_table_and_the_benchmarks_name_the_same_figures():
    table = readme_figures.readme_table()
    assert set(table) == set(readme_figures.FIGURES)
    assert all(table.values()), "every row states a measured figure"


def test_every_figure_a_benchmark_shows_is_one_of_them():
    strings = {
        node.value
        for path in [
            *(PROJECT_ROOT / "benchmarks").glob("*_bench.py"),
            PROJECT_ROOT / "benchmarks" / "deadline_drill.py",
        ]
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    unmeasured = [f for f in readme_figures.FIGURES if f not in strings]
    assert unmeasured == []  # each is printed by some benchmark
    with pytest.raises(ValueError, match="not one of the README's figures"):
        readme_figures.show("a figure nobody measures", "1 ms")


def test_a_gate_that_fails_fails_the_benchmark(capsys):
    gates = readme_figures.Gates()
    gates.check(True, "extra PSS 14 MB <= 100 MB")
    gates.finish()  # all held: no exit
    gates.check(False, "cold / warm 12.7x >= 20x")
    with pytest.raises(SystemExit) as exit_:
        gates.finish()
    assert exit_.value.code == 1
    assert "REGRESSION: cold / warm 12.7x >= 20x" in capsys.readouterr().err
