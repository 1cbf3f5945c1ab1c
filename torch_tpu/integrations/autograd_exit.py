"""At exit, the tpu devices' autograd threads let go of every finished
backward before the interpreter finalizes.

torch 2.13 stashes a ``contextvars.Context`` in the thread-local state that
each backward captures (``_engine_run_backward`` in torch/autograd/graph.py).
The engine runs a tpu backward on the device's own thread, which may drop the
last reference to the finished graph task (and so the context) just after
``backward()`` has returned in the main thread. If the main thread is already
finalizing the interpreter, that decref's wait for the GIL ends the thread by
unwinding through a noexcept frame: "terminate called without an active
exception" and SIGABRT, at about 3% of the exits right after a tpu backward
(seen in tests that spawn processes).

install() registers an exit handler that runs one empty backward per tpu
device straight through the engine (no stash, so its own graph task holds no
Python object). Each device thread takes tasks in order, so when that backward
returns, the thread has finished with, and released, every earlier one.
"""
from __future__ import annotations

import atexit

import torch


def drain() -> None:
    """One empty backward through each tpu device's autograd thread."""
    from torch.autograd.variable import Variable

    from .. import tpu

    if not tpu.is_initialized():
        return  # no tpu tensor was ever made: no tpu backward ran
    for i in range(tpu.device_count()):
        leaf = torch.empty(0, device=f"tpu:{i}", requires_grad=True)
        grad = torch.empty(0, device=f"tpu:{i}")
        # tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad
        Variable._execution_engine.run_backward((leaf,), (grad,), False, False, (), True, True)


def _drain_at_exit() -> None:
    try:
        drain()
    except Exception:  # noqa: BLE001 - a broken runtime at exit must not turn into an exit error
        pass


def install() -> None:
    atexit.register(_drain_at_exit)
