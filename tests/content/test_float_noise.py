"""FloatNoise blurs what another CPU would round differently, and nothing else."""

from __future__ import annotations

import torch

from tests.content.float_noise import FloatNoise
from tests.content.test_doctests import EXACT_MARK, doctest_blocks, exact_block_lines


def _inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(8, 16, generator=g), torch.randn(16, 4, generator=g)


def test_it_moves_a_matmul_by_a_few_ulps():
    a, b = _inputs()
    plain = a @ b
    with FloatNoise():
        noisy = a @ b
    assert not torch.equal(plain, noisy)
    assert torch.allclose(plain, noisy, rtol=1e-5, atol=0)


def test_it_gives_the_same_answer_for_the_same_computation():
    a, b = _inputs()
    with FloatNoise():
        first, second = a @ b, a @ b
    assert torch.equal(first, second)


def test_it_leaves_exact_operations_whole_numbers_and_infinities_alone():
    a, _ = _inputs()
    with FloatNoise():
        assert torch.equal(a[2:5], a[2:5].clone())
        assert torch.equal(a + a, 2 * a)
        assert (a > 0).float().mean().item() == (a > 0).sum().item() / a.numel()
        ones = torch.ones(5)
        assert ones.sum().item() == 5.0
        big = torch.tensor([12.0], dtype=torch.float16).exp()
    assert torch.isinf(big).all()


def test_numpy_shakes_float32_to_the_bits_torch_would(monkeypatch):
    """The NumPy path for float32 results and the torch path give the same
    bits: whole numbers, infinities and NaN included, and a strided result
    (a transposed view); and they move the other values."""
    from tests.content import float_noise

    g = torch.Generator().manual_seed(1)
    values = torch.cat(
        [
            torch.randn(500, generator=g) * 1e3,
            torch.arange(-20.0, 20.0),
            torch.tensor([float("inf"), -float("inf"), float("nan"), 0.5, 2.5]),
        ]
    ).reshape(5, 109)
    bits = {}
    for numpy in (True, False):
        monkeypatch.setattr(float_noise, "NUMPY_FLOAT32", numpy)
        flat, strided = values.flatten().clone(), values.clone().t()
        FloatNoise()._shake(flat)
        FloatNoise()._shake(strided)
        bits[numpy] = [flat.view(torch.int32), strided.contiguous().view(torch.int32)]
    assert torch.equal(bits[True][0], bits[False][0])
    assert torch.equal(bits[True][1], bits[False][1])
    flat = values.flatten()
    whole = ~torch.isfinite(flat) | (flat == flat.round())
    assert torch.equal(bits[True][0] != flat.view(torch.int32), ~whole)


def test_it_flips_a_few_half_precision_results_by_one_ulp():
    x = torch.linspace(-4, 4, 20000).bfloat16()
    plain = torch.tanh(x)
    with FloatNoise(half_flip_rate=1 / 64):
        noisy = torch.tanh(x)
    changed = plain != noisy
    assert 0 < changed.sum() < 0.1 * x.numel()
    ulp = torch.finfo(torch.bfloat16).eps * plain.float().abs().clamp_min(1e-30)
    step = (noisy.float() - plain.float()).abs()[changed]
    assert (step <= 2 * ulp[changed]).all()


def test_it_never_touches_the_global_generator():
    state = torch.random.get_rng_state()
    a, b = _inputs()
    with FloatNoise():
        _ = (a @ b).softmax(-1)
    assert torch.equal(state, torch.random.get_rng_state())


def test_a_block_can_be_marked_exact():
    body = f"```python\n>>> 1.0\n1.0\n```\n{EXACT_MARK}\n```python\n>>> 2.0\n2.0\n```\n"
    assert exact_block_lines(body) == {doctest_blocks(body)[1][0]}
