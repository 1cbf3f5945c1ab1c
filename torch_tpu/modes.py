"""Eager execution modes: strict (asynchronous, the default) and debug."""
import contextlib

from . import _C


@contextlib.contextmanager
def debug_mode(enabled: bool = True):
    """Runs every op synchronously and checks its errors at once."""
    prev = _C.debug_mode()
    _C.set_debug_mode(enabled)
    try:
        yield
    finally:
        _C.set_debug_mode(prev)
