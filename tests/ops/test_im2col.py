"""F.unfold / F.fold (im2col, col2im; forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_grads, check_raises_like_cpu, make
from tiers import pairwise


# kernel, dilation, padding, stride
GEOMETRIES = [((2, 3), 1, 0, 1), ((3, 3), (2, 1), (1, 2), (2, 1)), (1, 1, 0, 1), ((2, 2), 1, 1, 2), ((4, 2), 1, (0, 1), 3)]


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.bfloat16, torch.float64], "geo", range(len(GEOMETRIES)),
                                  "batched", [True, False]))
def test_unfold_fold(dtype, geo, batched):
    k, d, p, s = GEOMETRIES[geo]
    shape = (2, 3, 7, 8) if batched else (3, 7, 8)
    unfold = lambda t: F.unfold(t, k, dilation=d, padding=p, stride=s)  # noqa: E731
    x = make(shape, dtype)
    cols = check(unfold, x).cpu()
    check_grads(unfold, x)
    fold = lambda t: F.fold(t, (7, 8), k, dilation=d, padding=p, stride=s)  # noqa: E731
    y = make(cols.shape, dtype, seed=2)
    check(fold, y)
    check_grads(fold, y)


def test_unfold_layouts():
    x = make((2, 3, 6, 5), torch.float32)
    check(lambda t: F.unfold(t, 2, padding=1), x.contiguous(memory_format=torch.channels_last))
    check(lambda t: F.unfold(t, 2, stride=2), make((2, 3, 6, 5), torch.float32, noncontiguous=True))
    check_grads(lambda t: F.unfold(t, (2, 3)), x.transpose(2, 3))
    check(lambda t: F.unfold(t, 2), make((0, 3, 4, 4), torch.float32))
    check(lambda t: torch.nn.Fold((4, 5), 2)(t), make((1, 3 * 4, 12), torch.float32))


def test_unfold_bad_input():
    check_raises_like_cpu(lambda t: F.unfold(t, 9), make((1, 2, 4, 4), torch.float32))
    check_raises_like_cpu(lambda t: F.fold(t, (4, 4), 2), make((1, 7, 9), torch.float32))
