"""torch.compile(model), with no backend or backend="inductor", on tpu
tensors runs through the "tpu" backend (as TorchTPU reroutes the default).

Inductor has a code generator of its own for a device named "tpu" (Pallas,
which imports JAX) that cannot run our tensors, and Transformers' generate
compile config defaults to Inductor. torch.compile hands such graphs to
torch._TorchCompileInductorWrapper; install() wraps its __call__ so a graph
whose inputs live on tpu goes to the tpu backend and every other graph to
Inductor as before. Only the call is wrapped: the import stays cheap (no
Dynamo, no Inductor until something compiles).
"""
from __future__ import annotations

import warnings

import torch


def _on_tpu(gm, example_inputs) -> bool:
    for x in example_inputs:
        if isinstance(x, torch.Tensor) and x.device.type == "tpu":
            return True
    for n in gm.graph.nodes:
        v = n.meta.get("example_value", n.meta.get("val")) if n.op == "placeholder" else None
        if isinstance(v, torch.Tensor) and v.device.type == "tpu":
            return True
    return False


def _mode_keys() -> set:
    """Inductor config keys its modes set (cudagraphs, autotuning): a mode
    has nothing to choose for an XLA program, so these pass silently."""
    from torch._inductor import list_mode_options

    keys = set()
    for mode in ("reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"):
        for dynamic in (False, True):
            keys.update(list_mode_options(mode, dynamic))
    return keys


_warned: set = set()


def _to_tpu_backend(gm, example_inputs, inductor_config: dict):
    from .._dynamo.backend import tpu_backend

    ignored = sorted(set(inductor_config) - _mode_keys())
    if ignored and tuple(ignored) not in _warned:
        _warned.add(tuple(ignored))
        warnings.warn(f"torch.compile on tpu tensors runs through the tpu backend; the Inductor options "
                      f"{ignored} do not apply to it and are ignored")
    return tpu_backend(gm, example_inputs)


def install() -> None:
    cls = torch._TorchCompileInductorWrapper
    if getattr(cls, "_torch_tpu_reroute", False):
        return
    inductor_call = cls.__call__

    def __call__(self, model_, inputs_, *, config_patches=None):
        if _on_tpu(model_, inputs_):
            return _to_tpu_backend(model_, inputs_, {**self.config, **(config_patches or {})})
        return inductor_call(self, model_, inputs_, config_patches=config_patches)

    cls.__call__ = __call__
    cls._torch_tpu_reroute = True
