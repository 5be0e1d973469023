"""The GPT-2 reference model, written to be read next to nanoGPT's model.py.

Every grade compares a learner's tensors with this module's, so it favours
plain, explicit math over speed: no dropout, no fused attention, weights in
nn.Linear orientation (out, in). It is checked against Hugging Face's
GPT2LMHeadModel in tests/grader/test_reference_model.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = 50257
    block_size: int = 1024
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    tied: bool = True  # lm_head shares wte's Parameter
    layer_norm_eps: float = 1e-5


CONFIGS: dict[str, GPTConfig] = {
    # The four released GPT-2 sizes (Radford et al., 2019).
    "gpt2": GPTConfig(n_layer=12, n_head=12, n_embd=768),
    "gpt2-medium": GPTConfig(n_layer=24, n_head=16, n_embd=1024),
    "gpt2-large": GPTConfig(n_layer=36, n_head=20, n_embd=1280),
    "gpt2-xl": GPTConfig(n_layer=48, n_head=25, n_embd=1600),
    # Small shapes with prime vocabularies, so a swapped axis cannot hide.
    "tiny": GPTConfig(vocab_size=97, block_size=16, n_layer=2, n_head=2, n_embd=16),
    "mini": GPTConfig(vocab_size=211, block_size=32, n_layer=3, n_head=4, n_embd=32),
}


def get_config(name: str, **overrides) -> GPTConfig:
    """Look up a named config, optionally replacing some of its fields."""
    try:
        config = CONFIGS[name]
    except KeyError:
        known = ", ".join(sorted(CONFIGS))
        raise KeyError(f"unknown GPT config {name!r}; known: {known}") from None
    return replace(config, **overrides) if overrides else config


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        if config.n_embd % config.n_head != 0:
            raise ValueError(
                f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}"
            )
        # query, key and value projections for all heads, in one matrix
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()  # batch, time, channels (n_embd)
        hs = C // self.n_head  # head size

        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)  # 3 x (B, T, C)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)

        # Scaling by 1/sqrt(hs) keeps the scores' variance near 1, so the
        # softmax does not saturate as the head size grows.
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))  # (B, nh, T, T)
        # A position may only look at itself and the past: it is trained to
        # predict the next token, which must not be visible to it.
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~causal, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-join the heads
        return self.c_proj(y)  # (B, T, C)


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        # GPT-2 was trained with the tanh approximation of GELU ("gelu_new").
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.c_fc(x)  # (B, T, 4C)
        x = self.gelu(x)
        return self.c_proj(x)  # (B, T, C)


class Block(nn.Module):
    """One transformer block: pre-norm attention, then pre-norm MLP."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))  # the residual stream carries x through
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    """GPT-2: token + position embeddings, n_layer blocks, ln_f, lm_head."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd, eps=config.layer_norm_eps),
            )
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tied:
            self.tie_weights()  # GPT-2 as released: one matrix, two roles

    def tie_weights(self) -> None:
        """Make the output head and the token embedding one Parameter.

        Both are (vocab_size, n_embd), so the head scores each vocabulary row
        against the final hidden state (Press and Wolf, 2017).
        """
        self.lm_head.weight = self.transformer.wte.weight

    def _embed(self, idx: torch.Tensor) -> torch.Tensor:
        if idx.dim() != 2:
            raise ValueError(f"idx must be (b, t), got shape {tuple(idx.shape)}")
        b, t = idx.size()
        if t > self.config.block_size:
            raise ValueError(
                f"cannot forward a sequence of length {t}: "
                f"block_size is only {self.config.block_size}"
            )
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)  # (t,)
        tok_emb = self.transformer.wte(idx)  # (b, t, n_embd)
        pos_emb = self.transformer.wpe(pos)  # (t, n_embd), broadcast over b
        return tok_emb + pos_emb  # (b, t, n_embd)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits (b, t, vocab_size) for token ids idx (b, t)."""
        x = self._embed(idx)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)  # (b, t, n_embd)
        return self.lm_head(x)  # (b, t, vocab_size)

    def forward_trace(self, idx: torch.Tensor) -> dict[str, torch.Tensor]:
        """The same computation as forward, keeping every intermediate.

        The grader walks these in order to report the first place where a
        learner's forward pass leaves the reference's.
        """
        trace: dict[str, torch.Tensor] = {}
        x = self._embed(idx)
        trace["embedding"] = x
        for i, block in enumerate(self.transformer.h):
            # Block.forward, split at its two residual adds.
            x = x + block.attn(block.ln_1(x))
            trace[f"h.{i}.attn"] = x
            x = x + block.mlp(block.ln_2(x))
            trace[f"h.{i}.mlp"] = x
        x = self.transformer.ln_f(x)
        trace["ln_f"] = x
        trace["logits"] = self.lm_head(x)
        return trace


def _init_gpt2_weights(model: GPT, generator: torch.Generator) -> None:
    """GPT-2's initialisation, drawn from `generator` in module order."""
    std = 0.02
    # Each block adds two projections to the residual stream; scaling them
    # by 1/sqrt(2 * n_layer) keeps the stream's variance from growing with
    # depth (GPT-2 paper, section 2.3).
    residual_std = std / math.sqrt(2 * model.config.n_layer)
    done: set[int] = set()  # a tied weight is drawn once, as wte
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                if id(module.weight) not in done:
                    s = residual_std if name.endswith("c_proj") else std
                    module.weight.normal_(0.0, s, generator=generator)
                    done.add(id(module.weight))
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()


def empty_model(config: GPTConfig) -> GPT:
    """A GPT on CPU with uninitialised storage, tied per config.

    Skips PyTorch's default init, which would be thrown away anyway by a
    seeded init or a checkpoint load.
    """
    with torch.device("meta"):
        model = GPT(config)
    model.to_empty(device="cpu")
    if config.tied:
        # to_empty gives each module its own new tensor, splitting the tie.
        model.tie_weights()
    return model


def build_model(
    config: GPTConfig | str, *, seed: int = 0, tied: bool | None = None
) -> GPT:
    """A GPT-2 with seeded, GPT-2-style weights, in eval mode on CPU, float32.

    The same (config, seed, tied) gives bit-identical weights in any process,
    which is what lets the grader's parent and child agree on the reference.
    """
    if isinstance(config, str):
        config = get_config(config)
    if tied is not None and tied != config.tied:
        config = replace(config, tied=tied)
    model = empty_model(config)
    generator = torch.Generator(device="cpu").manual_seed(seed)
    _init_gpt2_weights(model, generator)
    return model.eval()
