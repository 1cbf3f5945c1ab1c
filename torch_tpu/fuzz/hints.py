"""Argument presets for op families whose arguments must fit together.

Drawn blind, a matmul's second operand or a convolution's weight almost never
fits, and every draw would test only the shape check. A hint draws fitting
shapes (with a deliberately wrong one now and then) and presets those
arguments; `args.py` draws the rest.

Backward ops are called by autograd with the outputs of their forward op
(pooling indices, norm statistics, a loss's total weight). The CPU kernels
trust those (some read past a buffer given a wrong one, and an undefined CPU
result is no reference), so their hints run the forward op on the CPU and
pass its outputs as literal values.
"""
import math
import re

import torch
from hypothesis import strategies as st

from .args import spatial_dims
from .tensors import FLOAT_DTYPES, I64, TensorSpec, make, tensors

MATMUL = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "dot", "vdot", "mv", "addmv", "addr"}


def _dims(draw, n, lo=0, hi=4):
    return [draw(st.integers(lo, hi)) for _ in range(n)]


def _maybe_off(draw, k):
    """k, or (rarely) k+1: an inner dimension that does not fit."""
    return k + 1 if draw(st.integers(0, 9)) == 0 else k


def _t(draw, ctx, shape, dtype=None, **kw):
    return draw(tensors(tuple(shape), dtype or ctx.dtype, **kw))


def matmul(draw, ctx, op):
    b, n, k, m = _dims(draw, 4)
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES + [I64, torch.int32, torch.complex64]))
    p = ctx.preset
    if op == "mm":
        ctx.shape, p["mat2"] = (n, k), _t(draw, ctx, (_maybe_off(draw, k), m))
    elif op == "bmm":
        ctx.shape, p["mat2"] = (b, n, k), _t(draw, ctx, (b, _maybe_off(draw, k), m))
    elif op in ("dot", "vdot"):
        ctx.shape = (k,)
        p["tensor" if op == "dot" else "other"] = _t(draw, ctx, (_maybe_off(draw, k),))
    elif op == "mv":
        ctx.shape, p["vec"] = (n, k), _t(draw, ctx, (_maybe_off(draw, k),))
    elif op == "addmm":
        ctx.shape = draw(st.sampled_from([(n, m), (m,), (), (1, m)]))
        p["mat1"], p["mat2"] = _t(draw, ctx, (n, k)), _t(draw, ctx, (_maybe_off(draw, k), m))
    elif op == "baddbmm":
        ctx.shape = draw(st.sampled_from([(b, n, m), (n, m), ()]))
        p["batch1"], p["batch2"] = _t(draw, ctx, (b, n, k)), _t(draw, ctx, (b, _maybe_off(draw, k), m))
    elif op == "addbmm":
        ctx.shape = draw(st.sampled_from([(n, m), (m,)]))
        p["batch1"], p["batch2"] = _t(draw, ctx, (b, n, k)), _t(draw, ctx, (b, _maybe_off(draw, k), m))
    elif op == "addmv":
        ctx.shape = draw(st.sampled_from([(n,), ()]))
        p["mat"], p["vec"] = _t(draw, ctx, (n, k)), _t(draw, ctx, (_maybe_off(draw, k),))
    elif op == "addr":
        ctx.shape = draw(st.sampled_from([(n, m), (m,)]))
        p["vec1"], p["vec2"] = _t(draw, ctx, (n,)), _t(draw, ctx, (m,))


def spatial_shape(draw, nsp, lo=2, hi=6, batched=True):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    sp = [draw(st.integers(lo, hi)) for _ in range(nsp)]
    return tuple(([n] if batched else []) + [c] + sp)


def convolution(draw, ctx, op):
    nsp = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 1, 2]))
    n, cin_g, cout_g = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ctx.shape = tuple([n, cin_g * groups] + [draw(st.integers(3, 5)) for _ in range(nsp)])
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))
    transposed = draw(st.booleans())
    k = [draw(st.integers(1, 3)) for _ in range(nsp)]
    w = ([cin_g * groups, cout_g] if transposed else [cout_g * groups, cin_g]) + k
    p = ctx.preset
    p["weight"] = _t(draw, ctx, w)
    p["bias"] = draw(st.sampled_from([None, "b"]))
    cout = cout_g * groups
    if p["bias"] == "b":
        p["bias"] = _t(draw, ctx, (cout,))
    p["stride"] = [draw(st.integers(1, 2)) for _ in range(nsp)]
    p["padding"] = [draw(st.integers(0, 1)) for _ in range(nsp)]
    p["dilation"] = [draw(st.integers(1, 2)) for _ in range(nsp)]
    p["transposed"] = transposed
    p["output_padding"] = [0] * nsp if not transposed else [draw(st.integers(0, s - 1)) for s in p["stride"]]
    p["groups"] = groups
    if op == "convolution_backward":
        inp = _t(draw, ctx, ctx.shape)
        fwd = _forward(torch.ops.aten.convolution.default, inp, p["weight"], p["bias"], p["stride"], p["padding"],
                       p["dilation"], transposed, p["output_padding"], groups)
        p["input"], p["bias_sizes"] = inp, [cout] if p.pop("bias") is not None else None
        p["grad_output"] = _t(draw, ctx, fwd.shape) if fwd is not None else _t(draw, ctx, ctx.shape)


def _materialize(spec):
    return make(spec, "cpu") if isinstance(spec, TensorSpec) else spec


def _forward(fn, *args):
    """fn on the CPU with specs materialized; None if it raises."""
    try:
        return fn(*[_materialize(a) for a in args])
    except Exception:  # noqa: BLE001 - the backward call is then drawn blind
        return None


def literal_of(t):
    """A TensorSpec holding tensor t's values (a forward op's output)."""
    t = t.detach().contiguous()
    return TensorSpec(tuple(t.shape), t.dtype, values=tuple(t.flatten().tolist()))


POOL_FWD = {
    "max_pool2d_with_indices_backward": torch.ops.aten.max_pool2d_with_indices.default,
    "max_pool3d_with_indices_backward": torch.ops.aten.max_pool3d_with_indices.default,
    "avg_pool2d_backward": torch.ops.aten.avg_pool2d.default,
    "avg_pool3d_backward": torch.ops.aten.avg_pool3d.default,
    "adaptive_max_pool2d_backward": torch.ops.aten.adaptive_max_pool2d.default,
    "adaptive_max_pool3d_backward": torch.ops.aten.adaptive_max_pool3d.default,
    "_adaptive_avg_pool2d_backward": torch.ops.aten._adaptive_avg_pool2d.default,
    "_adaptive_avg_pool3d_backward": torch.ops.aten._adaptive_avg_pool3d.default,
}


def spatial(draw, ctx, op):
    """Pooling, padding, upsampling, im2col: (N, C, *spatial) inputs."""
    nsp = spatial_dims(op) or 2
    if op == "col2im":
        c, k = draw(st.integers(1, 2)), [draw(st.integers(1, 2)) for _ in range(2)]
        out = [draw(st.integers(2, 4)) for _ in range(2)]
        p = ctx.preset
        p["output_size"], p["kernel_size"] = out, k
        p["dilation"], p["padding"], p["stride"] = [1, 1], [0, 0], [1, 1]
        blocks = math.prod(o - kk + 1 for o, kk in zip(out, k))
        ctx.shape = (draw(st.integers(1, 2)), c * k[0] * k[1], _maybe_off(draw, blocks))
        return
    ctx.shape = spatial_shape(draw, nsp, batched=draw(st.integers(0, 4)) > 0)
    if "upsample" in op and op.endswith("_backward"):
        ins = spatial_shape(draw, nsp)
        outs = [draw(st.integers(1, 6)) for _ in range(nsp)]
        ctx.preset["input_size"], ctx.preset["output_size"] = list(ins), outs
        ctx.shape = tuple(ins[:2]) + tuple(outs)
        if draw(st.integers(0, 9)) == 0:
            ctx.shape = ctx.shape[:-1] + (ctx.shape[-1] + 1,)
    if "pad" in op:
        ctx.preset["padding"] = [draw(st.integers(-1, 2)) for _ in range(2 * nsp)]
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES + FLOAT_DTYPES + [I64]))
    fwd = POOL_FWD.get(op)
    if fwd is None and not (("pad" in op) and op.endswith("_backward")):
        return
    # A backward op: draw the forward's arguments, run it on the CPU.
    p = ctx.preset
    p["self"] = _t(draw, ctx, ctx.shape)
    if op.startswith(("max_pool", "avg_pool")):
        p["kernel_size"] = [draw(st.integers(1, 3)) for _ in range(nsp)]
        p["stride"] = [draw(st.integers(1, 2)) for _ in range(nsp)]
        p["padding"] = [draw(st.integers(0, 1)) for _ in range(nsp)]
        p["ceil_mode"] = draw(st.booleans())
        if op.startswith("max"):
            p["dilation"] = [draw(st.integers(1, 2)) for _ in range(nsp)]
            out = _forward(fwd, p["self"], p["kernel_size"], p["stride"], p["padding"], p["dilation"],
                           p["ceil_mode"])
        else:
            p["count_include_pad"] = draw(st.booleans())
            p["divisor_override"] = draw(st.sampled_from([None, None, 2]))
            out = _forward(fwd, p["self"], p["kernel_size"], p["stride"], p["padding"], p["ceil_mode"],
                           p["count_include_pad"], p["divisor_override"])
    elif fwd is not None:
        out = _forward(fwd, p["self"], [draw(st.integers(1, 3)) for _ in range(nsp)])
    else:   # reflection/replication pad backward
        fn = getattr(torch.ops.aten, op[:-len("_backward")]).default
        out = _forward(fn, p["self"], p["padding"])
    if out is None:
        return
    if isinstance(out, tuple):
        p["indices"] = literal_of(out[1])
        out = out[0]
    p["grad_output"] = _t(draw, ctx, out.shape)


def _norm_dtype(draw, ctx):
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))


def norm(draw, ctx, op):
    _norm_dtype(draw, ctx)
    p = ctx.preset
    if "layer_norm" in op:
        ctx.shape = draw(st.sampled_from([(2, 3), (2, 3, 4), (4,), (3, 0), (2, 2, 3, 3)]))
        k = draw(st.integers(1, len(ctx.shape)))
        ns = list(ctx.shape[len(ctx.shape) - k:])
        p["normalized_shape"] = ns if draw(st.integers(0, 9)) else ns[:-1] + [ns[-1] + 1]
        for name in ("weight", "bias"):
            p[name] = draw(st.sampled_from([None, "w"]))
            p[name] = _t(draw, ctx, ns) if p[name] else None
        if op.endswith("backward"):
            inp = _t(draw, ctx, ctx.shape)
            out = _forward(torch.ops.aten.native_layer_norm.default, inp, ns, p["weight"], p["bias"], 1e-5)
            p["input"] = inp
            # as autograd asks: no gradient for a missing weight or bias
            p["output_mask"] = [draw(st.booleans()), p["weight"] is not None, p["bias"] is not None]
            if out is not None:
                p["grad_out"], p["mean"], p["rstd"] = _t(draw, ctx, ctx.shape), literal_of(out[1]), literal_of(out[2])
        return
    ctx.shape = draw(st.sampled_from([(2, 4), (2, 4, 3), (1, 2, 3, 3), (3, 2, 2, 1, 2), (2, 6, 1)]))
    c = ctx.shape[1]
    if "group_norm" in op:
        n, hw = ctx.shape[0], math.prod(ctx.shape[2:])
        group = draw(st.sampled_from([g for g in (1, 2, 3, 4, 6) if c % g == 0] + [5]))
        p.update(N=n, C=c, HxW=hw, group=group)
        for name in ("weight", "bias"):
            p[name] = _t(draw, ctx, (c,)) if draw(st.booleans()) else None
        if op.endswith("backward"):
            inp = _t(draw, ctx, ctx.shape)
            out = _forward(torch.ops.aten.native_group_norm.default, inp, p["weight"], None, n, c, hw, group, 1e-5)
            p["input"] = inp
            p["output_mask"] = [draw(st.booleans())] + [p["weight"] is not None] * 2
            if out is not None:
                p["grad_out"], p["mean"], p["rstd"] = _t(draw, ctx, ctx.shape), literal_of(out[1]), literal_of(out[2])
        return
    # batch norm: per-channel tensors of exactly C (the CPU kernels read C of them unchecked)
    # (saved statistics always given: the CPU's batch_norm_backward reads a missing save_mean and dies)
    for name in ("weight", "bias", "running_mean", "save_mean"):
        p[name] = _t(draw, ctx, (c,)) if draw(st.integers(0, 3)) or name.startswith(("running", "save")) else None
    for name in ("running_var", "save_invstd", "save_var"):
        p[name] = _t(draw, ctx, (c,), styles=["positive"])
    if op in ("batch_norm_backward", "native_batch_norm_backward"):
        p["grad_out"], p["input"] = _t(draw, ctx, ctx.shape), _t(draw, ctx, ctx.shape)
        if p["weight"] is None and op == "batch_norm_backward":
            p["weight"] = _t(draw, ctx, (c,))
        p["reserve"] = TensorSpec((0,), torch.uint8)


def loss(draw, ctx, op):
    _norm_dtype(draw, ctx)
    p = ctx.preset
    reduction = draw(st.sampled_from([0, 1, 2]))
    p["reduction"] = reduction
    if op.startswith("nll_loss"):
        two_d = op.startswith("nll_loss2d")
        n, c = draw(st.integers(0, 3)), draw(st.integers(1, 4))
        ctx.shape = (n, c, 2, 3) if two_d else draw(st.sampled_from([(n, c), (c,)]))
        tshape = (n, 2, 3) if two_d else ctx.shape[:-1]
        ignore = draw(st.sampled_from([-100, 0, 1]))
        g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
        vals = torch.randint(0, c, tshape, generator=g)
        if vals.numel() and draw(st.integers(0, 3)) == 0:
            vals.view(-1)[0] = ignore
        if vals.numel() and draw(st.integers(0, 9)) == 0:
            vals.view(-1)[-1] = c      # out of range: both must raise
        p["target"] = literal_of(vals)
        p["ignore_index"] = ignore
        p["weight"] = _t(draw, ctx, (c,), styles=["positive"]) if draw(st.booleans()) else None
        if op.endswith("backward"):
            inp = _t(draw, ctx, ctx.shape)
            fwd = torch.ops.aten.nll_loss2d_forward if two_d else torch.ops.aten.nll_loss_forward
            out = _forward(fwd.default, inp, p["target"], p["weight"], reduction, ignore)
            p["self"] = inp
            if out is not None:
                p["grad_output"], p["total_weight"] = _t(draw, ctx, out[0].shape), literal_of(out[1])
        return
    ctx.shape = draw(st.sampled_from([(2, 3), (4,), (), (2, 0), (2, 2, 3)]))
    styles = ["positive"] if "binary" in op else None
    kw = {"styles": ["normal"]} if styles is None else {}
    if "binary" in op:
        # weight of the input's shape (a larger one leaves the CPU's out= unresized)
        p["weight"] = _t(draw, ctx, ctx.shape) if draw(st.booleans()) else None
        # probabilities in [0, 1]: values of a sigmoid
        p["self"] = literal_of(torch.sigmoid(make(_t(draw, ctx, ctx.shape), "cpu").float()).to(ctx.dtype))
        p["target"] = literal_of(torch.sigmoid(make(_t(draw, ctx, ctx.shape), "cpu").float()).to(ctx.dtype))
    else:
        p["target"] = _t(draw, ctx, ctx.shape, **kw)
    if op.endswith("backward"):
        p["grad_output"] = _t(draw, ctx, ctx.shape if reduction == 0 else ())


def linalg(draw, ctx, op):
    ctx.dtype = draw(st.sampled_from([torch.float32, torch.float32, torch.float64]))
    n = draw(st.integers(0, 4))
    batch = draw(st.sampled_from([(), (), (2,)]))
    ctx.shape = batch + (n, n)
    p = ctx.preset
    spd = draw(st.booleans())
    if spd and op in ("cholesky", "linalg_cholesky_ex", "_linalg_eigh", "cholesky_inverse", "_cholesky_solve_helper"):
        # symmetric positive definite: M M^T + n I
        m = make(_t(draw, ctx, ctx.shape), "cpu")
        a = m @ m.mT + n * torch.eye(n, dtype=ctx.dtype)
        if op in ("cholesky_inverse", "_cholesky_solve_helper"):
            a, info = torch.linalg.cholesky_ex(a)   # (special values can make it fail: then no factor)
            if bool(info.ne(0).any()):
                return
        key = {"_linalg_eigh": "A", "_cholesky_solve_helper": "A"}.get(op, "self")
        p[key] = literal_of(a)
    if op in ("linalg_qr", "linalg_householder_product", "_linalg_svd"):
        m, k = draw(st.integers(0, 4)), draw(st.integers(0, 4))
        ctx.shape = batch + (max(m, k), min(m, k)) if op == "linalg_householder_product" else batch + (m, k)
        if op == "linalg_householder_product":
            p["tau"] = _t(draw, ctx, batch + (min(m, k),))
    if op in ("linalg_lu_solve", "lu_unpack"):
        lu, piv, _ = torch.linalg.lu_factor_ex(make(_t(draw, ctx, ctx.shape), "cpu"))
        key = "LU" if op == "linalg_lu_solve" else "LU_data"
        p[key], p["pivots" if op == "linalg_lu_solve" else "LU_pivots"] = literal_of(lu), literal_of(piv)
    if op in ("linalg_lu_solve", "linalg_solve_triangular", "triangular_solve", "_cholesky_solve_helper"):
        other = "B" if op in ("linalg_lu_solve", "linalg_solve_triangular") else (
            "A" if op == "triangular_solve" else "self")
        if op == "triangular_solve":   # (b, A): A is the matrix
            p["self"] = _t(draw, ctx, batch + (n, draw(st.integers(1, 3))))
            p["A"] = _t(draw, ctx, ctx.shape, styles=["positive"])
        elif other not in p:
            p[other] = _t(draw, ctx, batch + (_maybe_off(draw, n), draw(st.integers(1, 3))))
        if op == "_cholesky_solve_helper" and "A" not in p:
            p["A"] = _t(draw, ctx, ctx.shape)
    if op == "linalg_solve_triangular":
        # well-conditioned triangular systems: diagonal away from zero
        p["self"] = _t(draw, ctx, ctx.shape, styles=["positive"])


def cross(draw, ctx, op):
    ctx.shape = draw(st.sampled_from([(3,), (2, 3), (4, 3), (3, 2), (2, 3, 3)]))
    ctx.preset["other"] = _t(draw, ctx, draw(st.sampled_from([ctx.shape, ctx.shape, (3,), (2, 3)])))


def embedding_backward(draw, ctx, op):
    num, dim = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    ishape = draw(st.sampled_from([(3,), (2, 2), ()]))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2 ** 16)))
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))
    ctx.shape = ishape + (dim,)
    ctx.preset.update(indices=literal_of(torch.randint(0, num, ishape, generator=g)), num_weights=num,
                      padding_idx=draw(st.sampled_from([-1, 0, 1])))


def softmax_backward(draw, ctx, op):
    """input_dtype is the forward input's: the gradient's dtype, or half when
    the forward ran with half_to_float (a float32 gradient)."""
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))
    halves = [torch.float16, torch.bfloat16] if ctx.dtype == torch.float32 else []
    ctx.preset["input_dtype"] = draw(st.sampled_from([ctx.dtype] * 3 + halves))


def rnn_cell(draw, ctx, op):
    """Fused LSTM/GRU cells: gates (B, 4H or 3H); the backward's workspace from the forward."""
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))
    b, h = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    lstm = "lstm" in op
    g = 4 * h if lstm else 3 * h
    ctx.shape = (b, g)
    p = ctx.preset
    p["hidden_gates"] = _t(draw, ctx, (b, g))
    p["cx" if lstm else "hx"] = _t(draw, ctx, (b, h))
    has_bias = draw(st.booleans())
    p["input_bias"] = p["hidden_bias"] = _t(draw, ctx, (g,)) if has_bias else None
    if not op.endswith(("backward", "backward_impl")):
        return
    fwd = torch.ops.aten._thnn_fused_lstm_cell if lstm else torch.ops.aten._thnn_fused_gru_cell
    inp = _t(draw, ctx, (b, g))
    out = _forward(fwd.default, inp, p["hidden_gates"], p["cx" if lstm else "hx"], p["input_bias"],
                   p["hidden_bias"])
    for k in ("hidden_gates", "input_bias", "hidden_bias", "hx"):
        p.pop(k, None)
    p["has_bias"] = has_bias
    if out is None:
        return
    if lstm:
        p["grad_hy"], p["grad_cy"] = _t(draw, ctx, (b, h)), _t(draw, ctx, (b, h))
        p["cy"], p["workspace"] = literal_of(out[1]), literal_of(out[2])
        ctx.shape = (b, h)
    else:
        p["grad_hy"], p["workspace"] = _t(draw, ctx, (b, h)), literal_of(out[1])
        ctx.shape = (b, h)


def unfold_backward(draw, ctx, op):
    ins = list(draw(st.sampled_from([(5,), (2, 6), (3, 4)])))
    dim, size, step = draw(st.integers(0, len(ins) - 1)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    n = max(0, (ins[dim] - size) // step + 1)
    shape = ins[:dim] + [n] + ins[dim + 1:] + [size]
    ctx.shape = tuple(shape)
    ctx.preset.update(input_sizes=ins, dim=dim, size=size, step=step)


def log_sigmoid_backward(draw, ctx, op):
    """The buffer argument is what the forward returned for this input."""
    ctx.dtype = draw(st.sampled_from(FLOAT_DTYPES))
    x = _t(draw, ctx, ctx.shape)
    out = _forward(torch.ops.aten.log_sigmoid_forward.default, x)
    ctx.preset["self"] = x
    if out is not None:
        ctx.preset["buffer"] = literal_of(out[1])


def polynomial(draw, ctx, op):
    """Orthogonal polynomials: the CPU evaluates a degree-n recurrence, so a
    huge n (int32 max) runs for minutes: degrees from -2 to 9."""
    n = draw(st.one_of(st.integers(-2, 9), st.sampled_from([0.5, 2.5, 3.0])))
    if "n_scalar" in ctx.op:
        ctx.preset["n"] = n
    else:
        ctx.preset["n"] = draw(tensors(draw(st.sampled_from([ctx.shape, ()])),
                                       draw(st.sampled_from([ctx.dtype, torch.int64, torch.float32])),
                                       styles=["small"]))


FAMILIES = [
    (lambda op: op in MATMUL, matmul),
    (lambda op: op in ("convolution", "_convolution", "convolution_backward"), convolution),
    (lambda op: re.search(r"pool|pad\dd|upsample|im2col|col2im", op) is not None, spatial),
    (lambda op: re.search(r"batch_norm|layer_norm|group_norm", op) is not None, norm),
    (lambda op: re.search(r"loss|binary_cross_entropy", op) is not None, loss),
    (lambda op: op.startswith(("linalg_", "_linalg_", "cholesky", "_cholesky", "lu_unpack", "triangular_solve"))
     and op != "linalg_vector_norm" and op != "linalg_cross", linalg),
    (lambda op: op == "linalg_cross", cross),
    (lambda op: op == "embedding_dense_backward", embedding_backward),
    (lambda op: op.endswith("softmax_backward_data"), softmax_backward),
    (lambda op: op.startswith("_thnn_fused"), rnn_cell),
    (lambda op: op == "unfold_backward", unfold_backward),
    (lambda op: op == "log_sigmoid_backward", log_sigmoid_backward),
    (lambda op: re.fullmatch(r"special_\w+_polynomial_\w+", op) is not None, polynomial),
]


def apply(draw, ctx):
    """Presets the family's arguments (and base shape/dtype); False if no family."""
    base = ctx.op.split(".")[0]
    for match, fn in FAMILIES:
        if match(base):
            fn(draw, ctx, base)
            return True
    return False
