"""How many UTF-8 bytes one GPT-2 token covers, for different kinds of text."""

from grading_engine.reference import get_encoding

CAPTION = (
    "UTF-8 bytes per GPT-2 token for short samples of different kinds of text: "
    "every sample encodes, but English packs several bytes into each token "
    "while Chinese and emoji fall back to about one or two"
)

# Samples are inputs, not results: every number drawn is computed below.
SAMPLES = {
    "English": "The weather today is sunny with a light breeze from the west.",
    "Python": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "German": "Das Wetter ist heute sonnig mit einer leichten Brise aus Westen.",
    "Russian": "Сегодня солнечная погода и лёгкий ветер с запада.",
    "Chinese": "今天天气晴朗，西边吹来微风。",
    "Emoji": "🙂🌞🌬️🌳🙂",
}


def draw(fig):
    enc = get_encoding()
    names = list(SAMPLES)
    n_bytes = [len(SAMPLES[n].encode("utf-8")) for n in names]
    n_tokens = [len(enc.encode(SAMPLES[n])) for n in names]
    ratio = [b / t for b, t in zip(n_bytes, n_tokens, strict=True)]

    ax = fig.add_subplot()
    bars = ax.barh(names, ratio, color="#0072B2")
    ax.invert_yaxis()
    for bar, b, t in zip(bars, n_bytes, n_tokens, strict=True):
        ax.text(
            bar.get_width() + 0.05,
            bar.get_y() + bar.get_height() / 2,
            f"{b} bytes / {t} tokens",
            va="center",
        )
    ax.axvline(
        1, color="#555555", lw=1, ls=":", label="1 byte per token: no merge used"
    )
    ax.legend(frameon=False, loc="lower right")
    ax.set_xlabel("UTF-8 bytes per token (higher = cheaper text)")
    ax.set_xlim(0, max(ratio) * 1.45)
    ax.set_title("GPT-2's byte-level BPE: everything encodes, at different prices")
    ax.spines[["top", "right"]].set_visible(False)
