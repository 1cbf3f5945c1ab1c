"""Accelerate (1.15) picks its default device from a fixed list (cuda, xpu,
npu, ...) and falls back to the CPU, so `Trainer` -- which itself selects
`tpu:0` -- would have its model moved back to the CPU by
`Accelerator.prepare`. This adds `tpu` to that choice: when tpu is PyTorch's
current accelerator and Accelerate would pick the CPU, it picks `tpu`.
`use_cpu=True` / `Accelerator(cpu=True)` and ACCELERATE_TORCH_DEVICE still win.

Accelerate is not imported for this: the patch is applied when (and if) the
program imports `accelerate.state`."""
import importlib.abc
import importlib.util
import sys

import torch

_MODULE = "accelerate.state"


def _patch(state_module) -> None:
    cls = state_module.PartialState
    original = cls.default_device
    if getattr(original.fget, "_torch_tpu", False):
        return

    def default_device(self):
        device = original.fget(self)
        acc = torch.accelerator.current_accelerator()
        if device.type == "cpu" and acc is not None and acc.type == "tpu" and torch.accelerator.is_available():
            return torch.device("tpu")
        return device

    default_device._torch_tpu = True
    cls.default_device = property(default_device, doc=original.__doc__)


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of accelerate.state."""

    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            _patch(module)

        loader.exec_module = exec_and_patch
        return spec


def install() -> None:
    if _MODULE in sys.modules:
        _patch(sys.modules[_MODULE])
    elif not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())
