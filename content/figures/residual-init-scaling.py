"""Residual-stream std through the reference model at init, with and without
GPT-2's 1/sqrt(2 * n_layer) scaling of the c_proj weights."""

import math

import torch
from grading_engine.reference import build_model, get_config

CAPTION = (
    "Std of the residual stream at initialisation, measured on the reference: "
    "without the 1/sqrt(2·n_layer) scaling of c_proj it grows like the square "
    "root of the number of sub-layers; with it, the stream ends at the same std "
    "however deep the model is"
)

SCALED, UNSCALED = "#0072B2", "#D55E00"


def _unscale(model, seed=1):
    """Redraw every c_proj weight at the plain 0.02, as if GPT-2 had not scaled."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("c_proj.weight"):
                p.normal_(0.0, 0.02, generator=g)
    return model


def _stream_stds(model, idx):
    """Std of x after the embedding and after every sub-layer's residual add."""
    with torch.no_grad():
        x = model._embed(idx)
        stds = [x.std().item()]
        for block in model.transformer.h:
            x = x + block.attn(block.ln_1(x))
            stds.append(x.std().item())
            x = x + block.mlp(block.ln_2(x))
            stds.append(x.std().item())
    return stds


def draw(fig):
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    idx = torch.randint(0, 50257, (2, 32), generator=torch.Generator().manual_seed(0))

    model = build_model("gpt2")
    scaled = _stream_stds(model, idx)
    unscaled = _stream_stds(_unscale(model), idx)
    steps = range(len(scaled))
    left.plot(
        steps,
        unscaled,
        color=UNSCALED,
        lw=2,
        ls="--",
        marker="o",
        ms=3,
        label="all weights std 0.02",
    )
    left.plot(
        steps,
        scaled,
        color=SCALED,
        lw=2,
        marker="o",
        ms=3,
        label="c_proj std 0.02/√24 (GPT-2)",
    )
    for values, color in ((unscaled, UNSCALED), (scaled, SCALED)):
        left.annotate(
            f"{values[-1]:.3f}",
            (len(values) - 1, values[-1]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            color=color,
        )
    left.set_xticks(
        range(0, len(scaled), 4), [str(i // 2) for i in range(0, len(scaled), 4)]
    )
    left.set_xlabel("blocks applied (two residual adds each)")
    left.set_ylabel("std of the residual stream x")
    left.set_title("GPT-2 small (12 blocks) at init")
    left.legend(loc="upper left", frameon=False)

    depths = [2, 6, 12, 24, 48]
    finals = {"scaled": [], "unscaled": []}
    for n_layer in depths:
        cfg = get_config("gpt2", n_layer=n_layer, n_embd=128, n_head=4, vocab_size=1024)
        m = build_model(cfg)
        small = idx % cfg.vocab_size
        finals["scaled"].append(_stream_stds(m, small)[-1])
        finals["unscaled"].append(_stream_stds(_unscale(m), small)[-1])
    right.plot(
        depths,
        finals["unscaled"],
        color=UNSCALED,
        ls="--",
        marker="o",
        lw=2,
        label="all weights std 0.02",
    )
    right.plot(
        depths,
        finals["scaled"],
        color=SCALED,
        marker="o",
        lw=2,
        label="c_proj scaled by 1/√(2·n_layer)",
    )
    ref = finals["unscaled"][0] / math.sqrt(2 * depths[0])
    right.plot(
        depths,
        [ref * math.sqrt(2 * n) for n in depths],
        color="#999999",
        lw=1,
        ls=":",
        label="∝ √(2·n_layer)",
    )
    right.set_xscale("log", base=2)
    right.set_xticks(depths, [str(n) for n in depths])
    right.set_xlabel("n_layer (d = 128)")
    right.set_ylabel("std after the last block")
    right.set_title("Final std vs depth")
    right.legend(loc="upper left", frameon=False, fontsize=8)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_ylim(bottom=0)
