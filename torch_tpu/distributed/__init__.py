"""``torch.distributed`` on tpu: the ``"tpu_dist"`` c10d backend (also ``"tpu"``).

Registered when torch_tpu loads, so ``dist.init_process_group("tpu_dist")``,
``init_process_group()`` with no backend on a tpu machine, DDP, FSDP2 and
DeviceMesh find it. The backend is C++ (``csrc/distributed``): it checks each
collective's arguments across ranks and moves the data through its transport,
which today stages through the host on a gloo group built on the same store.
"""
import torch.distributed as dist

from .. import _C

BACKEND_NAMES = ("tpu_dist", "tpu")


def _create_backend(store, rank, size, timeout):
    host_group = dist.ProcessGroupGloo(dist.PrefixStore("tpu_dist_host/", store), rank, size, timeout)
    return _C.TpuBackend(host_group, rank, size)


def register() -> None:
    if not dist.is_available():
        return
    for name in BACKEND_NAMES:
        if name not in dist.Backend.backend_list:
            # A list: a string would register its letters as device types.
            # CPU tensors too, for barriers and object collectives.
            dist.Backend.register_backend(name, _create_backend, devices=["tpu", "cpu"])
