"""Runs one draw on the CPU and on tpu and classifies the pair.

Both sides build their arguments from the same specs. After the call every
result and every tensor argument (in-place and out= writes, aliasing) is
brought to the CPU, which also synchronizes, so an asynchronous error of the
call (an index out of range found on the device) surfaces here.
"""
import torch
from torch.testing import assert_close
from torch.utils import _pytree as pytree

from ..conformance.runner import _mismatch_reason
from .args import Alias
from .tensors import TensorSpec, make

# Outcomes. EQUAL and BOTH_RAISED are parity; DEVICE_REJECTED is tpu refusing
# a CPU operand the CPU-only reference could not refuse (CUDA refuses it too).
EQUAL, BOTH_RAISED, DEVICE_REJECTED = "equal", "both raised", "device rejected"
EXC_TYPE, TPU_RAISED, CPU_RAISED = "exception type differs", "tpu raised, CPU returned", "CPU raised, tpu returned"
MISMATCH, UNDEFINED = "value mismatch", "undefined on CPU"
CRASH, CPU_CRASH, TIMEOUT, HARNESS = "crash", "CPU reference crashed", "timeout", "harness error"
OK_KINDS = (EQUAL, BOTH_RAISED, DEVICE_REJECTED, UNDEFINED)
EXC_KINDS = (EXC_TYPE, TPU_RAISED, CPU_RAISED)


class Raised:
    def __init__(self, exc, stage):
        self.type = type(exc).__name__
        text = str(exc).strip().splitlines()
        self.msg = (text[0] if text else "")[:240]
        self.stage = stage

    def __repr__(self):
        return f"{self.type}: {self.msg}"


def materialize(v, device, objs):
    if isinstance(v, TensorSpec):
        return make(v, device)
    if isinstance(v, Alias):
        return objs[v.name]
    if isinstance(v, list):
        return [materialize(e, device, objs) for e in v]
    return v


def _fetch(x):
    if isinstance(x, torch.Tensor):
        return (x.device.type, x.detach().to("cpu", copy=True))
    return x


def run_side(call, device):
    """(result leaves, identities, arguments after the call) or Raised. On
    "meta" only whether it raises counts (None if not)."""
    stage = "building inputs"
    try:
        objs, pos, kws = {}, [], {}
        for name, v, kw in call.args:
            objs[name] = o = materialize(v, device, objs)
            if kw:
                kws[name] = o
            else:
                pos.append(o)
        stage = "call"
        res = call.overload(*pos, **kws)
        if device == "meta":
            return None
        stage = "reading results"
        leaves = pytree.tree_leaves(res)
        ids = {id(o): n for n, o in objs.items() if isinstance(o, torch.Tensor)}
        identity = [ids.get(id(leaf)) for leaf in leaves]
        got = [_fetch(leaf) for leaf in leaves]
        after = {n: [_fetch(t) for t in pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]
                 for n, o in objs.items()}
        if device != "cpu":
            torch.tpu.synchronize()
        return got, identity, after
    except Exception as exc:  # noqa: BLE001 - an exception is a result here
        return Raised(exc, stage)


# assert_close's default (rtol, atol) per dtype.
TOLERANCES = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
              torch.float64: (1e-7, 1e-7), torch.complex64: (1.3e-6, 1e-5), torch.complex128: (1e-7, 1e-7)}


def _close(got, expect, where, tol_dtype=None):
    """None if equal (exact dtype and shape, assert_close values), else why.
    A float result wider than `tol_dtype` (the dtype the op computes in) is
    compared with that dtype's default tolerances."""
    if isinstance(expect, tuple):   # (device type, tensor)
        if not isinstance(got, tuple):
            return f"{where}: got {type(got).__name__}, CPU gave a tensor"
        g, e = got[1], expect[1]
        if g.dtype != e.dtype:
            return f"{where}: dtype {g.dtype}, CPU gives {e.dtype}"
        if g.shape != e.shape:
            return f"{where}: shape {list(g.shape)}, CPU gives {list(e.shape)}"
        tol = {}
        if tol_dtype is not None and e.dtype in TOLERANCES and tol_dtype in TOLERANCES and \
                TOLERANCES[tol_dtype][0] > TOLERANCES[e.dtype][0]:
            tol = dict(zip(("rtol", "atol"), TOLERANCES[tol_dtype]))
        if e.is_complex():
            # component by component: a complex difference with an inf part is NaN however close the other is
            g, e = torch.view_as_real(g.resolve_conj()), torch.view_as_real(e.resolve_conj())
        try:
            assert_close(g, e, equal_nan=True, check_dtype=True, **tol)
        except AssertionError as exc:
            return _mismatch_reason(f"{where} {str(e.dtype).replace('torch.', '')}", exc)
        return None
    if isinstance(got, tuple):
        return f"{where}: got a tensor, CPU gave {expect!r}"
    try:
        assert_close(got, expect, equal_nan=True)
    except AssertionError:
        return f"{where}: {got!r}, CPU gives {expect!r}"
    return None


NO_CPU_KERNEL = "with arguments from the 'CPU' backend"


def compare(call, cpu, tpu, canon=None, tol_dtype=None, check_device=True, check_identity=True):
    """(outcome, detail) for one draw's CPU and tpu runs (`tpu` may be another
    CPU run with check_device=False)."""
    if call.mixed_device and isinstance(tpu, Raised) and tpu.type == "RuntimeError" and (
            "device" in tpu.msg.lower() or "cpu" in tpu.msg):
        return DEVICE_REJECTED, None   # which check comes first is the backend's choice
    if isinstance(cpu, Raised) and cpu.type == "NotImplementedError" and NO_CPU_KERNEL in cpu.msg:
        return UNDEFINED, "no CPU kernel: " + (f"tpu raised {tpu!r}" if isinstance(tpu, Raised) else "tpu ran")
    if isinstance(cpu, Raised):
        if isinstance(tpu, Raised):
            if tpu.type == cpu.type:
                return BOTH_RAISED, f"{cpu.type}: {cpu.msg} | tpu: {tpu.msg}"
            return EXC_TYPE, f"tpu {tpu.type} ({tpu.stage}): {tpu.msg} | CPU {cpu.type}: {cpu.msg}"
        return CPU_RAISED, f"CPU {cpu.type}: {cpu.msg}"
    if isinstance(tpu, Raised):
        return TPU_RAISED, f"tpu {tpu.type} ({tpu.stage}): {tpu.msg}"
    (g_out, g_id, g_after), (e_out, e_id, e_after) = tpu, cpu
    if len(g_out) != len(e_out):
        return MISMATCH, f"{len(g_out)} results, CPU gives {len(e_out)}"
    rets = call.overload._schema.returns
    aliasing = [i < len(rets) and rets[i].alias_info is not None for i in range(len(e_id))]
    if check_identity and [g for g, a in zip(g_id, aliasing) if a] != [e for e, a in zip(e_id, aliasing) if a]:
        # only results the schema says alias an argument (out=, in-place) must be that argument
        return MISMATCH, f"results alias arguments {g_id}, CPU's alias {e_id}"
    if canon is not None:
        g_out, e_out = canon(call, g_out), canon(call, e_out)
    from .oracle import align
    g_out = align(call, g_out, e_out)
    for i, (g, e) in enumerate(zip(g_out, e_out)):
        if check_device and isinstance(g, tuple) and g[0] != "tpu" and e_id[i] is None:
            return MISMATCH, f"out[{i}] on {g[0]}, not tpu"
        why = _close(g, e, f"out[{i}]" if len(e_out) > 1 else "out", tol_dtype)
        if why:
            return MISMATCH, why
    for name, e_list in e_after.items():
        if name in call.out_names or name not in g_after:
            continue   # out= tensors are the results, compared above
        for j, (g, e) in enumerate(zip(g_after[name], e_list)):
            why = _close(g, e, f"argument {name}" + (f"[{j}]" if len(e_list) > 1 else "") + " after the call",
                         tol_dtype)
            if why:
                return MISMATCH, why
    return EQUAL, None


def check(call, cpu_done=None):
    """Runs `call` on both devices: (outcome, detail, fell back to the CPU?).
    `cpu_done()` is called between the two runs (a crash after it is tpu's)."""
    import torch_tpu

    from . import oracle
    before = dict(torch_tpu.metrics()["fallbacks_by_op"])
    cpu = run_side(call, "cpu")
    if cpu_done is not None:
        cpu_done()
    tpu = run_side(call, "tpu")
    fell_back = torch_tpu.metrics()["fallbacks_by_op"] != before
    outcome, detail = compare(call, cpu, tpu, oracle.canon_for(call), oracle.tolerance_dtype(call))
    if outcome in (EXC_TYPE, TPU_RAISED):
        # The backend checks arguments with PyTorch's meta kernels: say so
        # where the meta kernel itself raises what tpu raised.
        meta = run_side(call, "meta")
        if isinstance(meta, Raised) and meta.type == tpu.type:
            detail += " [meta kernel raises the same]"
    if outcome not in OK_KINDS:
        why = oracle.excuse(call, outcome, cpu, tpu)
        if why:
            return UNDEFINED, why, fell_back
    return outcome, detail, fell_back
