"""Float32 matmul precision on tpu: ``torch.tpu.Precision`` and the
``torch.tpu.precision(mode)`` context (TorchTPU's API).

``torch.set_float32_matmul_precision`` is honoured as it is on CUDA, for
float32 dots and convolutions: "highest" (the default) is full float32;
"high" and "medium" let a TPU use three or one bfloat16 passes (StableHLO's
HIGH and DEFAULT precision). ``torch.tpu.precision(mode)`` overrides the
setting for the current thread inside its block; contexts nest. Eager ops and
``torch.compile(backend="tpu")`` graphs both follow the setting in force when
they run (it is part of their cache keys). float64 and half-type work is
always exact.
"""
import contextlib
import enum

from . import _C


class Precision(enum.Enum):
    """StableHLO's precision for float32 dots and convolutions, each named by
    its ``torch.set_float32_matmul_precision`` equivalent."""

    DEFAULT = "medium"  # one bfloat16 pass on a TPU
    HIGH = "high"  # three bfloat16 passes
    HIGHEST = "highest"  # full float32


def _mode_name(mode) -> str:
    if isinstance(mode, Precision):
        return mode.value
    if isinstance(mode, str) and mode in {p.value for p in Precision}:
        return mode
    raise ValueError(f"torch.tpu.precision: expected a torch.tpu.Precision ({', '.join(p.name for p in Precision)}) "
                     f"or one of 'highest', 'high', 'medium', got {mode!r}")


def current_precision() -> Precision:
    """The precision float32 dots and convolutions use now on this thread."""
    return Precision(_C._matmul_precision())


@contextlib.contextmanager
def precision(mode):
    """Runs the block's float32 dots and convolutions at ``mode`` (a
    ``Precision`` or "highest"/"high"/"medium") on this thread."""
    name = _mode_name(mode)
    prev = _C._precision_override()
    _C._set_precision_override(name)
    try:
        yield
    finally:
        _C._set_precision_override(prev)
