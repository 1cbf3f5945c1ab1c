"""Helpers shared by the top-level tests."""
import pytest
import torch

# Every dtype the CPU backend supports for these tests except complex32,
# which is rejected with a clear error (tested separately).
ALL_DTYPES = [
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
    torch.complex64, torch.complex128,
]


def make_cpu(shape, dtype, seed=0):
    """Deterministic CPU values that exercise the dtype's range (signs, fractions)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 10).to(dtype)
    if dtype.is_complex:
        return (torch.randn(shape, generator=g, dtype=torch.complex128) * 10).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int64).to(dtype)


def run_at_once(cmd, copies=2, env=None, timeout=300):
    """Starts `copies` processes of `cmd` together and waits for all of them
    (a hang fails the test: `timeout` seconds each, leftovers killed); returns
    [(returncode, stdout, stderr)] in start order."""
    import subprocess

    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(copies)]
    try:
        outs = [p.communicate(timeout=timeout) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs)]


def raises_like_the_cpu(fn):
    """fn(device) raises on the CPU and on tpu (by the next synchronization:
    a check of device values raises there) an exception of the same type;
    returns the two (CPU's, tpu's)."""
    with pytest.raises(Exception) as cpu:
        fn("cpu")
    with pytest.raises(Exception) as tpu:
        fn("tpu")
        torch.tpu.synchronize()
    assert type(tpu.value) is type(cpu.value), (tpu.value, cpu.value)
    return cpu.value, tpu.value
