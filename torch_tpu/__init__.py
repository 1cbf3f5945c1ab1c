"""torch_tpu: a PyTorch device backend named ``tpu``, on XLA through PJRT.

``import torch`` loads it (a ``torch.backends`` entry point); ``import
torch_tpu`` works too. The PJRT plugin itself starts on first use.
"""
import sys


def _autoload():
    """Entry point for torch's device-backend autoload; importing did the work.

    Defined before `import torch`: when torch_tpu is imported first (e.g.
    `python -m torch_tpu.examples.generate`), importing torch runs the
    autoload while this module is still initializing, and finds this."""


import torch  # noqa: E402

from . import _C

# Plugin discovery looks for plugin wheels on sys.path (see csrc/pjrt/plugin_locator).
_C._set_plugin_search_dirs([p for p in sys.path if p])
_C._register_ops()

torch.utils.rename_privateuse1_backend("tpu")

from . import tpu as _tpu_module  # noqa: E402
from . import backends as _backends  # noqa: E402

torch._register_device_module("tpu", _tpu_module)
sys.modules.setdefault("torch.tpu.ops", _tpu_module.ops)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
torch.backends.tpu = _backends
sys.modules.setdefault("torch.backends.tpu", _backends)

from .config import config_text, metrics, reset_metrics, show_config  # noqa: E402,F401
from .modes import debug_mode  # noqa: E402,F401
from .integrations import accelerate_device as _accelerate_device  # noqa: E402
from .integrations import autograd_exit as _autograd_exit  # noqa: E402
from .integrations import inductor_reroute as _inductor_reroute  # noqa: E402
from .integrations import dlpack_guard as _dlpack_guard  # noqa: E402
from .integrations import multiprocessing_guard as _multiprocessing_guard  # noqa: E402
from .integrations import transformers_experts as _transformers_experts  # noqa: E402

_accelerate_device.install()  # Trainer/Accelerate place models on tpu (applied if accelerate is imported)
_autograd_exit.install()  # no SIGABRT at exit from a tpu autograd thread finishing a backward (torch 2.13)
_inductor_reroute.install()  # torch.compile's default (Inductor) on tpu tensors runs the tpu backend
_transformers_experts.install()  # experts_implementation="tpu_ragged" (registered if transformers' MoE is imported)

from . import distributed as _distributed  # noqa: E402

_distributed.register()  # dist.init_process_group("tpu_dist") and the default backend on tpu

__version__ = "0.1.0"
