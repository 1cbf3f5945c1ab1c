"""slice_scatter (compiled backward graphs of slicing emit it)."""
import pytest
import torch

from harness import check, make


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("args", [(1, 1, 7, 2), (0, 2, None, 1), (1, -3, -1, 1), (1, None, None, 3), (0, 0, 0, 1)],
                         ids=str)
def test_slice_scatter(dtype, args):
    dim, start, end, step = args
    x = make((4, 7), dtype, seed=1)  # (a gapped input: the executor rejects its gapped output layout)
    src_shape = list(x[(slice(None),) * dim + (slice(start, end, step),)].shape)
    src = make(src_shape, dtype, seed=2)
    check(lambda s, t: torch.slice_scatter(s, t, dim, start, end, step), x, src)
