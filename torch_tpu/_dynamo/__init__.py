"""The torch.compile backend "tpu" (see backend.py).

torch.compile finds it through the ``torch_dynamo_backends`` entry point
(``tpu = "torch_tpu._dynamo:tpu_backend"``), so ``import torch`` does not pay
for importing Dynamo; ``register()`` does the same by hand where the package
metadata lacks it.
"""
from .backend import decompositions, metrics, reset_metrics, tpu_backend  # noqa: F401


def register() -> None:
    """Registers the "tpu" backend with Dynamo unless it is already known."""
    from torch._dynamo.backends import registry

    if "tpu" not in registry._COMPILER_FNS:
        registry.register_backend(compiler_fn=tpu_backend, name="tpu")
