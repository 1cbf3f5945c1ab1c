"""Layers for ``kernels.kernelize``: pure (no constructor, no state of their
own, only ``forward``), reading the members of the layer they replace."""
import torch
from torch import nn

from ._ops import rms_norm


class RMSNorm(nn.Module):
    """Replaces the forward of Transformers' ``LlamaRMSNorm`` /
    ``Qwen3RMSNorm`` (layer name ``"RMSNorm"``) with a jax_op on tpu."""

    # Members of the adopting layer that forward reads.
    weight: torch.Tensor
    variance_epsilon: float

    # The jax_op has no backward: kernelize keeps the original forward in
    # Mode.TRAINING. (can_torch_compile is absent, i.e. False.)
    has_backward = False

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return rms_norm(hidden_states, self.weight, self.variance_epsilon)
