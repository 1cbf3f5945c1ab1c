"""What a CPU result pins down, and when it pins down nothing.

Most results are compared exactly (dtype, shape, assert_close values). Some
are defined only up to a choice the backend may make otherwise (`canon_for`):

* indices of tied values (sort with stable unset, topk, kthvalue, median,
  mode, cummax/cummin) are compared by the input values they select;
  unsorted topk as a set. argmax/argmin and max/min.dim are documented to
  return the first occurrence, so they are compared exactly;
* eigenvectors, singular vectors and QR factors: signs. Each vector's first
  large entry is made positive when the values are distinct; with repeated
  values the vectors are any basis of a subspace: the reconstruction is
  compared instead;
* outputs whose output_mask entry is False; norm statistics in the CPU's dtype.

`undefined` names draws whose CPU result is undefined before running them
(duplicate-index writes, float-to-int casts out of range, ...). `excuse`
looks at a draw that differs and says when the CPU's result is no reference
after all: writes into overlapping memory, non-finite inputs to accumulating
ops or linear algebra, or a CPU kernel shown wrong by its own other runs (on
contiguous copies, as the functional op, twice, in float64).
"""
import re

import torch

from .tensors import TensorSpec, make

# op base name -> default dim (the indices are the second output)
TIE_OPS = {"sort": -1, "topk": -1, "kthvalue": -1, "median": None, "nanmedian": None, "mode": -1,
           "cummax": None, "cummin": None}
DUP_WRITE_OPS = {"index_put", "_index_put_impl", "put", "index_copy", "scatter"}


def _arg(call, name, default=None):
    for n, v, _ in call.args:
        if n == name:
            return v
    return default


def _cpu(v):
    return make(v, "cpu") if isinstance(v, TensorSpec) else v


def _tie_canon(call, outs):
    x, dim = _cpu(_arg(call, "self")), _arg(call, "dim", TIE_OPS[call.target.split(".")[0]])
    if not isinstance(x, torch.Tensor) or dim is None or len(outs) < 2 or not isinstance(outs[1], tuple):
        return outs
    dev, idx = outs[1]
    try:
        d = dim % max(x.dim(), 1)
        if x.dim() == 0:
            return outs
        gi = idx if idx.dim() == x.dim() else idx.unsqueeze(d)
        vals = x.gather(d, gi)
        if idx.dim() != x.dim():
            vals = vals.squeeze(d)
    except Exception:  # noqa: BLE001 - invalid indices: compared as they are
        return outs
    if call.target.startswith("topk") and _arg(call, "sorted", True) is False:
        # unsorted topk: any order of the k results; compared in sorted order
        d = dim % max(outs[0][1].dim(), 1)
        order = outs[0][1].argsort(dim=d, stable=True) if outs[0][1].dim() else None
        if order is not None:
            return [(outs[0][0], outs[0][1].gather(d, order)), (dev, vals.gather(d, order))] + list(outs[2:])
    return [outs[0], (dev, vals)] + list(outs[2:])


def _distinct(vals, scale):
    v = vals.detach().abs().double() if not vals.dtype.is_floating_point else vals.double()
    if v.shape[-1] < 2:
        return True
    s = v.sort(-1).values
    return bool(((s[..., 1:] - s[..., :-1]).abs() > 1e-3 * (scale + 1)).all())


def _sign_fix(q, axis_rows):
    """Columns of q (rows if axis_rows) flipped so that their first entry of
    at least a tenth of the largest magnitude is positive (ties in magnitude
    cannot flip the choice)."""
    d = -2 if not axis_rows else -1
    a = q.abs()
    big = a >= 0.1 * a.amax(d, keepdim=True)
    m = big.to(torch.uint8).argmax(d, keepdim=True)   # the first such entry
    pick = q.gather(d, m)
    s = torch.where(pick < 0, -1.0, 1.0).to(q.dtype)
    return q * s, s


def _eigh_canon(call, outs):
    (_, lam), (dq, q) = outs[0], outs[1]
    if q.numel() == 0 or lam.numel() == 0:
        return outs
    if _distinct(lam, float(lam.abs().max())):
        return [outs[0], (dq, _sign_fix(q, False)[0])]
    rec = (q * lam.unsqueeze(-2).to(q.dtype)) @ q.mH
    return [outs[0], (dq, rec)]


def _eigen_gaps(lam):
    """|lam_i - lam_j| for every pair of a batch of eigenvalues, inf on the diagonal."""
    gap = (lam.unsqueeze(-1) - lam.unsqueeze(-2)).abs()
    return gap.masked_fill(torch.eye(lam.shape[-1], dtype=torch.bool), float("inf"))


def _eig_canon(call, outs):
    """linalg_eig's vectors are defined up to a phase (its docs): each column
    turned so that its first entry of at least a tenth of the largest magnitude
    is real and positive, where the eigenvalues are distinct."""
    if len(outs) < 2 or not isinstance(outs[1], tuple):
        return outs
    (_, lam), (dv, v) = outs[0], outs[1]
    if v.numel() == 0 or lam.numel() == 0 or not v.is_complex() or not bool(lam.isfinite().all()):
        return outs
    if not bool((_eigen_gaps(lam) > 1e-3 * (float(lam.abs().max()) + 1)).all()):
        # (nearly) repeated eigenvalues: any basis of the eigenspace, so the
        # residual A V - V diag(w), relative to |A|, is compared (both ~0)
        a = _cpu(_arg(call, "self"))
        if not isinstance(a, torch.Tensor) or not bool(a.isfinite().all()):
            return outs
        a = a.to(v.dtype)
        res = (a @ v - v * lam.unsqueeze(-2).to(v.dtype)) / (float(a.abs().max()) + 1)
        return [outs[0], (dv, res)]
    a = v.abs()
    m = (a >= 0.1 * a.amax(-2, keepdim=True)).to(torch.uint8).argmax(-2, keepdim=True)
    pick = v.gather(-2, m)
    phase = torch.where(pick.abs() > 0, pick / pick.abs(), torch.ones_like(pick))
    return [outs[0], (dv, v / phase)]


def _svd_canon(call, outs):
    if len(outs) < 3:
        return outs
    (du, u), (ds, s), (dv, vh) = outs
    if u.numel() == 0 or s.numel() == 0:
        return outs
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    # distinct and non-zero singular values: otherwise the vectors are any basis of a subspace
    if _distinct(s, float(s.max())) and bool((s.double().abs() > 1e-4 * (float(s.abs().max()) + 1)).all()):
        u, sign = _sign_fix(u, False)
        return [(du, u), outs[1], (dv, vh * sign.mT)]
    return [(du, (u * s.unsqueeze(-2).to(u.dtype)) @ vh), outs[1], (dv, torch.zeros(0))]


def _qr_canon(call, outs):
    (dq, q), (dr, r) = outs
    if r.numel() == 0 or q.numel() == 0 or r.shape[-2] == 0:
        return outs
    k = min(r.shape[-2], r.shape[-1])
    d = torch.diagonal(r[..., :k, :k], dim1=-2, dim2=-1)
    if not bool((d.double().abs() > 1e-4 * (float(r.abs().max()) + 1)).all()):
        return [(dq, q[..., :, :k] @ r[..., :k, :]), (dr, torch.zeros(0))]   # rank-deficient: Q R only
    s = torch.where(d < 0, -1.0, 1.0).to(r.dtype)
    q2 = q.clone()
    q2[..., :, :k] = q[..., :, :k] * s.unsqueeze(-2)
    r2 = r.clone()
    r2[..., :k, :] = r[..., :k, :] * s.unsqueeze(-1)
    return [(dq, q2), (dr, r2)]


def _lu_canon(call, outs):
    """With ties among a column's magnitudes the pivot row is the
    implementation's choice: the product P L U is compared then."""
    a = _cpu(_arg(call, "A"))
    if not isinstance(a, torch.Tensor) or a.numel() == 0 or len(outs) != 3:
        return outs
    flat = a.abs().flatten().tolist()
    if len(set(flat)) == len(flat):
        return outs
    (dp, p), (dl, l), (du, u) = outs
    return [(dp, p.to(l.dtype) @ l @ u), (dl, torch.zeros(0)), (du, torch.zeros(0))]  # P is real for complex A


def _drop_buffer(call, outs):
    return outs[:1]


def _masked(mask):
    """Outputs whose output_mask entry is False are unspecified (autograd never reads them)."""
    def canon(call, outs):
        return [o if i >= len(mask) or mask[i] else None for i, o in enumerate(outs)]
    return canon


def canon_for(call):
    """A function normalizing both sides' result lists, or None."""
    base = call.target.split(".")[0]
    mask = _arg(call, "output_mask")
    if isinstance(mask, list):
        return _masked(mask)
    if base == "log_sigmoid_forward":
        return _drop_buffer   # the buffer is the backend's own (CUDA's is empty); only its backward reads it
    if base in TIE_OPS:
        if call.target == "sort.stable" and _arg(call, "stable") is True:
            return None   # a stable sort's indices are fully defined
        return _tie_canon
    if base == "_linalg_eigh" and _arg(call, "compute_v", True):
        return _eigh_canon
    if base == "linalg_eig":
        return _eig_canon
    if base == "_linalg_svd" and _arg(call, "compute_uv", True):
        return _svd_canon
    if base == "linalg_qr":
        return _qr_canon
    if base == "linalg_lu" and _arg(call, "pivot", True) is not False:
        return _lu_canon
    return None


def _duplicates(ids):
    ids = ids.flatten()
    return ids.numel() != ids.unique().numel()


def _float_to_int_out_of_range(call):
    """A `dtype=` argument casting float values that an integer cannot hold
    (NaN, inf, too large): undefined behavior in C++, any value goes."""
    dt = [v for n, v, _ in call.args if isinstance(v, torch.dtype)]
    ints = [d for d in dt if not d.is_floating_point and not d.is_complex and d != torch.bool]
    if not ints:
        return False
    lo = max(float(torch.iinfo(d).min) for d in ints)
    hi = min(float(torch.iinfo(d).max) for d in ints)
    for n, v, _ in call.args:
        if isinstance(v, TensorSpec) and (v.dtype.is_floating_point or v.dtype.is_complex):
            x = make(v, "cpu")
            x = (torch.view_as_real(x) if x.is_complex() else x).double().trunc()
            if x.numel() and not bool(((x >= lo) & (x <= hi)).all()):
                return True
    return False


def undefined(call):
    """Why the CPU result of this draw is undefined, or None."""
    if _float_to_int_out_of_range(call):
        return "float values out of the integer dtype's range cast to it"
    base = call.target.split(".")[0]
    if base == "isin" and _arg(call, "assume_unique") is True:
        for name in ("elements", "test_elements"):
            t = _cpu(_arg(call, name))
            if isinstance(t, torch.Tensor) and t.numel() != len(set(t.flatten().tolist())):
                return "isin(assume_unique=True) of values that are not unique"
    if base in ("logspace", "linspace") and any(isinstance(v, TensorSpec) and not v.dtype.is_floating_point
                                                and not v.dtype.is_complex and v.dtype != torch.bool
                                                for n, v, _ in call.args if n in call.out_names):
        d = next(v.dtype for n, v, _ in call.args if n in call.out_names)
        try:
            steps, start, end = _arg(call, "steps"), _arg(call, "start"), _arg(call, "end")
            if base == "logspace":
                ref = torch.logspace(start, end, steps, _arg(call, "base", 10.0), dtype=torch.float64).trunc()
            else:
                ref = torch.linspace(start, end, steps, dtype=torch.float64).trunc()
            if not bool(((ref >= torch.iinfo(d).min) & (ref <= torch.iinfo(d).max)).all()):
                return "values out of the integer out='s range (a float-to-integer cast)"
        except Exception:  # noqa: BLE001 - an invalid call: both sides should raise
            pass
    if call.target in ("median", "nanmedian"):
        t = _cpu(_arg(call, "self"))
        if isinstance(t, torch.Tensor) and t.numel() == 0 and not t.is_floating_point():
            return "the median of an empty integer tensor (NaN has no integer value; the CPU returns INT64_MIN)"
    if base not in DUP_WRITE_OPS or _arg(call, "accumulate", False) is True:
        return None
    if base == "scatter" and _arg(call, "reduce") is not None:
        return None
    try:
        x = _cpu(_arg(call, "self"))
        ids = torch.arange(x.numel()).view(x.shape)
        if base in ("index_put", "_index_put_impl"):
            idx = [_cpu(i) for i in _arg(call, "indices")]
            vals = _cpu(_arg(call, "values"))
            target = ids[idx] if idx else ids
            # one value written twice is the same either way
            if _duplicates(target) and vals.numel() > 1 and vals.unique().numel() > 1:
                return "duplicate indices without accumulate"
            return None
        if base == "put":
            idx = _cpu(_arg(call, "index")).long()
            return "duplicate indices without accumulate" if _duplicates(idx % max(x.numel(), 1)) else None
        if base == "index_copy":
            idx = _cpu(_arg(call, "index")).long()
            size = x.shape[_arg(call, "dim") % x.dim()] if x.dim() else 1
            return "duplicate indices" if _duplicates(idx % max(size, 1)) else None
        if base == "scatter":
            idx = _cpu(_arg(call, "index")).long()
            d = _arg(call, "dim") % max(x.dim(), 1)
            if x.dim() == 0:
                return None
            src = _arg(call, "src")
            if src is None and _arg(call, "value") is not None:
                return None   # one value written: duplicates agree
            return "duplicate indices" if _duplicates(ids.gather(d, idx % x.shape[d])) else None
    except Exception:  # noqa: BLE001 - an invalid call: both sides should raise
        return None
    return None


NORM_OPS = ("native_layer_norm", "native_group_norm", "_native_batch_norm_legit", "native_batch_norm",
            "_batch_norm_with_update", "_batch_norm_no_update")


def align(call, got, expect):
    """Norm statistics (mean, rstd, save_mean, ...) of float16/bfloat16 inputs
    are float32 on tpu, as on CUDA and in PyTorch's meta kernels; the CPU
    keeps the input dtype. They are compared in the CPU's dtype."""
    if not call.target.startswith(NORM_OPS):
        return got
    out = list(got)
    for i in range(1, min(len(got), len(expect))):
        g, e = got[i], expect[i]
        if isinstance(g, tuple) and isinstance(e, tuple) and g[1].dtype == torch.float32 and \
                e[1].dtype in (torch.float16, torch.bfloat16):
            out[i] = (g[0], g[1].to(e[1].dtype))
    return out


def tolerance_dtype(call):
    """The floating dtype the op computes in: its floating inputs and dtype=
    arguments promoted (integer and bool inputs compute in the default dtype).
    A wider result dtype (an out= of float64) adds no precision."""
    dt = None
    for n, v, _ in call.args:
        if n in call.out_names:
            continue
        for e in (v if isinstance(v, list) else [v]):
            d = e.dtype if isinstance(e, TensorSpec) else e if isinstance(e, torch.dtype) else None
            if d is not None and (d.is_floating_point or d.is_complex):
                dt = d if dt is None else torch.promote_types(dt, d)
    return dt or torch.get_default_dtype()


def _overlaps(spec):
    from .tensors import geometry
    n, stride, off = geometry(spec)
    if not spec.shape or 0 in spec.shape:
        return False
    addr = torch.arange(max(n, 1)).as_strided(spec.shape, stride, off)
    return addr.unique().numel() < addr.numel()


LINALG = ("cholesky", "linalg_", "_linalg_", "triangular_solve", "lu_unpack", "_cholesky_solve_helper", "geqrf", "orgqr",
          "ormqr")
# Ops whose results add up many products: with inf/NaN or near-overflow
# inputs (the "special" values), where an inf, a NaN or an overflow appears
# depends on the order of the operations, which PyTorch leaves open.
ACCUMULATING = re.compile(r"mm|addmv|addr|dot|mv$|conv|norm|sum|mean|prod|var|std|logsumexp|cum|softmax|pool|"
                          r"upsample_(bi|tri)?linear|upsample_bicubic|loss|histc|trace|im2col|col2im|fft|glu|"
                          r"grouped|baddbmm|addbmm|bmm|renorm|dist|upsample.*backward|embedding_dense_backward|"
                          r"index_add|index_reduce|scatter_add|scatter_reduce|put$")


def _nonfinite(outs):
    for o in outs:
        if isinstance(o, tuple) and (o[1].is_floating_point() or o[1].is_complex()) and o[1].numel() and \
                not bool(o[1].isfinite().all()):
            return True
    return False


def excuse(call, outcome, cpu, tpu):
    """Why a non-parity draw has no defined CPU result after all, or None."""
    from . import check as ck
    written = {a.name for a in call.overload._schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    specs = {n: v for n, v, _ in call.args if isinstance(v, TensorSpec)}
    for n, v, _ in call.args:
        v = specs.get(v.name) if isinstance(v, ck.Alias) else v
        if n in written and isinstance(v, TensorSpec) and _overlaps(v):
            return "writes into a tensor whose elements overlap"

    aliased = [v.name for n, v, _ in call.args if isinstance(v, ck.Alias)]
    if len(aliased) != len(set(aliased)):
        return "two outputs are the same tensor"

    def same(a, b, device=False):
        return ck.compare(call, a, b, canon_for(call), tolerance_dtype(call), check_device=device,
                          check_identity=False)[0] in ck.OK_KINDS

    contiguous = _on_contiguous_copies(call)
    if contiguous is not None and same(contiguous, tpu, True) and not same(cpu, contiguous):
        return "the CPU's outcome on these strides differs from its own on contiguous tensors, which tpu's equals"
    if outcome != ck.MISMATCH:
        return None
    base = call.target.split(".")[0]
    inputs = [_cpu(v) for n, v, _ in call.args if isinstance(v, TensorSpec) and n not in call.out_names]
    if base in ("gelu", "gelu_backward") and _arg(call, "approximate", "none") == "none" and len(cpu[0]) == 1:
        # The CPU's exact gelu (and its backward) give NaN/inf at +-inf and near the float max where tpu
        # gives the limits: mismatches only where an input is that extreme are this.
        e, g = cpu[0][0][1], tpu[0][0][1]
        extreme = torch.zeros(e.shape, dtype=torch.bool)
        for x in inputs:
            if x.is_floating_point() and torch.broadcast_shapes(x.shape, e.shape) == e.shape:
                extreme |= ~(x.double().abs() < 1e30).expand(e.shape)
        if not bool(((e != g) & ~(e.isnan() & g.isnan()) & ~extreme).any()):
            return "exact gelu (backward) at +-inf or near the float max: the CPU kernel gives NaN/inf, tpu the limit"
    if base.startswith("special_") and base.endswith("_polynomial_" + base.rsplit("_", 1)[-1]) and \
            len(cpu[0]) == 1 and isinstance(_arg(call, "x"), (TensorSpec, float)):
        # The CPU's orthogonal polynomials give inf at x = NaN for n = 2, and for
        # the shifted ones with a Scalar n a stale value (the previous element's,
        # or garbage: its recurrence's result is read uninitialized); tpu NaN.
        # The other elements must be the CPU's, or as close to its float64 run
        # (near x' = +-1 its float32 recurrence loses digits tpu's keeps).
        e, g = cpu[0][0][1], tpu[0][0][1]
        x = _cpu(_arg(call, "x")) if isinstance(_arg(call, "x"), TensorSpec) else torch.full(e.shape, _arg(call, "x"))
        if x.shape == e.shape:
            rtol, atol = ck.TOLERANCES.get(e.dtype, (1e-7, 1e-7))
            bad = ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True) & ~x.isnan()
            wide = _in_float64(call, cpu) if bool(bad.any()) else None
            if wide is not None and isinstance(wide[0][0], tuple):
                bad &= ~torch.isclose(g.double(), wide[0][0][1], rtol=rtol, atol=atol, equal_nan=True)
            if not bool(bad.any()):
                return ("orthogonal polynomial at x = NaN: the CPU kernel gives inf or a stale value, tpu NaN "
                        "(elsewhere tpu's equal the CPU's or its float64 run's)")
    if base.startswith("reflection_pad") and base.endswith("_backward") and inputs and inputs[0].numel() == 0:
        return ("reflection padding backward of an empty grad_output: the CPU returns grad_input unwritten "
                "(uninitialized, or out='s old values); the gradient is zeros, which tpu gives")
    if base == "mode" and inputs and inputs[0].is_floating_point() and inputs[0].dim() > 0:
        nan = inputs[0].isnan()
        dim = _arg(call, "dim", -1)
        if bool((nan.any(dim) & ~nan.all(dim)).any()):
            return "mode of a slice mixing NaN and numbers: the CPU's std::sort gets a comparator NaN breaks"
    if _per_element_formula(call, cpu, tpu):
        return ("the CPU's vectorized and per-element formulas differ at special values (which one an element "
                "gets depends on where it lies); tpu's values are the per-element ones")
    again = ck.run_side(call, "cpu")
    if not isinstance(again, ck.Raised) and not same(cpu, again):
        return "the CPU's result differs between two runs (it reads uninitialized memory)"
    wide = _in_float64(call, cpu)
    if wide is not None and same(_cast_like(wide, cpu), tpu, True):
        return "tpu's result is the CPU's computed in float64; the CPU's own lost precision (overflow, cancellation)"
    if wide is not None and _as_accurate_in_half(call, cpu, tpu, wide):
        return ("float16/bfloat16 result as close to the float64 one as the CPU's, to one rounding: the two "
                "accumulate in different orders and precisions")
    if base.startswith(LINALG) and base not in ("linalg_vector_norm", "linalg_cross"):
        if _nonfinite([("cpu", t) for t in inputs]) or _nonfinite(cpu[0]):
            return "non-finite entries or a singular matrix: inf/nan patterns depend on the algorithm"
        if any(t.is_floating_point() and t.numel() and not bool((t.abs() < 1e30).all()) for t in inputs):
            return "entries near the float max: LAPACK scales its norms, XLA's factorizations overflow"
        if base in ("linalg_cholesky_ex", "linalg_inv_ex") and bool(cpu[0][1][1].ne(0).any()):
            return "info > 0: the factor is unspecified"
        if base in ("geqrf", "linalg_eig", "_linalg_eigvals") and any(_ill_conditioned(t) for t in inputs):
            return ("a numerically rank-deficient matrix, or nearly repeated eigenvalues: the factors' null-space "
                    "parts and the eigenvalues' sqrt(eps)-sized perturbations are set by rounding")
        if base == "linalg_lstsq" and _arg(call, "driver") in (None, "gelsy") and \
                int(cpu[0][2][1].min()) < min(inputs[0].shape[-2:]):
            return ("gelsy with a rank cut: its truncation by pivoted QR differs from the SVD truncation tpu "
                    "computes (csrc/ops/linalg/lstsq.cpp)")
    if base in ("mul", "div") and any(t.is_complex() and t.numel() and not bool((t.abs() < 1e30).all())
                                      for t in inputs):
        return ("complex product or quotient of parts near the float max: a*c - b*d overflows in between, and "
                "XLA contracts it into a fused multiply-add where the CPU rounds each product")
    if ACCUMULATING.search(base) and any(
            (t.is_floating_point() or t.is_complex()) and t.numel() and not bool((t.abs() < 1e30).all())
            for t in inputs):
        return "inf/NaN/near-overflow inputs to an accumulating op: the result depends on the order of operations"
    if any(isinstance(v, ck.Alias) for _, v, _ in call.args):
        # the CPU's own result with out= a separate tensor instead of an input
        args = [(n, TensorSpec((0,), call_dtype(v, call)) if isinstance(v, ck.Alias) else v, kw)
                for n, v, kw in call.args]
        plain = ck.run_side(type(call)(call.target, call.variant, call.overload, args, call.mixed_device,
                                       call.out_names), "cpu")
        if not isinstance(plain, ck.Raised) and len(plain[0]) == len(cpu[0]) and any(
                ck._close(a, b, "out") for a, b in zip(cpu[0], plain[0])):
            return "the CPU's result changes when out= aliases an input"
    return None


def _ill_conditioned(t):
    """A float/complex matrix (batch) with a singular value below sqrt(eps)
    of its largest, or two eigenvalues closer than sqrt(eps) of the largest."""
    if not (t.is_floating_point() or t.is_complex()) or t.dim() < 2 or t.numel() == 0:
        return False
    tol = 1e-7 if t.dtype in (torch.float64, torch.complex128) else 3e-3
    w = t.to(torch.complex128 if t.is_complex() else torch.float64)
    s = torch.linalg.svdvals(w)
    if bool((s[..., -1] <= tol * s[..., 0]).any()):
        return True
    if t.shape[-1] != t.shape[-2]:
        return False
    lam = torch.linalg.eigvals(w)
    return bool((_eigen_gaps(lam).amin((-1, -2)) <= tol * (lam.abs().amax(-1) + 1)).any())


# Pointwise ops PyTorch does not tag pointwise.
POINTWISE = re.compile(r"(hardswish|hardshrink|softshrink|hardsigmoid|hardtanh|elu|leaky_relu|gelu|silu|mish|"
                       r"softplus|sigmoid|tanh|logit|threshold|log_sigmoid)_backward")


def _per_element_formula(call, cpu, tpu):
    """True for a pointwise op whose every element that tpu and the CPU give
    differently is, on tpu, what the CPU's kernel gives for that element
    alone (0-d operands take its per-element formula; its vectorized one,
    used for whole blocks of a contiguous run, differs at NaN or -0.0)."""
    from . import check as ck
    if not (torch.Tag.pointwise in call.overload.tags or POINTWISE.fullmatch(call.target.split(".")[0])):
        return False
    if len(cpu[0]) != 1 or len(tpu[0]) != 1 or not isinstance(cpu[0][0], tuple) or \
            not isinstance(tpu[0][0], tuple) or any(isinstance(v, ck.Alias) for _, v, _ in call.args):
        return False
    e, g = cpu[0][0][1], tpu[0][0][1]
    if e.shape != g.shape or e.dtype != g.dtype:
        return False
    if e.is_floating_point() and e.dtype in ck.TOLERANCES:
        rtol, atol = ck.TOLERANCES[e.dtype]
        differs = ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    else:
        differs = e != g
    where = differs.nonzero().tolist()
    if not where or len(where) > 256:
        return False
    for idx in where:
        args = []
        for n, v, kw in call.args:
            if isinstance(v, TensorSpec):
                t = make(v, "cpu")
                if n in call.out_names:
                    v = TensorSpec((), v.dtype, values=(0,))
                else:
                    try:
                        x = t.expand(e.shape)[tuple(idx)]
                    except RuntimeError:
                        return False
                    v = TensorSpec((), v.dtype, device=v.device, values=(x.item(),))
            elif isinstance(v, list) and any(isinstance(a, TensorSpec) for a in v):
                return False
            args.append((n, v, kw))
        r = ck.run_side(type(call)(call.target, call.variant, call.overload, args, call.mixed_device,
                                   call.out_names, call.functional), "cpu")
        if isinstance(r, ck.Raised) or len(r[0]) != 1 or not isinstance(r[0][0], tuple):
            return False
        one = r[0][0][1].reshape(())
        if ck._close(("cpu", g[tuple(idx)]), ("cpu", one), "out"):
            return False
    return True


def _on_contiguous_copies(call):
    """The CPU's run of the call with every input a contiguous copy of the
    same values, and an out= call as its functional op (an out-of-place op's
    result cannot depend on strides, and an out= op's values are its
    functional op's; some CPU out= kernels ignore the out's strides or leave
    it unresized). Raised if it raises; None if it does not apply."""
    from . import check as ck
    if call.variant == "inplace":
        return None
    args, changed = [], False
    as_functional = call.variant == "out" and call.functional is not None
    for n, v, kw in call.args:
        if n in call.out_names:
            changed = changed or as_functional
            if as_functional:
                continue
        elif isinstance(v, TensorSpec) and v.layout != "contig" and v.values is None:
            t = make(v, "cpu").contiguous()
            v = TensorSpec(tuple(t.shape), t.dtype, device=v.device, values=tuple(t.flatten().tolist()))
            changed = True
        args.append((n, v, kw))
    if not changed:
        return None
    overload = call.functional if as_functional else call.overload
    if as_functional:   # every argument by name: the two schemas may differ in what is positional
        args = [(n, v, True) for n, v, kw in args]
    return ck.run_side(type(call)(call.target, "functional", overload, args, call.mixed_device, (),
                                  call.functional), "cpu")


NARROW = (torch.float16, torch.bfloat16, torch.float32)


def _in_float64(call, cpu):
    """The CPU's run of the call with every float16/bfloat16/float32 tensor
    (inputs and outs) and dtype argument widened to float64: the referee when
    tpu and the CPU differ (a float32 kernel whose intermediate overflows or
    cancels loses to it, cast back to the CPU's dtypes). None if nothing
    widens, it raises, or its results do not line up with the CPU's."""
    from . import check as ck
    args, widened = [], False
    for n, v, kw in call.args:
        if isinstance(v, TensorSpec) and v.dtype in NARROW:
            t = make(v, "cpu").double()
            v = TensorSpec(tuple(t.shape), torch.float64, device=v.device, values=tuple(t.flatten().tolist()))
            widened = True
        elif isinstance(v, torch.dtype) and v in NARROW:
            v, widened = torch.float64, True
        args.append((n, v, kw))
    if not widened:
        return None
    r = ck.run_side(type(call)(call.target, call.variant, call.overload, args, call.mixed_device, call.out_names,
                               call.functional), "cpu")
    if isinstance(r, ck.Raised) or len(r[0]) != len(cpu[0]):
        return None
    if any(isinstance(w, tuple) != isinstance(c, tuple) for w, c in zip(r[0], cpu[0])):
        return None
    return r[0], r[1], {}


def _cast_like(wide, cpu):
    """`wide` (a run's results) cast to the dtypes of `cpu`'s."""
    outs = [(w[0], w[1].to(c[1].dtype)) if isinstance(w, tuple) else w for w, c in zip(wide[0], cpu[0])]
    return outs, wide[1], {}


HALF = (torch.float16, torch.bfloat16)


def _as_accurate_in_half(call, cpu, tpu, wide):
    """True if every float16/bfloat16 result of tpu is, element by element, no
    further from the float64 run's (`wide`, not cast back) than the CPU's is,
    plus one unit in the last place; other results must compare equal. Half
    types are where accumulation order and precision (the CPU rounds some
    intermediates to the half type, tpu keeps float32, as CUDA) decide the
    last bit; a wrong formula lands many units away."""
    from . import check as ck
    got = align(call, list(tpu[0]), list(cpu[0]))
    if len(got) != len(cpu[0]) or len(wide[0]) != len(cpu[0]):
        return False
    any_half = False
    for g, e, w in zip(got, cpu[0], wide[0]):
        if not (isinstance(e, tuple) and isinstance(g, tuple)) or e[1].dtype not in HALF:
            if ck._close(g, e, "out"):
                return False
            continue
        t, c, r = g[1], e[1], w[1]
        if t.dtype != c.dtype or t.shape != c.shape or r.shape != c.shape:
            return False
        any_half = True
        t, c, r = t.double(), c.double(), r.double()
        fi = torch.finfo(e[1].dtype)
        ulp = fi.eps * torch.exp2(torch.floor(torch.log2(r.abs().clamp_min(fi.tiny))))
        ok = ((t - r).abs() <= (c - r).abs() + ulp) | (t == c) | (t.isnan() & c.isnan())
        if not bool(ok.all()):
            return False
    return any_half


def call_dtype(alias, call):
    for n, v, _ in call.args:
        if n == alias.name and isinstance(v, TensorSpec):
            return v.dtype
    return torch.float32
