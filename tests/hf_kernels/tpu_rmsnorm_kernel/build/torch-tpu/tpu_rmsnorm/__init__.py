"""tpu-rmsnorm: an RMSNorm kernel for the ``tpu`` device (torch_tpu), written
in JAX and run as a torch op with ``torch_tpu._internal.pallas.jax_op``.

Imports inside the kernel are relative: kernels imports the package under
its build id (``metadata.json`` ``id``), not under ``tpu_rmsnorm``.
"""
from . import layers
from ._ops import OPS_PREFIX, call_count, rms_norm, rms_norm_op_name

__all__ = ["OPS_PREFIX", "call_count", "layers", "rms_norm", "rms_norm_op_name"]
