"""Eager execution modes: strict (asynchronous, the default), debug
(synchronous, every op checked) and fused (ops deferred into a bounded window
compiled as one program). Google TorchTPU's names are ``EagerMode.DEFER_NEVER``,
``DEFER_NEVER_AND_LAUNCH_BLOCKING`` and ``DEFER_AND_FUSE``."""
import contextlib
import enum

from . import _C


class EagerMode(enum.Enum):
    DEFER_NEVER = 0                      # strict
    DEFER_NEVER_AND_LAUNCH_BLOCKING = 1  # debug
    DEFER_AND_FUSE = 2                   # fused

    @classmethod
    def of(cls, mode) -> "EagerMode":
        if isinstance(mode, cls):
            return mode
        if isinstance(mode, str):
            named = {"strict": cls.DEFER_NEVER, "debug": cls.DEFER_NEVER_AND_LAUNCH_BLOCKING,
                     "fused": cls.DEFER_AND_FUSE}
            key = mode.lower() if mode.lower() in named else None
            if key:
                return named[key]
            if mode in cls.__members__:
                return cls[mode]
        raise ValueError(f"unknown eager mode {mode!r}: use torch.tpu.EagerMode.DEFER_NEVER, "
                         "DEFER_NEVER_AND_LAUNCH_BLOCKING or DEFER_AND_FUSE (or 'strict', 'debug', 'fused')")


def get_eager_mode() -> EagerMode:
    return EagerMode(_C._eager_mode())


class set_eager_mode:
    """Sets the eager mode at once; as a context manager, restores the previous
    mode on exit. A change runs the pending fused window first."""

    def __init__(self, mode):
        self._prev = get_eager_mode()
        _C._set_eager_mode(EagerMode.of(mode).value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_eager_mode(self._prev.value)
        return False


@contextlib.contextmanager
def debug_mode(enabled: bool = True):
    """Runs every op synchronously and checks its errors at once."""
    prev = _C.debug_mode()
    _C.set_debug_mode(enabled)
    try:
        yield
    finally:
        _C.set_debug_mode(prev)


def module_with_eager_mode_property(module) -> None:
    """Gives a module an ``eager_mode`` attribute that reads and sets the mode
    (``torch.tpu.eager_mode = torch.tpu.EagerMode.DEFER_AND_FUSE``)."""
    base = type(module)

    class _WithEagerMode(base):
        @property
        def eager_mode(self):
            return get_eager_mode()

        @eager_mode.setter
        def eager_mode(self, mode):
            _C._set_eager_mode(EagerMode.of(mode).value)

    module.__class__ = _WithEagerMode
