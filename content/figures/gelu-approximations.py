"""ReLU, exact GELU and its two approximations, and how far each approximation is off.

Curves are computed with torch.nn.functional in float64, the tanh one being
exactly what the reference MLP (nn.GELU(approximate="tanh")) applies.
"""

import torch
import torch.nn.functional as F
from grading_engine.reference import MLP, get_config

CAPTION = (
    "Left: ReLU, exact GELU and GPT-2's tanh approximation; right: the absolute "
    "error of the tanh and sigmoid approximations against the exact GELU, on a "
    "log scale: tanh stays below 5e-4, sigmoid reaches 2e-2"
)


def draw(fig):
    act = MLP(get_config("tiny")).gelu  # the activation the reference uses
    x = torch.linspace(-4, 4, 2001, dtype=torch.float64)
    exact = F.gelu(x)
    tanh = act(x)
    sigmoid = x * torch.sigmoid(1.702 * x)
    left, right = fig.subplots(1, 2)

    left.plot(x, F.relu(x), color="#999999", lw=1.8, label="ReLU")
    left.plot(x, exact, color="#0072B2", lw=2.4, label="GELU, exact: x·Φ(x)")
    left.plot(x, tanh, color="#E69F00", lw=1.4, ls="--", label="GELU, tanh (GPT-2)")
    i = int(exact.argmin())
    left.plot([x[i]], [exact[i]], "o", color="#0072B2")
    left.annotate(
        f"minimum {exact[i].item():.3f}\nat x = {x[i].item():.2f}",
        (x[i].item(), exact[i].item()),
        xytext=(-3.9, 1.2),
        arrowprops=dict(arrowstyle="-", color="#333333"),
    )
    left.set_xlabel("pre-activation x")
    left.set_ylabel("activation")
    left.set_title("The curves")
    left.legend(loc="upper left", frameon=False)
    left.axhline(0, color="#cccccc", lw=0.8)

    for values, color, style, label in [
        (tanh, "#E69F00", "-", "tanh approximation (GPT-2)"),
        (sigmoid, "#009E73", "--", "x·sigmoid(1.702 x)"),
    ]:
        err = (values - exact).abs().clamp_min(1e-12)
        right.semilogy(x, err, color=color, ls=style, lw=1.8, label=label)
        j = int(err.argmax())
        right.annotate(
            f"max {err[j].item():.1e}",
            (x[j].item(), err[j].item()),
            xytext=(x[j].item() + 0.4, err[j].item() * 2.2),
            color=color,
        )
    right.set_ylim(1e-8, 0.3)
    right.set_xlabel("pre-activation x")
    right.set_ylabel("|approximation − exact GELU|")
    right.set_title("The approximation error")
    right.legend(loc="lower center", frameon=False)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
