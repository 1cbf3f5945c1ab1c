"""The kernel's ops: JAX functions made torch ops on tpu tensors with
``jax_op`` (``torch.ops.tpu_jax.<name>``).

jax_op names are global to the process and a name is made once, so every
name starts with this build's id (``metadata.json`` ``id``, as kernel-builder
bakes its ops namespace into ``_ops.py``) and each op is made once per process,
on first use. A second import of this package (kernels imports a variant once
per path; another path to the same files imports it again) reuses the ops the
first import made instead of making them again.
"""
import struct
import threading

import torch

# The build's id (metadata.json "id"): unique per kernel build, a Python identifier.
OPS_PREFIX = "_tpu_rmsnorm_tpu_local"

_lock = threading.Lock()
_ops = {}  # op name -> callable(x, weight) -> tensor
_calls = {"rms_norm": 0}


def rms_norm_op_name(eps: float) -> str:
    """The jax_op's name for this epsilon (eps is a constant of the exported
    function: one op per distinct value, named by its float64 bits)."""
    bits = struct.unpack("<Q", struct.pack("<d", float(eps)))[0]
    return f"{OPS_PREFIX}_rms_norm_{bits:016x}"


def _rms_norm_fn(eps):
    import jax
    import jax.numpy as jnp

    def rms_norm(x, weight):
        # As Transformers' LlamaRMSNorm/Qwen3RMSNorm: normalize in float32,
        # cast back to the input's dtype, then scale by the weight (whose dtype
        # decides the result's dtype by the usual promotion).
        h = x.astype(jnp.float32)
        variance = jnp.mean(h * h, axis=-1, keepdims=True)
        h = h * jax.lax.rsqrt(variance + eps)
        return weight * h.astype(x.dtype)

    return rms_norm


def _rms_norm_op(eps: float):
    name = rms_norm_op_name(eps)
    op = _ops.get(name)
    if op is None:
        with _lock:
            op = _ops.get(name)
            if op is None:
                if hasattr(torch.ops.tpu_jax, name):
                    # Made by an earlier import of this package: reuse it (one
                    # array out, nothing donated: the op's one result).
                    packet = getattr(torch.ops.tpu_jax, name)
                    op = lambda x, weight: packet([x, weight])[0]  # noqa: E731
                else:
                    from torch_tpu._internal.pallas import jax_op

                    op = jax_op(name, _rms_norm_fn(float(eps)))
                _ops[name] = op
    return op


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """RMSNorm over the last dimension of ``x`` (tpu tensors)."""
    _calls["rms_norm"] += 1
    return _rms_norm_op(eps)(x, weight)


def call_count() -> int:
    """How many times ``rms_norm`` ran in this process (tests use it to show
    that a kernelized model's forward is this kernel's)."""
    return _calls["rms_norm"]
