"""index_copy / index_copy_: StaticCache's write of each new key and value."""
import pytest
import torch

from harness import check, check_raises_like_cpu, make


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_copy(dtype, dim):
    self = make((4, 5, 6), dtype, seed=1)
    n = 3
    shape = list(self.shape)
    shape[dim] = n
    source = make(shape, dtype, seed=2, noncontiguous=True)
    index = torch.tensor([3, 0, 2])
    check(lambda s, i, src: s.index_copy(dim, i, src), self, index, source)
    check(lambda s, i, src: s.clone().index_copy_(dim, i, src), self, index, source)


def test_index_copy_into_a_cache_view_at_a_device_position():
    # StaticCache: keys[b, h, pos] = new, pos a device tensor (a new position
    # does not recompile).
    cache = torch.zeros(2, 3, 8, 4)
    for pos in range(3):
        new = make((2, 3, 1, 4), torch.float32, seed=pos)
        check(lambda c, p, k: c.index_copy_(2, p, k), cache, torch.tensor([pos]), new)


def test_index_copy_edge_cases():
    check(lambda s, i, src: s.index_copy(0, i, src), torch.tensor(1.0), torch.tensor([0]), torch.tensor(5.0))
    check(lambda s, i, src: s.index_copy(1, i, src), make((3, 4), torch.float32), torch.tensor([], dtype=torch.int64),
          torch.empty(3, 0))
    check(lambda s, i, src: s.index_copy(1, i, src), make((3, 4), torch.float32).t(), torch.tensor([1]),
          make((4, 1), torch.float32))


def test_index_copy_errors_like_cpu():
    check_raises_like_cpu(lambda s, i, src: s.index_copy_(0, i, src), torch.zeros(3, 4), torch.tensor([5]),
                          torch.ones(1, 4))
    check_raises_like_cpu(lambda s, i, src: s.index_copy_(0, i, src), torch.zeros(3, 4), torch.tensor([1.0]),
                          torch.ones(1, 4))
    # A count mismatch: PyTorch's meta kernel (which decides shapes here)
    # raises RuntimeError where the CPU kernel raises IndexError.
    with pytest.raises(RuntimeError, match="Number of indices"):
        torch.zeros(3, 4, device="tpu").index_copy_(0, torch.tensor([1], device="tpu"), torch.ones(2, 4, device="tpu"))
