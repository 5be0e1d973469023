"""Where a tied weight's gradient lands, row by row.

On the reference's `mini` config (V = 211), untied so autograd keeps the two
uses apart, for one batch of 4 x 32 random inputs and targets: the norm of
each vocabulary row's gradient from the embedding lookup and from the head.
"""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "Per-row gradient norms on the reference's mini config: the lookup touches "
    "only rows of input tokens, the head touches every row (large on targets, "
    "small on the rest); a tied weight receives their sum"
)


def _parts():
    model = build_model("mini", tied=False)
    g = torch.Generator().manual_seed(0)
    V = model.config.vocab_size
    idx = torch.randint(0, V, (4, 32), generator=g)
    targets = torch.randint(0, V, (4, 32), generator=g)
    logits = model(idx)
    F.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()
    emb = model.transformer.wte.weight.grad.norm(dim=1)
    head = model.lm_head.weight.grad.norm(dim=1)
    return emb, head, set(idx.flatten().tolist()), set(targets.flatten().tolist())


def draw(fig):
    emb, head, inputs, targets = _parts()
    order = torch.argsort(head, descending=True)
    x = torch.arange(len(order))
    ax = fig.add_subplot()
    is_target = torch.tensor([int(i) in targets for i in order])
    ax.scatter(
        x[is_target],
        head[order][is_target],
        s=14,
        color="#d55e00",
        label=f"head part, target rows ({int(is_target.sum())})",
    )
    ax.scatter(
        x[~is_target],
        head[order][~is_target],
        s=14,
        color="#e69f00",
        marker="x",
        label=f"head part, other rows ({int((~is_target).sum())})",
    )
    used = emb[order] > 0
    ax.scatter(
        x[used],
        emb[order][used],
        s=14,
        color="#0072b2",
        marker="s",
        label=f"embedding part, input rows ({int(used.sum())})",
    )
    ax.set_yscale("log")
    ax.set_xlabel("vocabulary rows, sorted by the head part's norm")
    ax.set_ylabel("gradient norm of the row (log scale)")
    ax.set_title(
        f"{len(order) - int(used.sum())} of {len(order)} rows get nothing from "
        "the lookup; every row gets something from the head"
    )
    ax.legend(fontsize=8, loc="lower left")
    ax.spines[["top", "right"]].set_visible(False)
