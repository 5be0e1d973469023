"""Hours to train GPT-2 small on 10B tokens against MFU, from the 6N rule."""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "Hours to train GPT-2 small on 10 billion tokens (6N FLOPs per token) "
    "against MFU, for 1, 8 and 64 GPUs at their dense bf16 peaks"
)
TOKENS = 10e9
# Dense (no 2:4 sparsity) bf16 tensor-core peaks, NVIDIA's A100 and H100 datasheets.
PEAKS = {"A100": 312e12, "H100 SXM": 989e12}
GPU_COUNTS = {1: "#0072B2", 8: "#E69F00", 64: "#009E73"}
STYLES = {"A100": "--", "H100 SXM": "-"}


def hours(n_params, peak, mfu, n_gpus):
    return 6 * n_params * TOKENS / (n_gpus * peak * mfu) / 3600


def draw(fig):
    c = get_config("gpt2")
    n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
    mfus = [m / 100 for m in range(10, 71)]
    ax = fig.add_subplot()
    for gpu, peak in PEAKS.items():
        for n_gpus, colour in GPU_COUNTS.items():
            ax.plot(
                [100 * m for m in mfus],
                [hours(n, peak, m, n_gpus) for m in mfus],
                STYLES[gpu],
                color=colour,
                label=f"{n_gpus} x {gpu}",
            )
    at_40 = hours(n, PEAKS["A100"], 0.40, 1)
    ax.plot([40], [at_40], "o", color="black")
    ax.annotate(
        f"1 x A100 at 40%: {at_40:.1f} h",
        (40, at_40),
        xytext=(44, at_40 * 0.5),
        arrowprops={"arrowstyle": "-", "color": "black"},
    )
    ax.set_yscale("log")
    ax.set_xlabel("model FLOPs utilisation, MFU (%)")
    ax.set_ylabel("wall-clock hours (log scale)")
    ax.set_title(f"GPT-2 small ({n:,} parameters), 10B tokens: 6·N·D = "
                 f"{6 * n * TOKENS:.2e} FLOPs")  # fmt: skip
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.spines[["top", "right"]].set_visible(False)
