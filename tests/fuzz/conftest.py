"""Helpers of the fuzz suite: CPU/tpu parity of a small call, and running a
call that may kill its process in a subprocess."""
import subprocess
import sys
import warnings

import pytest
import torch
from torch.utils import _pytree as pytree


def run(fn, device):
    """fn(device) with its results on the CPU (synchronized), or the exception it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(device)
            leaves, spec = pytree.tree_flatten(out)
            leaves = [t.detach().cpu() if isinstance(t, torch.Tensor) else t for t in leaves]
            if device != "cpu":
                torch.tpu.synchronize()
        return pytree.tree_unflatten(leaves, spec)
    except Exception as exc:  # noqa: BLE001 - an exception is a result here
        return exc


def parity(fn):
    """None if fn behaves alike on the CPU and on tpu (equal results, exact
    dtype; or the same exception type), else how it differs."""
    cpu, tpu = run(fn, "cpu"), run(fn, "tpu")
    if isinstance(cpu, Exception) or isinstance(tpu, Exception):
        if type(cpu) is type(tpu):
            return None
        what = lambda r: f"{type(r).__name__}: {str(r).splitlines()[0][:120] if str(r) else ''}" \
            if isinstance(r, Exception) else "a result"  # noqa: E731
        return f"tpu gives {what(tpu)}; CPU gives {what(cpu)}"
    try:
        torch.testing.assert_close(tpu, cpu, equal_nan=True, check_dtype=True)
    except AssertionError as exc:
        return f"tpu {tpu!r:.200}; CPU {cpu!r:.200} ({str(exc).splitlines()[0]})"
    return None


def assert_parity(cases):
    """Every case ({name: fn(device)}) behaves alike on the CPU and tpu."""
    bad = {name: why for name, fn in cases.items() if (why := parity(fn)) is not None}
    assert not bad, "differs from the CPU:\n" + "\n".join(f"  {k}: {v}" for k, v in bad.items())


def survives(code):
    """Runs `code` (tpu calls) in a fresh process: (returncode, output tail)."""
    p = subprocess.run([sys.executable, "-c", "import torch\n" + code], capture_output=True, text=True, timeout=300)
    return p.returncode, (p.stdout + p.stderr)[-400:]


def raises_in_fresh_process(call, exc="RuntimeError"):
    """The tpu call `call` (one line), run in a fresh process, raises `exc`
    and the process lives on (a crash found by the fuzzer killed it)."""
    rc, out = survives(f"try:\n    {call}\nexcept {exc}:\n    print('raised {exc}')")
    assert rc == 0 and f"raised {exc}" in out, f"exit {rc}: {out}"


@pytest.fixture
def no_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


@pytest.fixture(name="assert_parity")
def _assert_parity():
    return assert_parity


@pytest.fixture(name="raises_in_fresh_process")
def _raises_in_fresh_process():
    return raises_in_fresh_process


@pytest.fixture(name="survives")
def _survives():
    return survives
