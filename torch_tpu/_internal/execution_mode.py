"""Google TorchTPU's import path for the eager modes
(``execution_mode.eager_mode = execution_mode.EagerMode.DEFER_AND_FUSE``)."""
import sys

from ..modes import EagerMode, set_eager_mode, module_with_eager_mode_property

__all__ = ["EagerMode", "set_eager_mode", "eager_mode"]

module_with_eager_mode_property(sys.modules[__name__])
