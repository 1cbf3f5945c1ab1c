"""Custom kernels from JAX and Pallas on tpu tensors (``torch.tpu.pallas``).
JAX is optional (``pip install 'torch_tpu[jax]'``); it is imported when a
jax_op is made."""
from .jax_op import JaxOp, jax_op  # noqa: F401
