"""F.pad modes reflect, replicate and circular (forward and backward) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_grads, check_raises_like_cpu, make
from tiers import pairwise


CASES = [
    ((2, 3, 6), (2, 3)),
    ((3, 6), (1, 0)),  # unbatched
    ((2, 3, 5, 6), (1, 2, 3, 0)),
    ((3, 5, 6), (2, 2, 1, 1)),
    ((1, 2, 4, 5, 6), (1, 2, 0, 3, 2, 1)),
    ((2, 3, 6), (-1, 2)),  # negative: crop
]


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.bfloat16, torch.float64],
                                  "mode", ["reflect", "replicate", "circular"], "case", range(len(CASES))))
def test_pad(dtype, mode, case):
    shape, pad = CASES[case]
    fn = lambda t: F.pad(t, pad, mode=mode)  # noqa: E731
    x = make(shape, dtype)
    check(fn, x)
    check_grads(fn, x)


def test_pad_layouts_and_ints():
    x = make((2, 3, 5, 6), torch.float32)
    check(lambda t: F.pad(t, (2, 1, 1, 2), mode="reflect"), x.contiguous(memory_format=torch.channels_last))
    check(lambda t: F.pad(t, (2, 1, 1, 2), mode="replicate"), make((2, 3, 5, 6), torch.float32, noncontiguous=True))
    check_grads(lambda t: F.pad(t, (2, 1, 1, 2), mode="reflect"), x.transpose(2, 3))
    check(lambda t: F.pad(t, (3, 1), mode="replicate"), make((2, 5), torch.int64))
    check(lambda t: F.pad(t, (3, 1), mode="reflect"), make((1, 2, 5), torch.int32))
    check(lambda t: torch.nn.ReflectionPad2d(2)(t), x)
    check(lambda t: torch.nn.ReplicationPad3d(1)(t), make((1, 2, 2, 3, 4), torch.float32))


def test_pad_bad_input():
    # Reflection needs pad < input size.
    check_raises_like_cpu(lambda t: F.pad(t, (5, 5), mode="reflect"), make((1, 2, 4), torch.float32))
    check_raises_like_cpu(lambda t: F.pad(t, (1, 1), mode="replicate"), make((2, 0, 4), torch.float32))
