"""Import paths of Google's TorchTPU that Hub kernels use (torch_tpu._internal.*)."""
