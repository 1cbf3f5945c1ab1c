"""Sending a tpu tensor to another process fails at once with a clear error.

torch.multiprocessing shares CPU tensors through shared memory and CUDA
tensors through CUDA IPC handles; a tpu storage is a PJRT buffer owned by
this process's client, which another process cannot open, and PyTorch's CPU
path used to hang the receiver. The reducers registered here refuse tpu
tensors and storages in the sender and hand everything else to PyTorch's.
"""
from multiprocessing.reduction import ForkingPickler

import torch
from torch.multiprocessing import reductions

_MESSAGE = ("{what} on the tpu device cannot be sent to another process: its data is a device buffer of this "
            "process's PJRT client, which another process cannot open. Send {hint} instead, or create the "
            "tensor in the receiving process.")


def _reduce_tensor(tensor):
    if tensor.device.type == "tpu":
        raise RuntimeError(_MESSAGE.format(what=f"A tensor of shape {tuple(tensor.shape)}",
                                           hint="tensor.cpu()"))
    return reductions.reduce_tensor(tensor)


def _reduce_storage(storage):
    if storage.device.type == "tpu":
        raise RuntimeError(_MESSAGE.format(what="A storage", hint="storage.cpu()"))
    return reductions.reduce_storage(storage)


def _reduce_typed_storage(storage):
    if storage._untyped_storage.device.type == "tpu":
        raise RuntimeError(_MESSAGE.format(what="A storage", hint="storage.cpu()"))
    return reductions.reduce_typed_storage(storage)


def install():
    for cls in torch._tensor_classes:
        ForkingPickler.register(cls, _reduce_tensor)
    ForkingPickler.register(torch.Tensor, _reduce_tensor)
    ForkingPickler.register(torch.nn.parameter.Parameter, _reduce_tensor)
    ForkingPickler.register(torch.UntypedStorage, _reduce_storage)
    ForkingPickler.register(torch.TypedStorage, _reduce_typed_storage)


install()
