"""GPU peak FLOP/s the compute exercises build their runs from."""

# Dense (no 2:4 sparsity) bf16 tensor-core peaks from NVIDIA's datasheets.
PEAKS = {"A100": 312e12, "H100 SXM": 989e12}


def on_many_gpus(args: dict, slip: tuple) -> list[tuple]:
    """`slip` (forgetting that n_gpus share the work) only exists when
    there are several GPUs: with one, it gives the right answer."""
    return [slip] if args["n_gpus"] > 1 else []
