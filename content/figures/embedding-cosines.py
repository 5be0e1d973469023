"""Pairwise cosines of embedding rows: isotropic at init, a cone for unseen tokens."""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model, get_config

CAPTION = (
    "Cosine similarity between pairs of embedding rows. Left: GPT-2 small's "
    "seeded initialisation, 10,000 random pairs, centred on 0. Right: a small "
    "tied model after 30 training steps on ids 0-47 only; rows of ids it never "
    "saw collapse towards one direction"
)


def _pair_cosines(rows: torch.Tensor) -> torch.Tensor:
    unit = F.normalize(rows, dim=1)
    c = unit @ unit.T
    upper = torch.triu(torch.ones_like(c, dtype=torch.bool), diagonal=1)
    return c[upper]


def _trained_tiny() -> torch.Tensor:
    """The lesson's experiment: tied one-layer model, half the ids never occur."""
    model = build_model(get_config("tiny", n_layer=1)).train()
    data = torch.randint(0, 48, (8, 9), generator=torch.Generator().manual_seed(0))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(30):
        opt.zero_grad()
        logits = model(data[:, :-1])
        F.cross_entropy(logits.flatten(0, 1), data[:, 1:].flatten()).backward()
        opt.step()
    return model.transformer.wte.weight.detach()


def draw(fig):
    W = build_model("gpt2").transformer.wte.weight.detach()
    g = torch.Generator().manual_seed(0)
    i, j = torch.randint(0, W.shape[0], (2, 10000), generator=g)
    unit = F.normalize(W, dim=1)
    init = (unit[i] * unit[j]).sum(dim=1)

    trained = _trained_tiny()
    seen, unseen = _pair_cosines(trained[:48]), _pair_cosines(trained[48:])

    bins = torch.linspace(-1, 1, 81).tolist()
    left, right = fig.subplots(1, 2, sharex=True)
    left.hist(init.tolist(), bins=bins, color="#0072B2")
    left.set_title(f"GPT-2 small at init (mean {init.mean():.3f})")
    left.set_xlabel("cosine similarity")
    left.set_ylabel("pairs of rows")

    right.hist(
        seen.tolist(),
        bins=bins,
        color="#009E73",
        alpha=0.8,
        label=f"ids seen (mean {seen.mean():.2f})",
    )
    right.hist(
        unseen.tolist(),
        bins=bins,
        color="#D55E00",
        alpha=0.8,
        label=f"ids never seen (mean {unseen.mean():.2f})",
    )
    right.set_title("tied tiny model after training")
    right.set_xlabel("cosine similarity")
    right.set_ylabel("pairs of rows")
    right.legend(frameon=False, loc="upper left")
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
