"""The leak detector behind the suite's autouse fixture sees each kind of leak."""

from __future__ import annotations

import pytest
import torch

from tests.torch_state import describe_leak, restore_torch_state, torch_state


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (
            lambda: torch.set_num_threads(2 if torch.get_num_threads() == 1 else 1),
            "num_threads",
        ),
        (lambda: torch.set_default_dtype(torch.float64), "default_dtype"),
        (lambda: torch.use_deterministic_algorithms(True), "deterministic_algorithms"),
        (lambda: torch.set_grad_enabled(False), "grad_enabled"),
        (lambda: torch.set_printoptions(precision=2), "print_options"),
        (lambda: torch.manual_seed(1234), "global_seed"),
        (lambda: torch.randn(3), "global_rng"),
    ],
)
def test_each_process_wide_change_is_named_and_undone(change, name):
    before, rng = torch_state(), torch.random.get_rng_state()
    try:
        change()
        leak = describe_leak(before, torch_state())
    finally:
        restore_torch_state(before, rng)
    assert leak.startswith(f"{name}:")
    assert describe_leak(before, torch_state()) == ""


def test_a_private_generator_is_no_leak():
    before = torch_state()
    torch.randn(3, generator=torch.Generator().manual_seed(0))
    with torch.random.fork_rng():
        torch.manual_seed(0)
        torch.randn(3)
    assert describe_leak(before, torch_state()) == ""


def test_outside_the_lessons_a_draw_is_allowed_but_a_reseed_is_not():
    before, rng = torch_state(strict_rng=False), torch.random.get_rng_state()
    try:
        torch.randn(3)
        assert describe_leak(before, torch_state(strict_rng=False)) == ""
        torch.manual_seed(0)
        leak = describe_leak(before, torch_state(strict_rng=False))
    finally:
        restore_torch_state(before, rng)
    assert leak.startswith("global_seed:")
    assert torch.initial_seed() == before["global_seed"]
