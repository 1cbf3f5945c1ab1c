"""Shared checks for op tests: run the same function on CPU tensors and on
their tpu copies and compare with torch.testing.assert_close."""
import torch
from torch.testing import assert_close

FLOAT_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [torch.bool]


def make(shape, dtype, seed=0, low=None, high=None, noncontiguous=False):
    """Deterministic CPU tensor; `noncontiguous` gives a strided view with the same values."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.rand(shape, generator=g) > 0.5
    elif dtype.is_floating_point:
        lo = -5.0 if low is None else low
        hi = 5.0 if high is None else high
        t = (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    else:
        info = torch.iinfo(dtype)
        lo = max(info.min, -100 if low is None else int(low))
        hi = min(info.max, 100 if high is None else int(high))
        t = torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int64).to(dtype)
    if noncontiguous and t.dim() > 0:
        # Same values, laid out with a gap after every element of the last dim.
        wide = torch.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=dtype)
        wide[..., ::2] = t
        t = wide[..., ::2]
        assert not t.is_contiguous() or t.numel() <= 1
    return t


def to_tpu(x):
    if isinstance(x, torch.Tensor):
        if x.is_contiguous() or x.dim() == 0:
            return x.to("tpu")
        # Keep the layout: copy the strided base and take the same view on tpu.
        base = x.as_strided((x.untyped_storage().nbytes() // x.element_size(),), (1,), 0)
        return base.to("tpu").as_strided(x.shape, x.stride(), x.storage_offset())
    if isinstance(x, (list, tuple)):
        return type(x)(to_tpu(e) for e in x)
    return x


def to_cpu(x):
    if isinstance(x, torch.Tensor):
        assert x.device.type == "tpu", f"expected a tpu result, got {x.device}"
        return x.cpu()
    if isinstance(x, (list, tuple)):
        return type(x)(to_cpu(e) for e in x)
    return x


def check(fn, *args, atol=None, rtol=None, equal_nan=True, exact_dtype=True, **kwargs):
    """fn(*cpu args) vs fn(*tpu args): same dtype, shape and values."""
    expect = fn(*args, **kwargs)
    got = to_cpu(fn(*to_tpu(list(args)), **{k: to_tpu(v) for k, v in kwargs.items()}))
    tol = {} if atol is None and rtol is None else {"atol": atol or 0, "rtol": rtol or 0}
    assert_close(got, expect, equal_nan=equal_nan, check_dtype=exact_dtype, **tol)
    return got


def check_inplace(fn, target, *args, **kwargs):
    """fn(target, *args) mutates target: compare the mutated tensors and the return values."""
    cpu_t = target.clone()
    tpu_t = to_tpu(target.clone())
    r_cpu = fn(cpu_t, *args, **kwargs)
    r_tpu = fn(tpu_t, *to_tpu(list(args)), **{k: to_tpu(v) for k, v in kwargs.items()})
    assert_close(tpu_t.cpu(), cpu_t, equal_nan=True)
    if isinstance(r_cpu, torch.Tensor):
        assert_close(r_tpu.cpu(), r_cpu, equal_nan=True)


def check_raises_like_cpu(fn, *args, **kwargs):
    """Same exception type on tpu as on CPU; returns the tpu exception. The
    arguments are the CPU's (their tpu copies are made here)."""
    for x in list(args) + list(kwargs.values()):
        for t in (x if isinstance(x, (list, tuple)) else [x]):
            assert not (isinstance(t, torch.Tensor) and t.device.type == "tpu"), \
                "check_raises_like_cpu takes CPU arguments: with tpu ones, both calls run on tpu"
    cpu_exc = tpu_exc = None
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        cpu_exc = e
    assert cpu_exc is not None, "the CPU call did not raise"
    try:
        fn(*to_tpu(list(args)), **{k: to_tpu(v) for k, v in kwargs.items()})
        torch.tpu.synchronize()
    except Exception as e:  # noqa: BLE001
        tpu_exc = e
    assert tpu_exc is not None, f"tpu did not raise; CPU raised {type(cpu_exc).__name__}: {cpu_exc}"
    assert isinstance(tpu_exc, type(cpu_exc)), f"tpu raised {type(tpu_exc).__name__}: {tpu_exc}; CPU raised {type(cpu_exc).__name__}: {cpu_exc}"
    return tpu_exc


def run_grads(fn, inputs, seed=5):
    """fn(*inputs) and the gradients of every floating input, under a fixed upstream gradient."""
    leaves = [t.detach().clone().requires_grad_() if t is not None and t.is_floating_point() else t
              for t in inputs]
    out = fn(*leaves)
    out.backward(make(out.shape, out.dtype, seed=seed).to(out.device))
    return [out.detach()] + [t.grad for t in leaves if t is not None and t.requires_grad]


def check_grads(fn, *inputs, **tol):
    expect = run_grads(fn, inputs)
    got = run_grads(fn, to_tpu(list(inputs)))
    assert len(got) == len(expect)
    for g, e in zip(got, expect):
        assert g.device.type == "tpu"
        torch.testing.assert_close(g.cpu(), e, **tol)
