"""Owns the part of the ATen-to-contract table (see _aten.py) for attention layers, the
inference fast paths PyTorch takes under no_grad with batch_first=True (torchvision's ViT, nn's
transformer layers): _transformer_encoder_layer_fwd (nn.TransformerEncoderLayer) as attention,
a feed-forward block, residual adds and layer norms (_aten_norm), and
_native_multi_head_attention (nn.MultiheadAttention) as the
input projection (one `linear` where query, key and value are one tensor), heads split by a
reshape and permute, the contract's `scaled_dot_product_attention` with the key padding or
attention mask (true, or any non-zero float, marks a position left out: the keep mask is its
negation), heads merged
and the output projection. convert(ctx, name, overload) returns None for other ops."""
import torch

from . import _convert
from ._aten_norm import layer_norm
from ._aten_products import _operands, _tf32
from ._aten_shape import _cast, _reshape_shape
from ._graph import Value
from ._symbolic import Extent


def _heads(ctx, x, heads, dim):
    """[B, L, H*D] -> [B, H, L, D]."""
    b, l, _ = x.shape
    split = [b, l, Extent(heads), Extent(dim)]
    shaped = ctx.tmp("reshape", [x], x.dtype, split, shape=_reshape_shape(ctx, split))
    return ctx.tmp("permute", [shaped], x.dtype, [b, Extent(heads), l, Extent(dim)],
                   dims=[0, 2, 1, 3])


def _columns(ctx, t, k, e):
    """Rows [k*e, (k+1)*e) of a [3E, ...] projection weight or bias (or a [B, L, 3E] product's
    last dim: `t` of rank 3)."""
    starts = [0] * t.rank
    ends = [d.json() for d in t.shape]
    d = t.rank - 1 if t.rank == 3 else 0
    starts[d], ends[d] = k * e, (k + 1) * e
    shape = list(t.shape)
    shape[d] = Extent(e)
    return ctx.tmp("slice", [t, ], t.dtype, shape, starts=starts, ends=ends)


def _linear(ctx, x, w, b, out):
    shape = list(x.shape[:-1]) + [out if isinstance(out, Extent) else Extent(out)]
    args = [x, w] + ([b] if isinstance(b, Value) else [])
    _operands(ctx, *args)  # the exporter's one-line refusal, as for a traced linear
    return ctx.tmp("linear", args, x.dtype, shape, allow_tf32=_tf32(x.dtype))


def _mask(ctx, mask, mask_type, b, heads, l, s):
    """The contract's mask from the fast path's: type 0 an attention mask [L, S], type 1 a key
    padding mask [B, S], type 2 one merged [B, H, L, S]; bool true leaves a position out."""
    if mask_type == 1:
        if mask.rank != 2:
            ctx.fail(f"a key padding mask of rank {mask.rank}")
        shape = [b, Extent(1), Extent(1), s]
        mask = ctx.tmp("reshape", [mask], mask.dtype, shape, shape=_reshape_shape(ctx, shape))
    elif mask_type not in (0, 2):
        ctx.fail(f"a multi-head attention mask of type {mask_type}")
    # The fast paths turn any mask to bool (masked_softmax: attn_mask.to(kBool)), a float one
    # too: every non-zero entry leaves its position out.
    if mask.dtype == torch.bool:
        return ctx.tmp("logical_not", [mask], torch.bool, mask.shape)
    if not mask.dtype.is_floating_point:
        ctx.fail(f"a multi-head attention mask of dtype {mask.dtype}")
    return ctx.tmp("eq", [mask, 0], torch.bool, mask.shape)


def _native_mha(ctx):
    q_in, k_in, v_in = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    e, heads = int(ctx.const(3, "embed_dim")), int(ctx.const(4, "num_head"))
    out = _attention(ctx, q_in, k_in, v_in, e, heads, ctx.tensor(5), ctx.arg(6, "qkv_bias"),
                     ctx.tensor(7), ctx.arg(8, "proj_bias"), ctx.arg(9, "mask", None),
                     ctx.const(12, "mask_type", None))
    weights = _convert.Unsupported(ctx.conv.describe(
        ctx.node, "cannot express the attention weights of multi-head attention "
                  "(need_weights=True) in a fuserc graph: pass need_weights=False"))
    return _convert.Multi([lambda c: c.result(out.name), weights])


def _encoder_layer(ctx):
    """nn.TransformerEncoderLayer's fast path: self-attention and a feed-forward block (ReLU
    or exact GELU), each with a residual add and a layer norm before (norm_first) or after."""
    src = ctx.tensor(0)
    e, heads = int(ctx.const(1, "embed_dim")), int(ctx.const(2, "num_heads"))
    use_gelu, norm_first = bool(ctx.const(7, "use_gelu")), bool(ctx.const(8, "norm_first"))
    eps = ctx.const(9, "eps")
    w1, b1 = ctx.tensor(14), ctx.arg(15, "ffn_bias_1")
    w2, b2 = ctx.tensor(16), ctx.arg(17, "ffn_bias_2")
    mask, mask_type = ctx.arg(18, "mask", None), ctx.const(19, "mask_type", None)

    def attention(x):
        return _attention(ctx, x, x, x, e, heads, ctx.tensor(3), ctx.arg(4, "qkv_bias"),
                          ctx.tensor(5), ctx.arg(6, "proj_bias"), mask, mask_type)

    def norm(x, k):
        y = layer_norm(ctx, x, 1, ctx.arg(10 + 2 * k), ctx.arg(11 + 2 * k), eps)[0]
        return _cast(ctx, y, x.dtype)

    def feed_forward(x):
        h = _linear(ctx, x, w1, b1, w1.shape[0])
        h = ctx.tmp("gelu" if use_gelu else "relu", [h], h.dtype, h.shape)
        return _linear(ctx, h, w2, b2, e)

    def add(a, b):
        return ctx.tmp("add", [a, b], a.dtype, a.shape)
    if norm_first:
        x = add(src, attention(norm(src, 0)))
        x = add(x, feed_forward(norm(x, 1)))
    else:
        x = norm(add(src, attention(src)), 0)
        x = norm(add(x, feed_forward(x)), 1)
    return ctx.result(x.name)


def _attention(ctx, q_in, k_in, v_in, e, heads, w, bias, pw, pb, mask, mask_type):
    """Multi-head attention of [B, L, E] inputs: the output projection's Value."""
    if q_in.rank != 3 or k_in.rank != 3 or v_in.rank != 3:
        ctx.fail("multi-head attention of unbatched or nested inputs")
    if e % heads:
        ctx.fail(f"multi-head attention of {e} dims in {heads} heads")
    d = e // heads
    if q_in.name == k_in.name == v_in.name:
        qkv = _linear(ctx, q_in, w, bias, 3 * e)  # one product for the three projections
        q, k, v = (_columns(ctx, qkv, j, e) for j in range(3))
    else:
        def proj(x, j):
            wj = _columns(ctx, w, j, e)
            bj = _columns(ctx, bias, j, e) if isinstance(bias, Value) else None
            return _linear(ctx, x, wj, bj, e)
        q, k, v = proj(q_in, 0), proj(k_in, 1), proj(v_in, 2)
    qh, kh, vh = _heads(ctx, q, heads, d), _heads(ctx, k, heads, d), _heads(ctx, v, heads, d)
    b, l, s = q_in.shape[0], q_in.shape[1], k_in.shape[1]
    args = [qh, kh, vh]
    if isinstance(mask, Value):
        args.append(_mask(ctx, mask, mask_type, b, heads, l, s))
    att = ctx.tmp("scaled_dot_product_attention", args, q_in.dtype,
                  [b, Extent(heads), l, Extent(d)])
    merged = ctx.tmp("permute", [att], att.dtype, [b, l, Extent(heads), Extent(d)],
                     dims=[0, 2, 1, 3])
    flat = ctx.tmp("reshape", [merged], att.dtype, [b, l, Extent(e)],
                   shape=_reshape_shape(ctx, [b, l, Extent(e)]))
    return _linear(ctx, flat, pw, pb, e)


# The fused kernels PyTorch 2 lowers scaled_dot_product_attention to (torch.export before its
# training IR, or its decompositions): name -> (positions of attn_mask / attn_bias, dropout_p
# and is_causal; None where keyword-only or absent). Their first result is the attention;
# the others (log-sum-exp, seeds, sequence offsets) are refused where used.
_FUSED_SDPA = {
    "_scaled_dot_product_flash_attention_for_cpu": (None, 3, 4),
    "_scaled_dot_product_flash_attention": (None, 3, 4),
    "_scaled_dot_product_efficient_attention": (3, 5, 6),
    "_scaled_dot_product_cudnn_attention": (3, 5, 6),
}


def _sdpa(ctx, name):
    """PyTorch 2's scaled_dot_product_attention (and the fused kernels torch.export may
    decompose it to, _FUSED_SDPA) as the contract's op, which has PyTorch's semantics (a bool
    mask keeps what is true, a float one is added) without dropout."""
    q, k, v = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    if name == "scaled_dot_product_attention":
        mask = ctx.arg(3, "attn_mask", None)
        dropout, causal = ctx.const(4, "dropout_p", 0.0), ctx.const(5, "is_causal", False)
        gqa = ctx.const(None, "enable_gqa", False)
    else:
        at_mask, at_dropout, at_causal = _FUSED_SDPA[name]
        dropout = ctx.const(at_dropout, "dropout_p", 0.0)
        causal = ctx.const(at_causal, "is_causal", False)
        mask = ctx.arg(at_mask, "attn_bias", None) if at_mask is not None else \
            ctx.arg(None, "attn_mask", None)
        gqa = False
    scale = ctx.const(None, "scale", None)
    if dropout:
        ctx.fail(f"attention with dropout_p={dropout}: fuserc maps attention without dropout "
                 "(the module in eval(), or dropout written out)")
    args = [q, k, v] + ([mask] if isinstance(mask, Value) else [])
    shape = list(q.shape[:-1]) + [v.shape[-1]]
    out = ctx.tmp("scaled_dot_product_attention", args, q.dtype, shape,
                  is_causal=True if causal else None, scale=scale,
                  enable_gqa=True if gqa else None, allow_tf32=_tf32(q.dtype))
    if name == "scaled_dot_product_attention":
        return ctx.result(out.name)
    rest = _convert.Unsupported(ctx.conv.describe(
        ctx.node, "cannot express the log-sum-exp, seeds or offsets of fused attention in a "
                  "fuserc graph"))
    results = len(ctx.node.target._schema.returns)
    return _convert.Multi([lambda c: c.result(out.name)] + [rest] * (results - 1))


def convert(ctx, name, overload):
    if name == "scaled_dot_product_attention" or name in _FUSED_SDPA:
        return _sdpa(ctx, name)
    if name == "_native_multi_head_attention":
        return _native_mha(ctx)
    if name == "_transformer_encoder_layer_fwd":
        return _encoder_layer(ctx)
    return None
