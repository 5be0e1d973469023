"""Rounding noise on every floating-point kernel, to find fragile figures.

Another CPU, thread count or kernel library changes the order of the sums
inside matmuls, reductions and softmaxes, and transcendental functions by an
ulp or so: each result moves by a few float32 ulps. A figure a lesson prints
is portable only if it survives that. `FloatNoise` is a TorchDispatchMode
that multiplies each float32 result of such a kernel by (1 + k * eps * s),
with s = +-1 taken from a hash of the result's own bits and k ulps (8 by
default, about 1e-6). A bfloat16 or float16 result, which another machine
rounds differently only where its float32 accumulator sits near a rounding
boundary, moves by one ulp at about one element in a thousand instead. A
doctest run under it fails where a figure is quoted at its rounding level,
on this machine, before another machine finds it.

Exact operations (copies, views, indexing, +, *, comparisons) are left
alone: IEEE arithmetic gives them the same result on every CPU.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
_PART = 1 << 18  # elements shaken at a time: 2 MB as int64
# float32 results are shaken in NumPy: the same float32 arithmetic, with the
# hash in wrapping uint32 (torch has no uint32 multiply, so its version works
# in masked int64) and without torch's per-op overhead. A small model's
# training loop ran seven times slower under the mode than without it.
# False: every dtype takes the torch path (the NumPy one's specification).
NUMPY_FLOAT32 = True

# Kernels whose result depends on summation order or a libm/SLEEF choice.
NOISY = {
    aten.mm.default,
    aten.addmm.default,
    aten.bmm.default,
    aten.baddbmm.default,
    aten.mv.default,
    aten.addmv.default,
    aten.dot.default,
    aten.sum.default,
    aten.sum.dim_IntList,
    aten.mean.default,
    aten.mean.dim,
    aten.var.correction,
    aten.std.correction,
    aten.var_mean.correction,
    aten.std_mean.correction,
    aten.linalg_vector_norm.default,
    aten.norm.Scalar,
    aten.norm.ScalarOpt_dim,
    aten.cumsum.default,
    aten.prod.default,
    aten.prod.dim_int,
    aten.logsumexp.default,
    aten._softmax.default,
    aten._log_softmax.default,
    aten._softmax_backward_data.default,
    aten._log_softmax_backward_data.default,
    aten.exp.default,
    aten.log.default,
    aten.tanh.default,
    aten.sigmoid.default,
    aten.erf.default,
    aten.gelu.default,
    aten.gelu_backward.default,
    aten.silu.default,
    aten.pow.Tensor_Scalar,
    aten.native_layer_norm.default,
    aten.native_layer_norm_backward.default,
    aten.nll_loss_forward.default,
    aten._scaled_dot_product_flash_attention_for_cpu.default,
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default,
    aten.convolution.default,
}


class FloatNoise(TorchDispatchMode):
    """Perturb each noisy kernel's floating outputs by about `ulps` ulps.

    The perturbation is a function of each result's own bits, not of a
    random draw: like a real CPU, the same computation on the same inputs
    gives the same answer twice, and a row that does not depend on the
    changed part of an input stays bit-identical.
    """

    def __init__(self, ulps: float = 8.0, half_flip_rate: float = 1 / 1024):
        super().__init__()
        self.ulps = ulps
        self.half_every = round(1 / half_flip_rate)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in NOISY and not _sums_integers(func, args):
            self._shake(out[0] if isinstance(out, tuple) else out)
        return out

    def _shake(self, t) -> None:
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            return
        if t.numel() == 0 or t.device.type != "cpu" or t.dtype == torch.float64:
            # float64 figures are computed to 1e-16: far below any quoted digit
            return
        if not t.is_contiguous():
            self._shake_part(t)
            return
        # Element by element, so in cache-sized parts: the same result, but a
        # (8, 128, 50257) logit tensor no longer makes eight 400 MB temporaries
        # (most of this mode's time went to their page faults).
        flat = t.view(-1)
        for start in range(0, flat.numel(), _PART):
            self._shake_part(flat[start : start + _PART])

    def _shake_part(self, t) -> None:
        if t.dtype == torch.float32 and NUMPY_FLOAT32:
            self._shake_float32(t)
            return
        with torch.no_grad():
            x = t.float()
            bits = _hash(x)
            sign = (bits & 1) * 2 - 1
            # Integers and non-finite values are exact on every CPU (a sum of
            # whole numbers, exp(0) = 1, an overflow), so they stay as they are.
            moved = torch.isfinite(x) & (x != x.round())
            if t.element_size() >= 4:
                shaken = x * (1 + torch.finfo(t.dtype).eps * self.ulps * sign)
            else:
                # One ulp of the half type, at about one element in half_every.
                info = torch.finfo(t.dtype)
                power = torch.floor(torch.log2(x.abs().clamp_min(info.tiny)))
                flip = (bits >> 1) % self.half_every == 0
                moved &= flip
                shaken = x + sign * info.eps * torch.exp2(power)
            t.copy_(torch.where(moved, shaken, x).to(t.dtype))

    def _shake_float32(self, t) -> None:
        """_shake_part's float32 branch in NumPy, operation for operation
        (test_float_noise checks that both give the same bits)."""
        x = t.detach().numpy()
        bits = _hash_uint32(x)
        sign = ((bits & np.uint32(1)).astype(np.float32) * 2) - 1
        moved = np.isfinite(x) & (x != np.rint(x))
        step = np.float32(torch.finfo(torch.float32).eps * self.ulps)
        shaken = x * (np.float32(1) + step * sign)
        with torch.no_grad():
            t.copy_(torch.from_numpy(np.where(moved, shaken, x)))


def _hash_uint32(x: np.ndarray) -> np.ndarray:
    """_hash of a float32 array in uint32, whose products wrap at 32 bits."""
    h = x.view(np.uint32).copy()
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def _hash(x: torch.Tensor) -> torch.Tensor:
    """A well-mixed 32-bit hash per element of its float32 bits (murmur3's
    finaliser: a bfloat16 value's low 16 bits are all zero, so they must be
    mixed into the rest). int64 products wrap, and the mask keeps 32 bits."""
    h = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def _sums_integers(func, args) -> bool:
    """A sum or mean of whole numbers (a count, a share of hits) is exact."""
    if func not in (
        aten.sum.default,
        aten.sum.dim_IntList,
        aten.mean.default,
        aten.mean.dim,
    ):
        return False
    x = args[0]
    if not isinstance(x, torch.Tensor) or x.device.type != "cpu":
        return False  # meta tensors (a FLOP count) carry no values
    return bool(x.is_floating_point() and torch.equal(x, x.round()))
