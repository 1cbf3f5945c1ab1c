"""DLPack export of a tpu tensor fails with a clear error.

A tpu tensor's data_ptr() is a virtual address naming a PJRT buffer, not
memory a DLPack consumer (NumPy, JAX, CuPy) can read; PyTorch's exporter
used to hand it out with a made-up device id, and reading it crashes or
returns garbage. Export a CPU copy instead.
"""
import functools

import torch
import torch.utils.dlpack

_MESSAGE = ("{op}: a tpu tensor cannot be exported through DLPack: its data is a PJRT device buffer, not memory "
            "that another library can address. Export tensor.cpu() instead.")


def _refuse_tpu(fn, op):
    @functools.wraps(fn)
    def wrapper(tensor, *args, **kwargs):
        if isinstance(tensor, torch.Tensor) and tensor.device.type == "tpu":
            raise RuntimeError(_MESSAGE.format(op=op))
        return fn(tensor, *args, **kwargs)
    return wrapper


def install():
    torch.utils.dlpack.to_dlpack = _refuse_tpu(torch.utils.dlpack.to_dlpack, "to_dlpack")
    if hasattr(torch, "to_dlpack"):
        torch.to_dlpack = torch.utils.dlpack.to_dlpack
    torch.Tensor.__dlpack__ = _refuse_tpu(torch.Tensor.__dlpack__, "__dlpack__")
    torch.Tensor.__dlpack_device__ = _refuse_tpu(torch.Tensor.__dlpack_device__, "__dlpack_device__")


install()
