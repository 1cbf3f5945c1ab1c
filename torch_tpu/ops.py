"""``torch.tpu.ops``: TorchTPU's own ops, lowered natively (csrc/ops).

* ``ragged_dot(lhs, rhs, group_sizes)``: ``jax.lax.ragged_dot``. ``lhs``
  [M, K] holds G consecutive groups of rows, ``group_sizes[g]`` rows each
  (an integer tensor, read on the device: no host synchronization); group g's
  rows are multiplied by ``rhs[g]`` ([G, K, N]); rows past
  ``sum(group_sizes)`` are zero. Differentiable in ``lhs`` and ``rhs``.
* ``optimization_barrier(*tensors)``: the tensors, unchanged, through
  StableHLO's ``optimization_barrier`` (XLA moves no computation across it).

The schemas are ``torch.ops.tpu.ragged_dot`` / ``ragged_dot_weight_grad`` /
``optimization_barrier`` (csrc/eager/tpu_op_schemas.cpp); this module gives
them meta kernels (shapes, and the errors for bad input), autograd formulas
and reference CPU kernels. torch.compile(backend="tpu") lowers them with the
same rules as eager.
"""
import torch

__all__ = ["ragged_dot", "optimization_barrier"]

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def ragged_dot(lhs: torch.Tensor, rhs: torch.Tensor, group_sizes: torch.Tensor) -> torch.Tensor:
    """out[i] = lhs[i] @ rhs[g(i)] where row i lies in group g(i); [M, N].

    A transposed view of a contiguous weight (``w.transpose(1, 2)`` of a
    [G, N, K] tensor, as Transformers stores experts) is read in place."""
    if isinstance(group_sizes, torch.Tensor) and isinstance(lhs, torch.Tensor) and group_sizes.device != lhs.device:
        group_sizes = group_sizes.to(lhs.device)
    if (isinstance(rhs, torch.Tensor) and rhs.dim() == 3 and not rhs.is_contiguous()
            and rhs.transpose(1, 2).is_contiguous()):
        return torch.ops.tpu.ragged_dot(lhs, rhs.transpose(1, 2), group_sizes, True)
    return torch.ops.tpu.ragged_dot(lhs, rhs, group_sizes)


def optimization_barrier(*tensors: torch.Tensor):
    """The tensors through an optimization barrier: one tensor for one, else a tuple."""
    out = torch.ops.tpu.optimization_barrier(list(tensors))
    return out[0] if len(out) == 1 else tuple(out)


# --- meta kernels: shapes, dtypes and the errors for bad input --------------

def _fail(op, msg):
    raise RuntimeError(f"torch.ops.tpu.{op}: {msg}")


def _check_group_sizes(op, group_sizes, groups=None):
    if group_sizes.dim() != 1 or group_sizes.dtype not in _INTS:
        _fail(op, f"group_sizes must be a 1-d integer tensor [G], got {group_sizes.dtype} {tuple(group_sizes.shape)}")
    if groups is not None and group_sizes.shape[0] != groups:
        _fail(op, f"group_sizes has {group_sizes.shape[0]} groups, expected {groups}")


def _check_operands(op, lhs, other, other_name, other_rank):
    if lhs.dim() != 2:
        _fail(op, f"lhs must be 2-d [M, K], got shape {tuple(lhs.shape)}")
    if other.dim() != other_rank:
        _fail(op, f"{other_name} must be {other_rank}-d, got shape {tuple(other.shape)}")
    if lhs.dtype not in _FLOATS:
        _fail(op, f"lhs must be float16, bfloat16, float32 or float64, got {lhs.dtype}")
    if other.dtype != lhs.dtype:
        _fail(op, f"lhs and {other_name} must have the same dtype, got {lhs.dtype} and {other.dtype}")


@torch.library.register_fake("tpu::ragged_dot")
def _ragged_dot_meta(lhs, rhs, group_sizes, transpose_rhs=False):
    _check_operands("ragged_dot", lhs, rhs, "rhs", 3)
    k, n = (rhs.shape[2], rhs.shape[1]) if transpose_rhs else (rhs.shape[1], rhs.shape[2])
    if lhs.shape[1] != k:
        layout = "[G, N, K]" if transpose_rhs else "[G, K, N]"
        _fail("ragged_dot", f"lhs [M, K] {tuple(lhs.shape)} and rhs {layout} {tuple(rhs.shape)} differ in K")
    _check_group_sizes("ragged_dot", group_sizes, rhs.shape[0])
    return lhs.new_empty((lhs.shape[0], n))


@torch.library.register_fake("tpu::ragged_dot_weight_grad")
def _ragged_dot_weight_grad_meta(lhs, grad, group_sizes, transpose_rhs=False):
    _check_operands("ragged_dot_weight_grad", lhs, grad, "grad", 2)
    if grad.shape[0] != lhs.shape[0]:
        _fail("ragged_dot_weight_grad", f"lhs {tuple(lhs.shape)} and grad {tuple(grad.shape)} differ in M")
    _check_group_sizes("ragged_dot_weight_grad", group_sizes)
    g, k, n = group_sizes.shape[0], lhs.shape[1], grad.shape[1]
    return lhs.new_empty((g, n, k) if transpose_rhs else (g, k, n))


@torch.library.register_fake("tpu::optimization_barrier")
def _optimization_barrier_meta(tensors):
    return [torch.empty_like(t) for t in tensors]


# --- autograd ----------------------------------------------------------------

def _ragged_dot_setup(ctx, inputs, output):
    lhs, rhs, group_sizes, *rest = inputs
    ctx.transpose_rhs = bool(rest[0]) if rest else False
    ctx.save_for_backward(lhs, rhs, group_sizes)


def _ragged_dot_backward(ctx, grad):
    lhs, rhs, group_sizes = ctx.saved_tensors
    d_lhs = d_rhs = None
    if ctx.needs_input_grad[0]:  # grad @ rhs[g]^T: the same op with rhs read the other way round
        d_lhs = torch.ops.tpu.ragged_dot(grad, rhs, group_sizes, not ctx.transpose_rhs)
    if ctx.needs_input_grad[1]:
        d_rhs = torch.ops.tpu.ragged_dot_weight_grad(lhs, grad, group_sizes, ctx.transpose_rhs)
    return d_lhs, d_rhs, None, None


def _barrier_backward(ctx, grads):
    return list(torch.ops.tpu.optimization_barrier(list(grads))),  # JAX's transpose: a barrier on the cotangents


torch.library.register_autograd("tpu::ragged_dot", _ragged_dot_backward, setup_context=_ragged_dot_setup)
torch.library.register_autograd("tpu::optimization_barrier", _barrier_backward)


# --- reference CPU kernels (the per-group loop; reads the sizes on the host) --

def _ragged_dot_cpu(lhs, rhs, group_sizes, transpose_rhs=False):
    out = lhs.new_zeros((lhs.shape[0], rhs.shape[1] if transpose_rhs else rhs.shape[2]))
    start = 0
    for g, size in enumerate(group_sizes.tolist()):
        end = min(start + max(size, 0), lhs.shape[0])
        w = rhs[g].t() if transpose_rhs else rhs[g]
        out[start:end] = lhs[start:end] @ w
        start = end
    return out


def _ragged_dot_weight_grad_cpu(lhs, grad, group_sizes, transpose_rhs=False):
    g, k, n = group_sizes.shape[0], lhs.shape[1], grad.shape[1]
    out = lhs.new_zeros((g, n, k) if transpose_rhs else (g, k, n))
    start = 0
    for i, size in enumerate(group_sizes.tolist()):
        end = min(start + max(size, 0), lhs.shape[0])
        part = lhs[start:end].t() @ grad[start:end]
        out[i] = part.t() if transpose_rhs else part
        start = end
    return out


torch.library.impl("tpu::ragged_dot", "cpu", _ragged_dot_cpu)
torch.library.impl("tpu::ragged_dot_weight_grad", "cpu", _ragged_dot_weight_grad_cpu)
torch.library.impl("tpu::optimization_barrier", "cpu", lambda tensors: [t.clone() for t in tensors])
