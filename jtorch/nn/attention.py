"""Attention in functional form: scaled_dot_product_attention and the multi-head forward used
by ``nn.MultiheadAttention`` (batched matrix products plus a softmax, torch's mask rules)."""

from __future__ import annotations

import math

from ..amp import state as _amp
from ..tensor import Tensor

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _J():
    import jtorch

    return jtorch


def _float_mask(mask: Tensor | None, dtype, name: str = "attn_mask"):
    """Bool masks (True = take part) become additive float masks (-inf where False)."""
    if mask is None:
        return None
    J = _J()
    if mask.dtype is J.bool:
        return J.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask.logical_not(), float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two dims (batched over the leading ones).

    >>> q = jtorch.randn(2, 4, 8)
    >>> jtorch.nn.functional.scaled_dot_product_attention(q, q, q).shape
    torch.Size([2, 4, 8])
    """
    J = _J()
    if _amp.on:
        query, key, value, attn_mask = _amp.lower(query, key, value, attn_mask)
    L, S = query.shape[-2], key.shape[-2]
    scale_factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        attn_mask = J.ones(L, S, dtype=J.bool, device=query.device).tril()
    if enable_gqa:
        rep = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(rep, -3)
        value = value.repeat_interleave(rep, -3)
    scores = J.matmul(query, key.transpose(-2, -1)) * scale_factor
    bias = _float_mask(attn_mask, query.dtype)
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = J.nn.functional.dropout(weights, dropout_p, True)
    return J.matmul(weights, value)


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """torch's multi-head attention on (L, N, E) inputs (or unbatched (L, E))."""
    J = _J()
    F = J.nn.functional
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        attn_mask = J.ones(tgt_len, src_len, dtype=J.bool, device=query.device).tril().logical_not()
    if not use_separate_proj_weight:
        if query is key and key is value:
            q, k, v = F.linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q = b_k = b_v = None
            if in_proj_bias is not None:
                b_q, b_k, b_v = in_proj_bias.chunk(3)
            q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    else:
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = (F.linear(query, q_proj_weight, b_q), F.linear(key, k_proj_weight, b_k),
                   F.linear(value, v_proj_weight, b_v))
    # torch's attn_mask convention here: True = NOT allowed to attend
    if attn_mask is not None:
        if attn_mask.dtype is J.bool:
            attn_mask = J.zeros(attn_mask.shape, dtype=q.dtype, device=q.device).masked_fill(
                attn_mask, float("-inf"))
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        k = J.cat([k, bias_k.repeat(1, bsz, 1)])
        v = J.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        k = J.cat([k, J.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], 1)
        v = J.cat([v, J.zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask
        if kpm.dtype is J.bool:
            kpm = J.zeros(kpm.shape, dtype=q.dtype, device=q.device).masked_fill(kpm, float("-inf"))
        kpm = kpm.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    scores = J.bmm(q * (1.0 / math.sqrt(head_dim)), k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, True)
    out = J.bmm(weights, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if need_weights:
        w = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            w = w.mean(1)
        if not batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w
    if not batched:
        out = out.squeeze(1)
    return out, None
