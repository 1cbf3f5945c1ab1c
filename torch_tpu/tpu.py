"""``torch.tpu``: device, memory and RNG management, like ``torch.cuda``."""
import contextlib
import os
from dataclasses import dataclass

import torch

from . import _C
from .precision import Precision, current_precision, precision  # noqa: F401  (torch.tpu.precision API)
from . import ops  # noqa: F401  (torch.tpu.ops: ragged_dot, optimization_barrier)
from . import pallas  # noqa: F401  (torch.tpu.pallas.jax_op; JAX is imported when a jax_op is made)
from .modes import EagerMode, set_eager_mode, module_with_eager_mode_property  # noqa: F401


def _index(device=None) -> int:
    """Device index from None (current), an int, 'tpu:N' or a torch.device."""
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "tpu":
        raise ValueError(f"expected a tpu device, got {d}")
    return _C.current_device() if d.index is None else d.index


def is_available() -> bool:
    return _C.device_count() > 0


def is_initialized() -> bool:
    return _C._runtime_started()


def init() -> None:
    _C._start_runtime()


def device_count() -> int:
    return _C.device_count()


def current_device() -> int:
    return _C.current_device()


def set_device(device) -> None:
    _C.set_device(_launched_rank_as_device(_index(device)))


def _launched_rank_as_device(idx: int) -> int:
    """Under torchrun each process sees one device, tpu:0: the host's device
    LOCAL_RANK. set_device(LOCAL_RANK), which DeviceMesh and launch helpers
    call, selects it."""
    local_rank = os.environ.get("LOCAL_RANK")
    if (local_rank is not None and "WORLD_SIZE" in os.environ and "TORCH_TPU_NUM_CPU_DEVICES" not in os.environ
            and idx == int(local_rank) and _C.device_count() == 1):
        return 0
    return idx


class device:
    """Context manager that makes ``device`` the current tpu device."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = _C.current_device()
        _C.set_device(self.idx)

    def __exit__(self, *exc):
        _C.set_device(self.prev)
        return False


def synchronize(device=None) -> None:
    """Waits for all work queued on the device; raises its first error."""
    _C.synchronize(-1 if device is None else _index(device))


class device_of(device):
    """Makes the device of tensor ``obj`` current; does nothing for a CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "tpu" else -1)

    def __enter__(self):
        if self.idx >= 0:
            super().__enter__()

    def __exit__(self, *exc):
        if self.idx >= 0:
            super().__exit__(*exc)
        return False


@dataclass(frozen=True)
class _DeviceProperties:
    name: str
    platform: str
    platform_version: str
    total_memory: int
    index: int
    # Compute units that run one program in parallel: the host's cores for the
    # CPU plugin; one per PJRT device otherwise (a TPU core or a GPU is one device).
    multi_processor_count: int


def get_device_properties(device=None) -> _DeviceProperties:
    i = _index(device)
    info = _C._runtime_info()
    if not 0 <= i < len(info["devices"]):
        raise AssertionError(f"Invalid device id {i}: there are {len(info['devices'])} tpu devices")
    d = info["devices"][i]
    return _DeviceProperties(
        name=d["kind"],
        platform=info["platform_name"],
        platform_version=info["platform_version"],
        total_memory=_C.mem_get_info(i)[1],
        index=i,
        multi_processor_count=(os.cpu_count() or 1) if info["platform_name"] == "cpu" else 1,
    )


def get_device_capability(device=None) -> dict:
    """What the device supports, as torch.accelerator.get_device_capability:
    {"supported_dtypes": [...]}."""
    return torch.accelerator.get_device_capability(torch.device("tpu", _index(device)))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


# --- memory ------------------------------------------------------------------

def memory_allocated(device=None) -> int:
    """Bytes held by live tpu storages on the device."""
    return _C.memory_allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    return _C.max_memory_allocated(_index(device))


def reset_peak_memory_stats(device=None) -> None:
    _C.reset_peak_memory_stats(_index(device))


def memory_stats(device=None) -> dict:
    """CUDA-style flat statistics ("allocated_bytes.all.current", ...): the
    registered device allocator's, as torch.accelerator.memory_stats gives."""
    return dict(torch.accelerator.memory_stats(_index(device)))


def mem_get_info(device=None):
    """(free, total) bytes of the device's memory."""
    return tuple(_C.mem_get_info(_index(device)))


def empty_cache() -> None:
    """No cache to drop: freed storages release their buffers at once."""


# --- random numbers ----------------------------------------------------------

def get_amp_supported_dtype():
    """Dtypes torch.autocast(device_type="tpu") may cast to (gradient
    checkpointing and AMP ask the device module)."""
    return [torch.bfloat16, torch.float16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 is native on TPUs and supported by every XLA backend."""
    return True


def _generator(device=None) -> torch.Generator:
    return _C._default_generator(_index(device))


class _DefaultGenerators:
    def __getitem__(self, i):
        if not -device_count() <= i < device_count():
            raise IndexError(f"tpu generator index {i} out of range ({device_count()} devices)")
        return _C._default_generator(i % device_count())

    def __iter__(self):
        return (self[i] for i in range(device_count()))

    def __len__(self):
        return device_count()


default_generators = _DefaultGenerators()


def _is_in_bad_fork() -> bool:
    """True in a child forked after the tpu runtime started in the parent:
    using tpu there raises (the parent's PJRT client cannot be shared)."""
    return _C._is_in_bad_fork()


def manual_seed(seed) -> None:
    _generator().manual_seed(int(seed))


def manual_seed_all(seed) -> None:
    for i in range(max(device_count(), 1)):
        _C._default_generator(i).manual_seed(int(seed))


def seed() -> None:
    _generator().seed()


def seed_all() -> None:
    for i in range(max(device_count(), 1)):
        _C._default_generator(i).seed()


def initial_seed() -> int:
    return _generator().initial_seed()


def get_rng_state(device="tpu") -> torch.Tensor:
    return _generator(device).get_state()


def get_rng_state_all():
    return [_C._default_generator(i).get_state() for i in range(device_count())]


def set_rng_state(new_state: torch.Tensor, device="tpu") -> None:
    _generator(device).set_state(new_state.to("cpu", torch.uint8).contiguous())


def set_rng_state_all(new_states) -> None:
    for i, s in enumerate(new_states):
        set_rng_state(s, i)


# --- streams and events --------------------------------------------------------
# PJRT orders each device's work by its data dependencies: a device has one
# stream, every Stream object of a device is that stream, and work "on another
# stream" is ordered with it, which is always safe for code written for CUDA's
# streams (their waits cost nothing here). Events are real: they cover the work
# queued before record(), report completion, wait for it and time it.

# Both construct plain torch.Stream / torch.Event objects: PyTorch's bindings
# accept only those (not subclasses) as the other stream or event of a call.
class Stream:
    """torch.cuda.Stream(device, priority) on tpu: a torch.Stream (priority accepted, all equal)."""

    def __new__(cls, device=None, priority=0, **kwargs):
        return torch.Stream(device=torch.device("tpu", _index(device)), priority=priority, **kwargs)


class Event:
    """torch.cuda.Event(enable_timing, blocking) on tpu: a torch.Event with
    record, wait, query, synchronize and elapsed_time."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise RuntimeError("tpu events cannot be shared between processes (interprocess=True)")
        return torch.Event(device="tpu", enable_timing=enable_timing, blocking=blocking)


def default_stream(device=None) -> torch.Stream:
    return torch.Stream(device=torch.device("tpu", _index(device)))


def current_stream(device=None) -> torch.Stream:
    return default_stream(device)


def set_stream(s) -> None:
    """Makes ``s``'s device current (the device's one stream is then current)."""
    if s is not None:
        set_device(s.device_index)


@contextlib.contextmanager
def stream(s=None):
    """Runs the block with ``s``'s device current (it has one stream)."""
    if s is None:
        yield
        return
    with device(s.device_index):
        yield


# torch.tpu.eager_mode: reads and sets the eager mode (torch_tpu/modes.py).
module_with_eager_mode_property(__import__("sys").modules[__name__])
