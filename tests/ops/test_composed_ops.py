"""Ops built from other tpu ops: torch.equal, Tensor.unfold (a view) and
masked_scatter_ (count read to the host first)."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make, to_tpu


@pytest.mark.parametrize("pair", [
    (torch.tensor([1, 2]), torch.tensor([1.0, 2.0])),             # promotion
    (torch.tensor([1, 2]), torch.tensor([1, 2, 3])),              # sizes differ
    (torch.tensor([float("nan")]), torch.tensor([float("nan")])),  # NaN != NaN
    (torch.empty(0, 3), torch.empty(0, 3)),
    (torch.tensor(2.0), torch.tensor(2.0)),
    (make((3, 4), torch.bfloat16), make((3, 4), torch.bfloat16)),
    (make((3, 4), torch.float32), make((3, 4), torch.float32, seed=1)),
], ids=str)
def test_equal(pair):
    a, b = pair
    assert torch.equal(to_tpu(a), to_tpu(b)) == torch.equal(a, b)


def test_equal_of_views():
    x = make((4, 6), torch.float32, noncontiguous=True)
    assert torch.equal(to_tpu(x).t(), to_tpu(x.t().contiguous()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("args", [(0, 3, 2), (1, 2, 1), (-1, 5, 5), (0, 1, 3)], ids=str)
def test_unfold_is_a_view(dtype, args):
    x = make((7, 5), dtype, seed=1)
    check(lambda t: t.unfold(*args), x)
    t = to_tpu(x)
    u = t.unfold(*args)
    assert u._base is t  # a view: writes through it reach t
    u.zero_()
    expect = x.clone()
    expect.unfold(*args).zero_()
    assert torch.equal(t.cpu(), expect)


def test_unfold_errors_like_cpu():
    check_raises_like_cpu(lambda t: t.unfold(0, 9, 1), make((7,), torch.float32))
    check_raises_like_cpu(lambda t: t.unfold(0, 2, 0), make((7,), torch.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (1, 4)], ids=str)
def test_masked_scatter(dtype, mask_shape):
    self = make((3, 4), dtype, seed=1)
    mask = make(mask_shape, torch.bool, seed=2)
    source = make((15,), dtype, seed=3)
    check(lambda s, m, src: s.clone().masked_scatter_(m, src), self, mask, source)
    check(torch.masked_scatter, self, mask, source)


def test_masked_scatter_errors_like_cpu():
    check_raises_like_cpu(lambda s, m, src: s.masked_scatter_(m, src), torch.zeros(4), torch.ones(4, dtype=torch.bool),
                          torch.ones(2))  # source too short
    check_raises_like_cpu(lambda s, m, src: s.masked_scatter_(m, src), torch.zeros(4), torch.ones(4),
                          torch.ones(4))  # non-bool mask
