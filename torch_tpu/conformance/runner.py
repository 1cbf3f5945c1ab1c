"""Runs one OpInfo (op, dtype) case: every sample on the CPU and on tpu, forward
and (for differentiable floating cases) backward, and classifies each sample.

Inputs are generated once on the CPU (seeded) and copied to tpu with their
strides and views kept, so both sides see identical values and layouts. A CPU
fallback is detected by the change of torch_tpu.metrics()['fallbacks_by_op']
around the tpu run; it is never a pass.
"""
import re
import time

import torch
from torch.testing import assert_close
from torch.utils import _pytree as pytree

# Sample statuses, best first. The (op, dtype) status is the worst of its samples.
PASS = "pass"
CPU_ERROR = "unsupported on CPU too"  # the CPU raises: counted neither way
FALLBACK = "fallback"
MISMATCH = "mismatch"
ERROR = "error"
TIMEOUT = "timeout"
CRASH = "crash"
NO_SAMPLES = "no samples"  # sample generation gave nothing or raised: counted neither way
SEVERITY = [PASS, CPU_ERROR, FALLBACK, MISMATCH, ERROR, TIMEOUT, CRASH]
NOT_COUNTED = (CPU_ERROR, NO_SAMPLES)

# Every dtype an OpInfo can declare for the CPU that a tpu tensor can hold
# (complex32 is refused on tpu, as on most backends), by family.
DTYPE_FAMILIES = {
    "floating": ("float32", "bfloat16", "float16", "float64"),
    "complex": ("complex64", "complex128"),
    "signed integer": ("int64", "int32", "int16", "int8"),
    "unsigned integer": ("uint8",),
    "bool": ("bool",),
}
DEFAULT_DTYPES = tuple(d for family in DTYPE_FAMILIES.values() for d in family)


def family_of(dtype_name: str) -> str:
    for family, names in DTYPE_FAMILIES.items():
        if dtype_name in names:
            return family
    return "other"

# Ops whose outputs are random (or uninitialized memory): values cannot be
# compared with the CPU, only the shape, the dtype and that the result is
# finite wherever the CPU result is. Names are OpInfo full names.
RANDOM_OPS = frozenset({
    "bernoulli", "normal", "normal.number_mean", "normal.in_place", "multinomial",
    "rand_like", "randn_like", "randint_like", "randint", "randn",
    "uniform", "cauchy", "exponential", "geometric", "log_normal",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
    "nn.functional.multi_head_attention_forward",
    "empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted",
})


# Ops whose tensor arguments other than the input must be CPU tensors (as on
# CUDA): only the input moves to tpu.
CPU_ARG_OPS = frozenset({"tensor_split"})


def load_op_db():
    """{full name: OpInfo} for PyTorch's op database (importing it takes seconds)."""
    from torch.testing._internal.common_methods_invocations import op_db

    from . import sample_tracking
    sample_tracking.install()   # sample generation without inspect.stack() per call
    return {op.full_name: op for op in op_db}


def case_dtypes(op, dtype_names):
    """The requested dtypes the op supports on the CPU, in request order."""
    supported = op.supported_dtypes("cpu")
    return [n for n in dtype_names if getattr(torch, n) in supported]


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def _is_tensor(x):
    return isinstance(x, torch.Tensor)


def _to_tpu(x):
    """A tpu copy with the same sizes, strides, storage offset and storage size
    (so as_strided into the rest of the storage works too); a leaf, grad kept."""
    t = x.detach()
    whole = t.storage_offset() == 0 and t.untyped_storage().nbytes() == t.numel() * t.element_size()
    if t.is_contiguous() and whole:
        r = t.to("tpu")
    else:
        base = t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)
        r = base.to("tpu").as_strided(t.shape, t.stride(), t.storage_offset())
    if x.requires_grad:
        r.requires_grad_()
    return r


def _tpu_device(x):
    # Samples name their own device ("cpu") for factories and `.to`; the tpu
    # side runs with "tpu" there.
    if isinstance(x, torch.device) and x.type == "cpu":
        return torch.device("tpu")
    return "tpu" if isinstance(x, str) and x == "cpu" else x


def _tpu_kwargs(kwargs):
    out = dict(kwargs)
    if "device" in out:
        out["device"] = "tpu"
    return out


# Ops returning indices of selected elements: with ties, which index the CPU
# returns is implementation-defined (its unstable sort is not stable). The
# index outputs are compared by the input values they select instead:
# {op: (position of the dim argument, default dim, index of the indices output)}.
TIE_INDEX_OPS = {
    "sort": (0, -1, 1), "argsort": (0, -1, 0), "topk": (1, -1, 1), "kthvalue": (1, -1, 1),
    "mode": (0, -1, 1), "median": (0, None, 1), "nanmedian": (0, None, 1),
}


# Ops returning values only whose gradient, with tied input values, goes to
# whichever tied element the sort picked: grads are compared for tie-free inputs only.
TIE_GRAD_OPS = frozenset({"msort"})


def _dim_arg(sample, pos, default):
    if "dim" in sample.kwargs:
        return sample.kwargs["dim"]
    return sample.args[pos] if len(sample.args) > pos and isinstance(sample.args[pos], int) else default


def _tie_index_reason(op_name, sample, got, expect):
    """None if the tpu indices select the same input values as the CPU's, else the reason."""
    pos, default, out_i = TIE_INDEX_OPS[op_name]
    dim = _dim_arg(sample, pos, default)
    x = sample.input.detach()
    gi, ei = (got, expect) if out_i == 0 and _is_tensor(got) else (got[out_i], expect[out_i])
    gi = gi.cpu()
    if dim is None or x.dim() == 0 or gi.shape != ei.shape:
        return None if torch.equal(gi, ei) else "indices differ"
    d = dim % x.dim()
    if gi.dim() < x.dim():
        gi, ei = gi.unsqueeze(d), ei.unsqueeze(d)
    if ((gi < 0) | (gi >= max(x.shape[d], 1))).any():
        return "indices out of range"
    try:
        assert_close(x.gather(d, gi), x.gather(d, ei), equal_nan=True, rtol=0, atol=0)
    except AssertionError as exc:
        return _mismatch_reason("indices select", exc)
    return None


def _grad_inputs(tree):
    return [t for t in pytree.tree_leaves(tree) if _is_tensor(t) and t.requires_grad]


def _diff_outputs(out):
    return [t for t in pytree.tree_leaves(out)
            if _is_tensor(t) and t.requires_grad and t.is_floating_point()]


_DIFF_RE = re.compile(r"Greatest (absolute|relative) difference: (\S+) at index \S+(?: \(up to (\S+) allowed\))?")
_COUNT_RE = re.compile(r"Mismatched elements: (\d+ / \d+)")


def _mismatch_reason(where, exc):
    """'out[0]: 3 / 40 elems, max abs 0.5 (atol 1e-05), max rel 0.1 (rtol 1.3e-06)'."""
    msg = str(exc)
    parts = []
    m = _COUNT_RE.search(msg)
    if m:
        parts.append(f"{m.group(1)} elems")
    for kind, value, allowed in _DIFF_RE.findall(msg):
        short = "abs" if kind == "absolute" else "rel"
        limit = f" ({'atol' if short == 'abs' else 'rtol'} {allowed})" if allowed else ""
        parts.append(f"max {short} {value}{limit}")
    if not parts:
        parts.append(msg.strip().splitlines()[0][:200] if msg.strip() else type(exc).__name__)
    return f"{where}: " + ", ".join(parts)


def _compare(got, expect, where, random_values):
    """None if the tpu result matches, else the reason. `got` is still on tpu."""
    g_leaves, g_spec = pytree.tree_flatten(got)
    e_leaves, e_spec = pytree.tree_flatten(expect)
    if len(g_leaves) != len(e_leaves):
        return f"{where}: {len(g_leaves)} results, CPU gave {len(e_leaves)}"
    for i, (g, e) in enumerate(zip(g_leaves, e_leaves)):
        at = f"{where}[{i}]" if len(e_leaves) > 1 else where
        if _is_tensor(e):
            if not _is_tensor(g):
                return f"{at}: got {type(g).__name__}, CPU gave a tensor"
            if g.device.type != "tpu":
                return f"{at}: result on {g.device}, not tpu"
            g = g.detach().cpu()
            e = e.detach()
            if random_values:
                if g.shape != e.shape or g.dtype != e.dtype:
                    return f"{at}: {g.dtype}{list(g.shape)}, CPU gave {e.dtype}{list(e.shape)}"
                if e.is_floating_point() and bool(e.isfinite().all()) and not bool(g.isfinite().all()):
                    return f"{at}: non-finite values where the CPU's are finite"
                continue
            try:
                assert_close(g, e, equal_nan=True, check_dtype=True)
            except AssertionError as exc:
                return _mismatch_reason(at, exc)
        elif isinstance(e, (int, float, bool)) and not isinstance(g, torch.Tensor):
            if random_values:
                continue
            try:
                assert_close(g, e, equal_nan=True)
            except AssertionError as exc:
                return _mismatch_reason(at, exc)
        elif g != e:
            return f"{at}: {g!r}, CPU gave {e!r}"
    return None


def _compare_with_ties(op_name, sample, got, expect):
    """Values compared as usual, indices by what they select (see TIE_INDEX_OPS)."""
    out_i = TIE_INDEX_OPS[op_name][2]
    if isinstance(expect, torch.Tensor):  # indices only (argsort)
        return _tie_index_reason(op_name, sample, got, expect)
    rest = [i for i in range(len(expect)) if i != out_i]
    for i in rest:
        reason = _compare(got[i], expect[i], f"out[{i}]", False)
        if reason is not None:
            return reason
    reason = _tie_index_reason(op_name, sample, got, expect)
    return None if reason is None else f"out[{out_i}]: {reason}"


def _fallback_delta(before, after):
    return sorted(k for k, v in after.items() if v > before.get(k, 0))


def run_sample(op, sample, dtype, backward, seed=0):
    """Classifies one sample: {'status', 'reason', 'fallbacks'}."""
    import torch_tpu

    # A sample with attention dropout (dropout_p > 0) is random too.
    random_values = op.full_name in RANDOM_OPS or (sample.kwargs.get("dropout_p") or 0) > 0
    # tpu copies first: the CPU run may write into its inputs.
    cpu_args = (sample.input, sample.args, sample.kwargs)
    try:
        if op.full_name in CPU_ARG_OPS:
            tpu_args = (_to_tpu(sample.input), sample.args, sample.kwargs)
        else:
            tpu_args = pytree.tree_map_only(torch.Tensor, _to_tpu, cpu_args)
    except Exception as exc:  # noqa: BLE001 - e.g. sparse or complex inputs
        return {"status": ERROR, "reason": "copying the inputs to tpu: " + first_line(exc), "fallbacks": []}
    tpu_args = (tpu_args[0], tuple(_tpu_device(a) for a in tpu_args[1]), _tpu_kwargs(tpu_args[2]))
    backward = backward and not random_values  # random outputs: nothing to compare grads against
    if op.full_name in TIE_GRAD_OPS and sample.input.unique().numel() != sample.input.numel():
        backward = False

    torch.manual_seed(seed)
    try:
        with torch.enable_grad():
            expect = op(cpu_args[0], *cpu_args[1], **cpu_args[2])
    except Exception as exc:  # noqa: BLE001 - any CPU failure means unsupported
        return {"status": CPU_ERROR, "reason": first_line(exc), "fallbacks": []}

    before = dict(torch_tpu.metrics()["fallbacks_by_op"])
    status, reason = PASS, None
    try:
        torch.manual_seed(seed)
        with torch.enable_grad():
            got = op(tpu_args[0], *tpu_args[1], **tpu_args[2])
        # Compared after the OpInfo's output_process_fn_grad, as PyTorch's own
        # device-vs-CPU test (test_ops.py test_compare_cpu) does: for ops whose
        # result is defined only up to sign or phase (eigh, svd vectors) the
        # OpInfo maps both to a canonical form; for the rest it is the identity.
        reason = _compare(sample.output_process_fn_grad(got), sample.output_process_fn_grad(expect), "out",
                          random_values)
        ties = op.full_name in TIE_INDEX_OPS and (op.full_name == "argsort" or not _is_tensor(expect))
        if reason is not None and ties:
            reason = _compare_with_ties(op.full_name, sample, got, expect)
            # Ties were broken differently: gradients flow to different (equal)
            # elements, so they are not comparable for this sample.
            backward = False
        if reason is not None:
            status = MISMATCH
        elif backward:
            status, reason = _run_backward(sample, cpu_args, tpu_args, expect, got)
        torch.tpu.synchronize()
    except Exception as exc:  # noqa: BLE001 - any tpu failure is an error of this sample
        status, reason = ERROR, first_line(exc)
    fell_back = _fallback_delta(before, torch_tpu.metrics()["fallbacks_by_op"])
    if status == PASS and fell_back:
        status, reason = FALLBACK, "fell back to CPU: " + ", ".join(fell_back)
    return {"status": status, "reason": reason, "fallbacks": fell_back}


def _run_backward(sample, cpu_args, tpu_args, expect, got):
    """Same seeded upstream gradient on both sides; compares the input gradients."""
    cpu_in, tpu_in = _grad_inputs(cpu_args), _grad_inputs(tpu_args)
    cpu_out = _diff_outputs(sample.output_process_fn_grad(expect))
    if not cpu_in or not cpu_out:
        return PASS, None
    gen = torch.Generator().manual_seed(1)
    upstream = [torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype) for o in cpu_out]
    try:
        expect_grads = torch.autograd.grad(cpu_out, cpu_in, upstream, allow_unused=True)
    except Exception:  # noqa: BLE001 - no CPU backward for this sample: forward decides
        return PASS, None
    tpu_out = _diff_outputs(sample.output_process_fn_grad(got))
    if len(tpu_out) != len(cpu_out) or len(tpu_in) != len(cpu_in):
        return MISMATCH, f"grad: {len(tpu_out)} differentiable outputs, CPU has {len(cpu_out)}"
    got_grads = torch.autograd.grad(tpu_out, tpu_in, [_to_tpu(u) for u in upstream], allow_unused=True)
    for i, (g, e) in enumerate(zip(got_grads, expect_grads)):
        if g is None and e is None:
            continue
        if e is None:
            e = torch.zeros_like(cpu_in[i])
        if g is None:
            g = torch.zeros_like(tpu_in[i])
        reason = _compare(g, e, f"grad[{i}]", False)
        if reason is not None:
            return MISMATCH, reason
    return PASS, None


def run_case(op, dtype_name, max_samples, seed=0, backward=True, deadline=None):
    """All samples of one (op, dtype): {'op', 'dtype', 'status', 'reason', 'samples', 'seconds'}."""
    start = time.monotonic()
    dtype = getattr(torch, dtype_name)
    do_backward = backward and op.supports_autograd and dtype.is_floating_point
    torch.manual_seed(seed)
    samples = []
    try:
        for i, sample in enumerate(op.sample_inputs("cpu", dtype, requires_grad=do_backward)):
            if i >= max_samples:
                break
            samples.append(sample)
    except Exception as exc:  # noqa: BLE001
        return {"op": op.full_name, "dtype": dtype_name, "status": NO_SAMPLES,
                "reason": "sample generation failed: " + first_line(exc), "samples": [], "seconds": 0.0}
    results = []
    for i, sample in enumerate(samples):
        r = run_sample(op, sample, dtype, do_backward, seed=seed + i)
        results.append(r)
        if deadline is not None and time.monotonic() > deadline:
            break
    out = summarize(op.full_name, dtype_name, results)
    out["seconds"] = round(time.monotonic() - start, 2)
    return out


def summarize(op_name, dtype_name, results):
    """The (op, dtype) verdict from its sample results: the worst status, with its first reason."""
    if not results:
        return {"op": op_name, "dtype": dtype_name, "status": NO_SAMPLES, "reason": "no samples",
                "samples": []}
    counted = [r for r in results if r["status"] != CPU_ERROR]
    if not counted:
        return {"op": op_name, "dtype": dtype_name, "status": CPU_ERROR, "reason": results[0]["reason"],
                "fallbacks": [], "samples": [r["status"] for r in results]}
    worst = max((r["status"] for r in counted), key=SEVERITY.index)
    reason = None
    if worst != PASS:
        first = next(r for r in counted if r["status"] == worst)
        n_bad = sum(r["status"] != PASS for r in counted)
        reason = f"{n_bad}/{len(counted)} samples; {first['reason']}"
    fallbacks = sorted({f for r in results for f in r["fallbacks"]})
    return {"op": op_name, "dtype": dtype_name, "status": worst,
            "reason": reason, "fallbacks": fallbacks, "samples": [r["status"] for r in results]}
