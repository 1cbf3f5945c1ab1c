"""`experts_implementation="tpu_ragged"` for Transformers' mixture-of-experts
models (the `@use_experts_implementation` experts of Qwen3-MoE, Mixtral, ...):
tokens sorted by expert, then torch.tpu.ops.ragged_dot for the gate/up and down
projections. Unlike "grouped_mm" on tpu (every expert's product for every row)
this does each row's work once; unlike "eager" (a loop over the experts hit,
found on the host) nothing waits for the device: no .item(), no nonzero, no
shape that depends on the routing, so eager calls queue without a stall and
torch.compile(fullgraph=True) takes the whole layer.

Registered in Transformers' ExpertsInterface when (and if) the program
imports `transformers.integrations.moe`; torch_tpu does not import it."""
import torch

from .import_hook import after_import

NAME = "tpu_ragged"
_MODULE = "transformers.integrations.moe"


def _projection(x, weight, group_sizes, stored_transposed):
    """x @ each group's expert weight. Transformers stores [E, out, in] unless
    `is_transposed` ([E, in, out]); ragged_dot reads either in place."""
    return torch.ops.tpu.ragged_dot(x.to(weight.dtype), weight, group_sizes, not stored_transposed)


def tpu_ragged_experts_forward(self, hidden_states, top_k_index, top_k_weights):
    num_tokens, hidden = hidden_states.shape
    k = top_k_index.size(-1)
    expert_ids = top_k_index.reshape(-1)  # (S,) token-major: pair s is token s // k
    num_experts = self.num_experts
    # Sort the (token, expert) pairs by expert: each expert's rows become one
    # contiguous group. Expert-parallel sentinels (ids >= num_experts) sort
    # last, count in no group, and ragged_dot leaves their rows zero.
    sorted_ids, perm = torch.sort(expert_ids, stable=True)
    x = hidden_states[perm // k]
    experts = torch.arange(num_experts, device=expert_ids.device)
    group_sizes = (sorted_ids.unsqueeze(1) == experts).sum(0, dtype=torch.int32)  # (E,), on the device
    real = None
    if self.has_bias or self._is_expert_parallel:
        real = (sorted_ids < num_experts).unsqueeze(-1)
        bias_ids = sorted_ids.clamp(max=num_experts - 1)

    up = self.gate_up_proj if self.has_gate else self.up_proj
    proj = _projection(x, up, group_sizes, self.is_transposed)
    if self.has_bias:
        up_bias = self.gate_up_proj_bias if self.has_gate else self.up_proj_bias
        proj = proj + up_bias[bias_ids] * real
    proj = self._apply_gate(proj) if self.has_gate else self.act_fn(proj)
    out = _projection(proj, self.down_proj, group_sizes, self.is_transposed)
    if self.has_bias:
        out = out + self.down_proj_bias[bias_ids] * real
    if self.has_post_expert_norm:
        out = self.post_expert_norm(out)
    weights = top_k_weights.reshape(-1)[perm]
    if real is not None:
        weights = weights * real.squeeze(-1)
    out = out * weights.unsqueeze(-1)
    # Back to token-major order, then each token's k results summed (as the
    # other implementations do, in the output's dtype).
    out = torch.zeros_like(out).index_copy(0, perm, out)
    return out.view(num_tokens, k, hidden).sum(dim=1).to(hidden_states.dtype)


def _register(moe_module) -> None:
    moe_module.ExpertsInterface.register(NAME, tpu_ragged_experts_forward)


def install() -> None:
    after_import(_MODULE, _register)
