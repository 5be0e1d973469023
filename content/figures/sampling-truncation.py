"""What temperature, top-k and top-p do to a next-token distribution.

Left: a Zipf-like distribution over GPT-2's 50,257 tokens (p proportional to
rank^-1.1, a stand-in for a trained model's open-ended prediction; real
weights are not available here) at three temperatures, with the top-k = 50
cut and each temperature's top-p = 0.9 cut. Right: how many tokens each rule
keeps for a confident row, an open-ended row and the untrained reference
GPT-2's prediction after "The sky is".
"""

import torch
from grading_engine.reference import build_model, get_encoding

CAPTION = (
    "Temperature reshapes the whole distribution; top-k keeps a fixed count; "
    "top-p keeps whatever count reaches 90% of the mass, 3 tokens for a "
    "confident row and tens of thousands for a flat one"
)
K, P = 50, 0.9
COLOURS = {0.7: "#3b6ea8", 1.0: "#222222", 1.5: "#d08c3a"}


def _nucleus_size(logits: torch.Tensor, p: float) -> int:
    probs = torch.softmax(logits.double(), -1).sort(descending=True).values
    return int((probs.cumsum(0) < p).sum()) + 1


def draw(fig):
    V = 50257
    rank = torch.arange(1, V + 1, dtype=torch.float64)
    left, right = fig.subplots(1, 2, width_ratios=[1.35, 1])

    for T, colour in COLOURS.items():
        logits = -1.1 * rank.log() / T
        probs = torch.softmax(logits, -1)
        n = _nucleus_size(logits, P)
        left.loglog(
            rank.numpy(),
            probs.numpy(),
            color=colour,
            lw=1.6,
            label=f"T = {T}: top-p {P} keeps {n:,}",
        )
        left.plot([n], [probs[n - 1].item()], "o", color=colour, ms=6)
    left.axvline(K, color="#777777", ls="--", lw=1)
    left.text(K * 1.15, 2e-1, f"top-k = {K}", fontsize=8, color="#555555")
    left.set_xlabel("token rank (most probable first)")
    left.set_ylabel("probability")
    left.set_ylim(1e-9, 1)
    left.legend(fontsize=8, frameon=False, loc="lower left")
    left.set_title("Zipf-like row (synthetic), three temperatures", fontsize=9)

    enc = get_encoding()
    with torch.no_grad():
        untrained = build_model("gpt2")(torch.tensor([enc.encode("The sky is")]))
    rows = {
        "confident\n(rank^-2.5)": -2.5 * rank.log(),
        "open-ended\n(rank^-1.1)": -1.1 * rank.log(),
        'untrained GPT-2\n"The sky is"': untrained[0, -1].double(),
    }
    names = list(rows)
    kept_p = [_nucleus_size(z, P) for z in rows.values()]
    x = torch.arange(len(names)).numpy()
    w = 0.38
    right.bar(x - w / 2, [K] * len(names), w, color="#999999", label=f"top-k {K}")
    bars = right.bar(x + w / 2, kept_p, w, color="#3b6ea8", label=f"top-p {P}")
    for bar, n in zip(bars, kept_p, strict=True):
        right.text(
            bar.get_x() + bar.get_width() / 2,
            n * 1.3,
            f"{n:,}",
            ha="center",
            fontsize=8,
        )
    right.set_yscale("log")
    right.set_ylim(1, 5e5)
    right.set_xticks(x, names, fontsize=8)
    right.set_ylabel("tokens kept (log scale)")
    right.legend(fontsize=8, frameon=False, loc="upper left")
    right.set_title("tokens kept at T = 1", fontsize=9)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
