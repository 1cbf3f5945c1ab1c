"""Exiting right after a tpu backward (torch_tpu/integrations/autograd_exit.py):
the exit handler drains every tpu device's autograd thread, so no process
dies with SIGABRT ("terminate called without an active exception") when that
thread releases the finished backward while the interpreter finalizes.

The race itself cannot be forced from outside (it hit ~3-8% of such exits
before the handler), so the subprocess test repeats the pattern; the
in-process test checks what the handler does."""
import atexit
import sys
import textwrap

import torch

import torch_tpu
from helpers import run_at_once
from torch_tpu.integrations import autograd_exit

TIMEOUT = 120

BACKWARD_THEN_EXIT = textwrap.dedent("""
    import torch, torch_tpu
    x = torch.linspace(-1, 1, 8, device="tpu", requires_grad=True)
    (x.sin() * 3).sum().backward()
    assert torch.allclose(x.grad.cpu(), 3 * torch.linspace(-1, 1, 8).cos())
    leaf = torch.empty(0, device="tpu", requires_grad=True)
    leaf.backward(torch.empty(0, device="tpu"))  # the last thing before exit: a task on the tpu thread
""")


def test_processes_exit_cleanly_right_after_a_backward():
    for _ in range(3):
        for rc, _, err in run_at_once([sys.executable, "-c", BACKWARD_THEN_EXIT], 2, timeout=TIMEOUT):
            assert rc == 0 and "terminate called" not in err, (rc, err)


def test_drain_runs_an_empty_backward_through_each_device():
    x = torch.ones(4, device="tpu", requires_grad=True)
    (x * 2).sum().backward()
    calls = []
    engine = torch.autograd.variable.Variable._execution_engine
    real = engine.run_backward

    class Spy:
        def run_backward(self, tensors, grads, *rest):
            calls.append([t.device for t in tensors] + [g.device for g in grads])
            return real(tensors, grads, *rest)

    torch.autograd.variable.Variable._execution_engine = Spy()
    try:
        autograd_exit.drain()
    finally:
        torch.autograd.variable.Variable._execution_engine = engine
    devices = [torch.device("tpu", i) for i in range(torch_tpu.tpu.device_count())]
    assert calls == [[d, d] for d in devices]
    torch.testing.assert_close(x.grad.cpu(), torch.full((4,), 2.0))  # earlier gradients untouched


def test_install_registers_the_exit_handler(monkeypatch):
    registered = []
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: registered.append(fn) or fn)
    autograd_exit.install()  # as torch_tpu/__init__.py does at import
    assert registered == [autograd_exit._drain_at_exit]
