"""segment_reduce (lengths and offsets, every reduction, initial values,
empty segments, NaN, ties) and its backward against the CPU."""
import math

import pytest
import torch

from harness import check, check_raises_like_cpu, make
from tiers import pairwise

REDUCTIONS = ["sum", "mean", "prod", "max", "min"]


def data_with_specials(shape, dtype, seed=0):
    x = make(shape, dtype, seed=seed, low=-3, high=3)
    flat = x.view(-1)
    flat[1] = flat[2]  # a tie (max/min gradients are shared)
    flat[4] = 0  # a zero (prod's gradient takes the other elements' product)
    return x


def grads(dev, fn, x):
    t = x.detach().clone().to(dev).requires_grad_()
    out = fn(t)
    g = torch.linspace(-1, 2, out.numel(), dtype=torch.float64).reshape(out.shape).to(x.dtype).to(dev)
    out.backward(g)
    return out.detach().cpu(), t.grad.cpu()


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16],
                                  "reduce", REDUCTIONS, "initial", [None, 2.0]))
def test_lengths_and_offsets_1d(dtype, reduce, initial):
    x = data_with_specials((9,), dtype)
    lengths = torch.tensor([2, 0, 3, 1, 3])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    for kw in (dict(lengths=lengths), dict(offsets=offsets)):
        def fn(t, kw=kw):
            return torch.segment_reduce(t, reduce, axis=0, unsafe=False, initial=initial, **{
                k: v.to(t.device) for k, v in kw.items()})
        check(fn, x)
        if not (reduce == "prod" and initial is not None) and dtype in (torch.float32, torch.float64):
            cpu, tpu = grads("cpu", fn, x), grads("tpu", fn, x)
            torch.testing.assert_close(tpu, cpu, equal_nan=True)


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_batched_axis_and_nan(reduce):
    x = data_with_specials((2, 7, 3), torch.float32)
    x[1, 5, 2] = math.nan
    lengths = torch.tensor([[3, 0, 4], [1, 5, 1]])  # per row of dim 0, reducing axis 1
    fn = lambda t: torch.segment_reduce(t, reduce, lengths=lengths.to(t.device), axis=1)  # noqa: E731
    check(fn, x)
    cpu, tpu = grads("cpu", fn, x), grads("tpu", fn, x)
    torch.testing.assert_close(tpu, cpu, equal_nan=True)


def test_errors_like_cpu():
    x = make((6,), torch.float32)
    check_raises_like_cpu(lambda t: torch.segment_reduce(t, "sum"), x)  # neither lengths nor offsets
    check_raises_like_cpu(lambda t: torch.segment_reduce(t, "avg", lengths=torch.tensor([6], device=t.device)), x)
    check_raises_like_cpu(lambda t: torch.segment_reduce(t.long(), "sum", lengths=torch.tensor([6], device=t.device)), x)
    bad = make((2, 6), torch.float32)
    check_raises_like_cpu(lambda t: torch.segment_reduce(t, "sum", lengths=torch.tensor([6], device=t.device), axis=1),
                          bad)
    with pytest.raises(RuntimeError, match="sum to data.size"):  # !unsafe: checked at the next synchronization
        torch.segment_reduce(x.to("tpu"), "sum", lengths=torch.tensor([2, 3], device="tpu")).cpu()
