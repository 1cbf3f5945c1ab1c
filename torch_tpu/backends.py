"""``torch.backends.tpu``: what is built and available."""
from . import _C


def is_built() -> bool:
    return True


def is_available() -> bool:
    return _C.device_count() > 0
