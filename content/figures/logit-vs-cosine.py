"""Logit vs cosine for every vocabulary row, and what spreading row norms does.

Computed on the reference GPT-2 small (seeded init) at the last position of
"The sky is". The right panel rescales each row by exp(s * z), z ~ N(0, 1)
seeded, which leaves every cosine unchanged and moves only the logits.
"""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "Left: logit against cosine for all 50,257 rows at the last position of "
    "'The sky is' (reference GPT-2, random init); right: how the top-10 by "
    "logit drifts away from the top-10 by cosine as row norms spread"
)

SKY = [464, 6766, 318]
SPREADS = [0.0, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]


def _scores():
    model = build_model("gpt2")
    with torch.no_grad():
        x = model.forward_trace(torch.tensor([SKY]))["ln_f"][0, -1]
        W = model.lm_head.weight.detach().clone()
    return x, W


def draw(fig):
    x, W = _scores()
    logits = W @ x
    cos = F.cosine_similarity(W, x.unsqueeze(0), dim=1)
    norms = W.norm(dim=1)

    left, right = fig.subplots(1, 2)
    points = left.scatter(
        cos.numpy(), logits.numpy(), c=norms.numpy(), s=2, cmap="viridis", lw=0
    )
    fig.colorbar(points, ax=left, label="row norm |w_i|")
    a, c = int(logits.argmax()), int(cos.argmax())
    # The two winners sit in the crowded top corner: show them in a zoom.
    zoom = left.inset_axes([0.55, 0.06, 0.42, 0.42])
    near = (cos > cos[c] - 0.02).nonzero().flatten()
    zoom.scatter(
        cos[near].numpy(),
        logits[near].numpy(),
        c=norms[near].numpy(),
        s=10,
        cmap="viridis",
        vmin=float(norms.min()),
        vmax=float(norms.max()),
        lw=0,
    )
    zoom.scatter(
        [cos[a]],
        [logits[a]],
        s=80,
        facecolors="none",
        edgecolors="#d55e00",
        lw=1.5,
        label=f"top by logit ({a})",
    )
    zoom.scatter(
        [cos[c]],
        [logits[c]],
        s=80,
        marker="s",
        facecolors="none",
        edgecolors="#0072b2",
        lw=1.5,
        label=f"top by cosine ({c})",
    )
    zoom.tick_params(labelsize=7)
    zoom.set_title("zoom on the top", fontsize=8)
    left.indicate_inset_zoom(zoom, edgecolor="#555555")
    left.legend(*zoom.get_legend_handles_labels(), loc="upper left", fontsize=8)
    left.set_xlabel("cosine(h, w_i)")
    left.set_ylabel("logit h . w_i")
    left.set_title("At init: norms nearly equal, top-1 still flips")

    top_cos = set(cos.topk(10).indices.tolist())
    z = torch.randn(W.shape[0], generator=torch.Generator().manual_seed(0))
    cvs, overlaps, ranks = [], [], []
    for s in SPREADS:
        scaled = W * torch.exp(s * z).unsqueeze(1)  # cosines unchanged
        lg = scaled @ x
        n = scaled.norm(dim=1)
        cvs.append(float(n.std() / n.mean()))
        overlaps.append(len(top_cos & set(lg.topk(10).indices.tolist())))
        ranks.append(1 + int((lg > lg[c]).sum()))
    right.plot(cvs, overlaps, "o-", color="#0072b2", label="top-10 shared with cosine")
    right.set_xlabel("spread of row norms (std / mean)")
    right.set_ylabel("tokens shared by the two top-10s", color="#0072b2")
    right.set_ylim(0, 10.5)
    twin = right.twinx()
    twin.plot(cvs, ranks, "s--", color="#d55e00", label="logit rank of cosine's top")
    twin.set_yscale("log")
    twin.set_ylabel("logit rank of the cosine top-1 (log)", color="#d55e00")
    right.set_title("Spread the norms: the rankings part")
    lines = right.get_lines() + twin.get_lines()
    right.legend(
        lines, [ln.get_label() for ln in lines], loc="upper center", fontsize=8
    )
