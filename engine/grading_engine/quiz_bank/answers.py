"""The functions templates name for their answers and misconceptions.

Each takes a template's drawn parameters as keyword arguments and returns
an int, a float, a string or a tuple (a shape). Register with @answer so a
template can name it; the loader refuses a template that names no
registered function.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from . import formulas as f

ANSWERS: dict[str, Callable[..., object]] = {}


def answer(fn: Callable[..., object]) -> Callable[..., object]:
    """Register `fn` under its own name."""
    if fn.__name__ in ANSWERS:
        raise ValueError(f"answer function {fn.__name__!r} registered twice")
    ANSWERS[fn.__name__] = fn
    return fn


# Counting (parameter-formula) ------------------------------------------------


@answer
def gpt2_params_tied(vocab_size, block_size, n_layer, n_embd, **_):
    return f.gpt2_params(vocab_size, block_size, n_layer, n_embd, tied=True)


@answer
def gpt2_params_head_counted_twice(vocab_size, block_size, n_layer, n_embd, **_):
    return f.gpt2_params(vocab_size, block_size, n_layer, n_embd, tied=False)


@answer
def gpt2_params_forgot_wpe(vocab_size, block_size, n_layer, n_embd, **_):
    return f.gpt2_params(vocab_size, block_size, n_layer, n_embd) - block_size * n_embd


def _bytes(dtype: str) -> int:
    return f.BYTES_PER_ELEMENT[dtype]


# Tokens and embeddings ---------------------------------------------------------


@answer
def embedding_tables_tied(vocab_size, block_size, n_embd, **_):
    return f.embedding_params(vocab_size, block_size, n_embd)


@answer
def embedding_tables_forgot_wpe(vocab_size, n_embd, **_):
    return vocab_size * n_embd


@answer
def embedding_tables_head_counted(vocab_size, block_size, n_embd, **_):
    return f.embedding_params(vocab_size, block_size, n_embd) + vocab_size * n_embd


@answer
def padded_vocab(vocab_size, multiple, **_):
    return f.round_up(vocab_size, multiple)


@answer
def padded_vocab_rounded_down(vocab_size, multiple, **_):
    return vocab_size // multiple * multiple


@answer
def padded_vocab_added_block(vocab_size, multiple, **_):
    return vocab_size + multiple


@answer
def padding_extra_params_tied(vocab_size, multiple, n_embd, **_):
    return (f.round_up(vocab_size, multiple) - vocab_size) * n_embd


@answer
def padding_extra_rows(vocab_size, multiple, **_):
    return f.round_up(vocab_size, multiple) - vocab_size


@answer
def padding_extra_params_head_too(vocab_size, multiple, n_embd, **_):
    return 2 * (f.round_up(vocab_size, multiple) - vocab_size) * n_embd


@answer
def one_hot_bytes(batch, seq_len, vocab_size, dtype, **_):
    return batch * seq_len * vocab_size * _bytes(dtype)


@answer
def one_hot_elements(batch, seq_len, vocab_size, **_):
    return batch * seq_len * vocab_size


@answer
def one_hot_bytes_one_sequence(seq_len, vocab_size, dtype, **_):
    return seq_len * vocab_size * _bytes(dtype)


@answer
def embedding_output_shape(batch, seq_len, n_embd, **_):
    return (batch, seq_len, n_embd)


@answer
def embedding_output_shape_one_hot(batch, seq_len, vocab_size, **_):
    return (batch, seq_len, vocab_size)


@answer
def embedding_output_shape_whole_wpe(batch, block_size, n_embd, **_):
    return (batch, block_size, n_embd)


@answer
def embedding_output_shape_flattened(batch, seq_len, n_embd, **_):
    return (batch * seq_len, n_embd)


def _tied_total(vocab_size, block_size, n_layer, n_embd):
    return f.gpt2_params(vocab_size, block_size, n_layer, n_embd, tied=True)


@answer
def embedding_share_pct(vocab_size, block_size, n_layer, n_embd, **_):
    emb = f.embedding_params(vocab_size, block_size, n_embd)
    return 100 * emb / _tied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def embedding_share_pct_over_rest(vocab_size, block_size, n_layer, n_embd, **_):
    emb = f.embedding_params(vocab_size, block_size, n_embd)
    return 100 * emb / (_tied_total(vocab_size, block_size, n_layer, n_embd) - emb)


@answer
def embedding_share_pct_wte_only(vocab_size, block_size, n_layer, n_embd, **_):
    return (
        100 * vocab_size * n_embd / _tied_total(vocab_size, block_size, n_layer, n_embd)
    )


# Attention ---------------------------------------------------------------------


@answer
def attention_layer_params(n_head, head_dim, **_):
    return f.attention_params(n_head * head_dim)


@answer
def attention_layer_params_no_bias(n_head, head_dim, **_):
    d = n_head * head_dim
    return 4 * d * d


@answer
def attention_layer_params_no_c_proj(n_head, head_dim, **_):
    d = n_head * head_dim
    return 3 * d * d + 3 * d


@answer
def attention_layer_params_per_head(n_head, head_dim, **_):
    return n_head * f.attention_params(head_dim)


@answer
def attention_layer_params_qkv_bias_once(n_head, head_dim, **_):
    d = n_head * head_dim
    return 4 * d * d + 2 * d


@answer
def kv_cache_bytes_mha(n_layer, n_head, head_dim, seq_len, batch, dtype, **_):
    return f.kv_cache_bytes(n_layer, n_head * head_dim, seq_len, batch, _bytes(dtype))


@answer
def kv_cache_bytes_mha_keys_only(n_layer, n_head, head_dim, seq_len, batch, dtype, **_):
    return kv_cache_bytes_mha(n_layer, n_head, head_dim, seq_len, batch, dtype) // 2


@answer
def kv_cache_bytes_mha_one_layer(n_layer, n_head, head_dim, seq_len, batch, dtype, **_):
    return f.kv_cache_bytes(1, n_head * head_dim, seq_len, batch, _bytes(dtype))


@answer
def kv_cache_elements_mha(n_layer, n_head, head_dim, seq_len, batch, **_):
    return f.kv_cache_bytes(n_layer, n_head * head_dim, seq_len, batch, 1)


@answer
def kv_cache_bytes_mha_one_sequence(n_layer, n_head, head_dim, seq_len, dtype, **_):
    return f.kv_cache_bytes(n_layer, n_head * head_dim, seq_len, 1, _bytes(dtype))


@answer
def kv_cache_bytes_gqa(n_layer, n_kv_head, head_dim, seq_len, dtype, **_):
    return f.kv_cache_bytes(n_layer, n_kv_head * head_dim, seq_len, 1, _bytes(dtype))


@answer
def kv_cache_bytes_gqa_full_width(n_layer, n_head, head_dim, seq_len, dtype, **_):
    return f.kv_cache_bytes(n_layer, n_head * head_dim, seq_len, 1, _bytes(dtype))


@answer
def kv_cache_bytes_gqa_keys_only(n_layer, n_kv_head, head_dim, seq_len, dtype, **_):
    return (
        f.kv_cache_bytes(n_layer, n_kv_head * head_dim, seq_len, 1, _bytes(dtype)) // 2
    )


@answer
def kv_cache_bytes_gqa_one_layer(n_kv_head, head_dim, seq_len, dtype, **_):
    return f.kv_cache_bytes(1, n_kv_head * head_dim, seq_len, 1, _bytes(dtype))


@answer
def head_split_shape(batch, seq_len, n_head, head_dim, **_):
    return (batch, n_head, seq_len, head_dim)


@answer
def head_split_shape_no_transpose(batch, seq_len, n_head, head_dim, **_):
    return (batch, seq_len, n_head, head_dim)


@answer
def head_split_shape_head_axis_last(batch, seq_len, n_head, head_dim, **_):
    return (batch, head_dim, seq_len, n_head)


@answer
def head_split_shape_time_last(batch, seq_len, n_head, head_dim, **_):
    return (batch, n_head, head_dim, seq_len)


@answer
def attention_weights_bytes(n_head, batch, seq_len, dtype, **_):
    return batch * n_head * seq_len * seq_len * _bytes(dtype)


@answer
def attention_weights_bytes_one_head(batch, seq_len, dtype, **_):
    return batch * seq_len * seq_len * _bytes(dtype)


@answer
def attention_weights_bytes_one_sequence(n_head, seq_len, dtype, **_):
    return n_head * seq_len * seq_len * _bytes(dtype)


@answer
def attention_weights_elements(n_head, batch, seq_len, **_):
    return batch * n_head * seq_len * seq_len


@answer
def causal_visible_weights(n_head, seq_len, **_):
    return n_head * seq_len * (seq_len + 1) // 2


@answer
def causal_visible_weights_diagonal_masked(n_head, seq_len, **_):
    return n_head * seq_len * (seq_len - 1) // 2


@answer
def causal_visible_weights_no_mask(n_head, seq_len, **_):
    return n_head * seq_len * seq_len


@answer
def causal_visible_weights_one_head(seq_len, **_):
    return seq_len * (seq_len + 1) // 2


@answer
def attention_flops_per_token(n_layer, n_embd, seq_len, **_):
    return f.attention_product_flops(n_layer, n_embd, seq_len)


@answer
def attention_flops_per_token_one_product(n_layer, n_embd, seq_len, **_):
    return f.attention_product_flops(n_layer, n_embd, seq_len) // 2


@answer
def attention_flops_per_token_one_layer(n_embd, seq_len, **_):
    return f.attention_product_flops(1, n_embd, seq_len)


def _gqa_qkv_width(n_head, n_kv_head, head_dim):
    return n_head * head_dim + 2 * n_kv_head * head_dim


@answer
def gqa_c_attn_params(n_head, n_kv_head, head_dim, **_):
    out = _gqa_qkv_width(n_head, n_kv_head, head_dim)
    return out * n_head * head_dim + out


@answer
def gqa_c_attn_params_full_width(n_head, head_dim, **_):
    d = n_head * head_dim
    return 3 * d * d + 3 * d


@answer
def gqa_c_attn_params_no_bias(n_head, n_kv_head, head_dim, **_):
    return _gqa_qkv_width(n_head, n_kv_head, head_dim) * n_head * head_dim


# The block ---------------------------------------------------------------------


@answer
def block_params(n_embd, **_):
    return f.block_params(n_embd)


@answer
def block_params_matrices_only(n_embd, **_):
    return 12 * n_embd * n_embd


@answer
def block_params_no_layernorms(n_embd, **_):
    return 12 * n_embd * n_embd + 9 * n_embd


@answer
def block_params_no_biases(n_embd, **_):
    return 12 * n_embd * n_embd + 4 * n_embd


@answer
def block_params_attention_only(n_embd, **_):
    return f.attention_params(n_embd) + 4 * n_embd


@answer
def mlp_params_4x(n_embd, **_):
    return f.mlp_params(n_embd, 4 * n_embd)


@answer
def mlp_params_4x_no_bias(n_embd, **_):
    return 8 * n_embd * n_embd


@answer
def mlp_params_4x_no_c_proj_bias(n_embd, **_):
    return f.mlp_params(n_embd, 4 * n_embd) - n_embd


@answer
def residual_init_std(n_layer, **_):
    return 0.02 / math.sqrt(2 * n_layer)


@answer
def residual_init_std_no_factor_2(n_layer, **_):
    return 0.02 / math.sqrt(n_layer)


@answer
def residual_init_std_no_sqrt(n_layer, **_):
    return 0.02 / (2 * n_layer)


@answer
def residual_init_std_unscaled(**_):
    return 0.02


@answer
def layernorm_params_all(n_layer, n_embd, **_):
    return f.layernorm_params(n_layer, n_embd)


@answer
def layernorm_params_no_ln_f(n_layer, n_embd, **_):
    return 2 * n_layer * 2 * n_embd


@answer
def layernorm_params_weight_only(n_layer, n_embd, **_):
    return f.layernorm_params(n_layer, n_embd) // 2


def _block_matrix_flops(d):
    return 2 * 12 * d * d  # c_attn 3d^2, c_proj d^2, c_fc and c_proj 4d^2 each


@answer
def block_forward_flops(n_embd, seq_len, **_):
    return _block_matrix_flops(n_embd) + f.attention_product_flops(1, n_embd, seq_len)


@answer
def block_forward_macs(n_embd, seq_len, **_):
    return block_forward_flops(n_embd, seq_len) // 2


@answer
def block_forward_flops_no_attention(n_embd, **_):
    return _block_matrix_flops(n_embd)


@answer
def block_forward_flops_half_attention(n_embd, seq_len, **_):
    return (
        _block_matrix_flops(n_embd) + f.attention_product_flops(1, n_embd, seq_len) // 2
    )


@answer
def llama_block_params(n_embd, hidden, **_):
    d = n_embd
    return 4 * d * d + 3 * d * hidden + 2 * d


@answer
def llama_block_params_two_matrices(n_embd, hidden, **_):
    d = n_embd
    return 4 * d * d + 2 * d * hidden + 2 * d


@answer
def llama_block_params_norm_bias(n_embd, hidden, **_):
    return llama_block_params(n_embd, hidden) + 2 * n_embd


@answer
def llama_block_params_no_norms(n_embd, hidden, **_):
    return llama_block_params(n_embd, hidden) - 2 * n_embd


# Output head and tying ---------------------------------------------------------


@answer
def logits_shape(batch, seq_len, vocab_size, **_):
    return (batch, seq_len, vocab_size)


@answer
def logits_shape_last_position(batch, vocab_size, **_):
    return (batch, vocab_size)


@answer
def logits_shape_hidden(batch, seq_len, n_embd, **_):
    return (batch, seq_len, n_embd)


@answer
def logits_shape_flattened(batch, seq_len, vocab_size, **_):
    return (batch * seq_len, vocab_size)


@answer
def logits_bytes(batch, seq_len, vocab_size, dtype, **_):
    return batch * seq_len * vocab_size * _bytes(dtype)


@answer
def logits_elements(batch, seq_len, vocab_size, **_):
    return batch * seq_len * vocab_size


@answer
def logits_bytes_last_position(batch, vocab_size, dtype, **_):
    return batch * vocab_size * _bytes(dtype)


@answer
def logits_bytes_one_sequence(seq_len, vocab_size, dtype, **_):
    return seq_len * vocab_size * _bytes(dtype)


@answer
def uniform_loss_nats(vocab_size, **_):
    return math.log(vocab_size)


@answer
def uniform_loss_bits(vocab_size, **_):
    return math.log2(vocab_size)


@answer
def uniform_loss_negated(vocab_size, **_):
    return -math.log(vocab_size)


@answer
def two_token_prob(z1, z2, temperature, **_):
    return f.sigmoid((z1 - z2) / temperature)


@answer
def two_token_prob_multiplied(z1, z2, temperature, **_):
    return f.sigmoid((z1 - z2) * temperature)


@answer
def two_token_prob_no_temperature(z1, z2, **_):
    return f.sigmoid(z1 - z2)


TOP_PROB_RISES = "it rises: the distribution gets sharper"
TOP_PROB_FALLS = "it falls: the distribution gets flatter"
TOP_PROB_SAME = "it stays the same: the temperature leaves the probabilities alone"
TOP_CHOICE_CHANGES = "it can change, because another token may become the most likely"


@answer
def temperature_top_prob_change(t_old, t_new, **_):
    return TOP_PROB_RISES if t_new < t_old else TOP_PROB_FALLS


@answer
def temperature_top_prob_change_multiplied(t_old, t_new, **_):
    return TOP_PROB_FALLS if t_new < t_old else TOP_PROB_RISES


@answer
def temperature_top_prob_unchanged(**_):
    return TOP_PROB_SAME


@answer
def temperature_top_token_changes(**_):
    return TOP_CHOICE_CHANGES


@answer
def head_flops_per_token(vocab_size, n_embd, **_):
    return 2 * vocab_size * n_embd


@answer
def head_macs_per_token(vocab_size, n_embd, **_):
    return vocab_size * n_embd


@answer
def head_flops_with_lookup(vocab_size, n_embd, **_):
    return 4 * vocab_size * n_embd


def _untied_total(vocab_size, block_size, n_layer, n_embd):
    return f.gpt2_params(vocab_size, block_size, n_layer, n_embd, tied=False)


@answer
def tying_saving_pct(vocab_size, block_size, n_layer, n_embd, **_):
    return (
        100
        * vocab_size
        * n_embd
        / _untied_total(vocab_size, block_size, n_layer, n_embd)
    )


@answer
def tying_saving_pct_both_matrices(vocab_size, block_size, n_layer, n_embd, **_):
    return 2 * tying_saving_pct(vocab_size, block_size, n_layer, n_embd)


@answer
def tying_saving_pct_of_body(vocab_size, block_size, n_layer, n_embd, **_):
    body = n_layer * f.block_params(n_embd) + 2 * n_embd
    return 100 * vocab_size * n_embd / body


# Counting ----------------------------------------------------------------------


@answer
def gpt2_params_untied(vocab_size, block_size, n_layer, n_embd, **_):
    return _untied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def gpt2_params_untied_forgot_wpe(vocab_size, block_size, n_layer, n_embd, **_):
    return _untied_total(vocab_size, block_size, n_layer, n_embd) - block_size * n_embd


@answer
def weight_bytes(vocab_size, block_size, n_layer, n_embd, dtype, **_):
    return _tied_total(vocab_size, block_size, n_layer, n_embd) * _bytes(dtype)


@answer
def weight_bytes_fp32(vocab_size, block_size, n_layer, n_embd, **_):
    return _tied_total(vocab_size, block_size, n_layer, n_embd) * 4


@answer
def weight_bytes_tie_counted_twice(vocab_size, block_size, n_layer, n_embd, dtype, **_):
    n = _tied_total(vocab_size, block_size, n_layer, n_embd) + vocab_size * n_embd
    return n * _bytes(dtype)


@answer
def weight_bits(vocab_size, block_size, n_layer, n_embd, dtype, **_):
    return 8 * weight_bytes(vocab_size, block_size, n_layer, n_embd, dtype)


@answer
def adam_mixed_precision_bytes(vocab_size, block_size, n_layer, n_embd, **_):
    # bf16 weights 2 + bf16 gradients 2 + fp32 master 4 + two fp32 moments 8
    return 16 * _tied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def adam_mixed_precision_bytes_no_master(vocab_size, block_size, n_layer, n_embd, **_):
    # bf16 weights and gradients and fp32 moments, without the fp32 master copy
    return 12 * _tied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def adam_mixed_precision_bytes_all_bf16(vocab_size, block_size, n_layer, n_embd, **_):
    # weights, gradients and both moments in 2 bytes, no master copy
    return 8 * _tied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def adam_mixed_precision_bytes_three_moments(
    vocab_size, block_size, n_layer, n_embd, **_
):
    return 20 * _tied_total(vocab_size, block_size, n_layer, n_embd)


@answer
def block_activation_bytes(batch, seq_len, n_head, head_dim, **_):
    return f.block_activation_bytes(batch, seq_len, n_head * head_dim, n_head)


@answer
def block_activation_bytes_no_scores(batch, seq_len, n_head, head_dim, **_):
    scores = 4 * batch * n_head * seq_len * seq_len
    return block_activation_bytes(batch, seq_len, n_head, head_dim) - scores


@answer
def block_activation_bytes_one_head(batch, seq_len, n_head, head_dim, **_):
    scores = 4 * batch * (n_head - 1) * seq_len * seq_len
    return block_activation_bytes(batch, seq_len, n_head, head_dim) - scores


@answer
def block_activation_bytes_mask_per_sequence(batch, seq_len, n_head, head_dim, **_):
    masks = (batch - 1) * seq_len * seq_len
    return block_activation_bytes(batch, seq_len, n_head, head_dim) + masks


@answer
def block_activation_bytes_no_ln_stats(batch, seq_len, n_head, head_dim, **_):
    return (
        block_activation_bytes(batch, seq_len, n_head, head_dim) - 16 * batch * seq_len
    )


@answer
def forward_flops_per_token(vocab_size, n_layer, n_embd, seq_len, **_):
    return f.forward_flops_per_token(vocab_size, n_layer, n_embd, seq_len)


@answer
def forward_flops_per_token_2n(vocab_size, n_layer, n_embd, seq_len, **_):
    # the template's model has a context of seq_len positions (wpe's rows)
    return 2 * f.gpt2_params(vocab_size, seq_len, n_layer, n_embd)


@answer
def forward_flops_per_token_no_head(vocab_size, n_layer, n_embd, seq_len, **_):
    return forward_flops_per_token(vocab_size, n_layer, n_embd, seq_len) - (
        2 * vocab_size * n_embd
    )


@answer
def forward_flops_per_token_no_attention(vocab_size, n_layer, n_embd, **_):
    return f.forward_flops_per_token(vocab_size, n_layer, n_embd, 0)


@answer
def forward_flops_per_token_half_attention(vocab_size, n_layer, n_embd, seq_len, **_):
    return forward_flops_per_token(vocab_size, n_layer, n_embd, seq_len) - (
        f.attention_product_flops(n_layer, n_embd, seq_len) // 2
    )


def _hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, flops_per_param=6):
    n, d = n_params_m * 1e6, tokens_b * 1e9
    achieved = n_gpus * peak_tflops * 1e12 * mfu_pct / 100
    return flops_per_param * n * d / achieved / 3600


@answer
def train_hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, **_):
    return _hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct)


@answer
def train_hours_forward_only(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, **_):
    return _hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, flops_per_param=2)


@answer
def train_hours_one_gpu(n_params_m, tokens_b, peak_tflops, mfu_pct, **_):
    return _hours(n_params_m, tokens_b, 1, peak_tflops, mfu_pct)


@answer
def train_hours_mfu_multiplied(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, **_):
    mfu = mfu_pct / 100
    return _hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct) * mfu * mfu


@answer
def train_hours_in_seconds(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct, **_):
    return _hours(n_params_m, tokens_b, n_gpus, peak_tflops, mfu_pct) * 3600


def _budget(mantissa, exponent):
    return mantissa * 10**exponent


@answer
def chinchilla_tokens(mantissa, exponent, **_):
    return math.sqrt(_budget(mantissa, exponent) * 20 / 6)


@answer
def chinchilla_params(mantissa, exponent, **_):
    return math.sqrt(_budget(mantissa, exponent) / (6 * 20))


@answer
def chinchilla_tokens_six_outside(mantissa, exponent, **_):
    return math.sqrt(_budget(mantissa, exponent) * 20) / 6


@answer
def chinchilla_tokens_n_equals_d(mantissa, exponent, **_):
    return math.sqrt(_budget(mantissa, exponent) / 6)


@answer
def chinchilla_tokens_compute_nd(mantissa, exponent, **_):
    return math.sqrt(_budget(mantissa, exponent) * 20)


def _crossover(vocab_size, block_size, n_layer, n_embd, per_token_numbers):
    # weights and cache in the same dtype, so bytes per element cancel
    return f.ceil_div(
        _tied_total(vocab_size, block_size, n_layer, n_embd), per_token_numbers
    )


@answer
def kv_crossover_tokens(vocab_size, block_size, n_layer, n_embd, batch, **_):
    return _crossover(
        vocab_size, block_size, n_layer, n_embd, batch * 2 * n_layer * n_embd
    )


@answer
def kv_crossover_tokens_keys_only(vocab_size, block_size, n_layer, n_embd, batch, **_):
    return _crossover(vocab_size, block_size, n_layer, n_embd, batch * n_layer * n_embd)


@answer
def kv_crossover_tokens_one_sequence(vocab_size, block_size, n_layer, n_embd, **_):
    return _crossover(vocab_size, block_size, n_layer, n_embd, 2 * n_layer * n_embd)


@answer
def kv_crossover_tokens_one_layer(vocab_size, block_size, n_layer, n_embd, batch, **_):
    return _crossover(vocab_size, block_size, n_layer, n_embd, batch * 2 * n_embd)


# Training and inference --------------------------------------------------------


@answer
def predictions_per_batch(batch, row_len, **_):
    return batch * (row_len - 1)


@answer
def predictions_per_batch_every_token(batch, row_len, **_):
    return batch * row_len


@answer
def predictions_per_batch_one_row(row_len, **_):
    return row_len - 1


def _schedule(peak, warmup, decay, step, floor=None):
    min_lr = peak / 10 if floor is None else floor
    return f.cosine_lr(step, peak, min_lr, warmup, decay)


@answer
def cosine_lr(peak, warmup, decay, step, **_):
    return _schedule(peak, warmup, decay, step)


@answer
def cosine_lr_to_zero(peak, warmup, decay, step, **_):
    return _schedule(peak, warmup, decay, step, floor=0.0)


@answer
def cosine_lr_ignores_warmup(peak, warmup, decay, step, **_):
    return _schedule(peak, 0, decay, step)


@answer
def cosine_lr_linear(peak, warmup, decay, step, **_):
    ratio = (step - warmup) / (decay - warmup)
    return peak - ratio * (peak - peak / 10)


@answer
def cosine_lr_missing_pi(peak, warmup, decay, step, **_):
    ratio = (step - warmup) / (decay - warmup)
    min_lr = peak / 10
    return min_lr + 0.5 * (1.0 + math.cos(ratio)) * (peak - min_lr)


@answer
def decay_group_params(vocab_size, block_size, n_layer, n_embd, **_):
    return f.embedding_params(vocab_size, block_size, n_embd) + f.linear_weight_params(
        n_layer, n_embd
    )


@answer
def decay_group_params_tie_twice(vocab_size, block_size, n_layer, n_embd, **_):
    return decay_group_params(vocab_size, block_size, n_layer, n_embd) + (
        vocab_size * n_embd
    )


@answer
def decay_group_params_with_biases(vocab_size, block_size, n_layer, n_embd, **_):
    return decay_group_params(vocab_size, block_size, n_layer, n_embd) + f.bias_params(
        n_layer, n_embd
    )


@answer
def decay_group_params_with_ln_weights(vocab_size, block_size, n_layer, n_embd, **_):
    ln_weights = f.layernorm_params(n_layer, n_embd) // 2
    return decay_group_params(vocab_size, block_size, n_layer, n_embd) + ln_weights


@answer
def grad_total_norm(norm_a, norm_b, norm_c, **_):
    return math.sqrt(norm_a**2 + norm_b**2 + norm_c**2)


@answer
def grad_total_norm_summed(norm_a, norm_b, norm_c, **_):
    return norm_a + norm_b + norm_c


@answer
def grad_total_norm_rms(norm_a, norm_b, norm_c, **_):
    return math.sqrt((norm_a**2 + norm_b**2 + norm_c**2) / 3)


@answer
def adamw_zero_grad_step(lr, weight_decay, value, **_):
    return value * (1 - lr * weight_decay)


@answer
def adamw_zero_grad_step_without_lr(weight_decay, value, **_):
    return value * (1 - weight_decay)


@answer
def adamw_zero_grad_no_change(value, **_):
    # as if the decay only acted through the gradient
    return value


@answer
def adam_l2_zero_grad_step(lr, value, **_):
    # L2 decay added to the gradient: Adam's first step moves by lr in its sign
    return value - math.copysign(lr, value)
