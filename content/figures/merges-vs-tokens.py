"""Token counts as GPT-2's merge list grows, for one sentence in several forms."""

import tiktoken
from grading_engine.reference import get_encoding

CAPTION = (
    "Tokens needed for the same sentence as a tokenizer keeps more of GPT-2's "
    "50,000 merges (0 merges = raw UTF-8 bytes): English shrinks early, while "
    "Russian and Chinese gain little until late merges, and never catch up"
)

# Inputs, not results: every plotted number is computed from the tokenizer.
SAMPLES = {
    "English": "The weather today is sunny with a light breeze from the west.",
    "Russian": "Сегодня солнечная погода и лёгкий ветер с запада.",
    "Chinese": "今天天气晴朗，西边吹来微风。",
}
COLOURS = ["#0072B2", "#D55E00", "#CC79A7"]
MERGES = [0, 250, 500, 1000, 2000, 5000, 10000, 20000, 30000, 40000, 50000]


def truncated(enc: tiktoken.Encoding, n_merges: int) -> tiktoken.Encoding:
    """GPT-2's tokenizer keeping only its first `n_merges` merges."""
    ranks = {b: r for b, r in enc._mergeable_ranks.items() if r < 256 + n_merges}
    return tiktoken.Encoding(
        name=f"gpt2-first-{n_merges}",
        pat_str=enc._pat_str,
        mergeable_ranks=ranks,
        special_tokens={},
    )


def draw(fig):
    enc = get_encoding()
    encoders = [truncated(enc, n) for n in MERGES]
    ax = fig.add_subplot()
    for (name, text), colour in zip(SAMPLES.items(), COLOURS, strict=True):
        counts = [len(e.encode(text)) for e in encoders]
        ax.plot(MERGES, counts, "o-", color=colour, label=name, ms=4)
        ax.annotate(
            f"{counts[-1]}",
            (MERGES[-1], counts[-1]),
            textcoords="offset points",
            xytext=(6, 0),
            va="center",
            color=colour,
        )
    ax.set_xscale("symlog", linthresh=250)
    ticks = [0, 500, 2000, 10000, 50000]
    ax.set_xticks(ticks, [f"{m:,}" for m in ticks])
    ax.set_xlabel(
        "merges kept from GPT-2's list (vocabulary = 256 + merges; log scale above 250)"
    )
    ax.set_ylabel("tokens for the sentence")
    ax.set_title("Same meaning, different lengths: it depends on what the merges cover")
    ax.legend(frameon=False, loc="lower left")
    ax.set_ylim(0, None)
    ax.spines[["top", "right"]].set_visible(False)
