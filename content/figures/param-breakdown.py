"""Where GPT-2 small's parameters live, counted from the built reference model."""

from grading_engine.reference import build_model

CAPTION = (
    "GPT-2 small's parameters by tensor group, counted on the reference model: "
    "the tied embedding is nearly a third of the 124.4M"
)


def _groups(model):
    groups = {"wte (tied with lm_head)": 0, "wpe": 0, "12 blocks": 0, "ln_f": 0}
    for name, p in model.named_parameters():  # a shared tensor is listed once
        if name.startswith("transformer.wte"):
            groups["wte (tied with lm_head)"] += p.numel()
        elif name.startswith("transformer.wpe"):
            groups["wpe"] += p.numel()
        elif name.startswith("transformer.h."):
            groups["12 blocks"] += p.numel()
        elif name.startswith("transformer.ln_f"):
            groups["ln_f"] += p.numel()
    return groups


def draw(fig):
    groups = _groups(build_model("gpt2"))
    total = sum(groups.values())
    ax = fig.add_subplot()
    names = list(groups)
    values = [groups[n] / 1e6 for n in names]
    bars = ax.barh(names, values, color=["#3b6ea8", "#7aa6d6", "#d08c3a", "#999999"])
    ax.invert_yaxis()
    for bar, n in zip(bars, names, strict=True):
        share = groups[n] / total
        ax.text(
            bar.get_width() + 1,
            bar.get_y() + bar.get_height() / 2,
            f"{groups[n]:,} ({share:.1%})",
            va="center",
        )
    ax.set_xlabel("parameters (millions)")
    ax.set_xlim(0, max(values) * 1.45)
    ax.set_title(f"GPT-2 small: {total:,} parameters (tied)")
    ax.spines[["top", "right"]].set_visible(False)
