"""channel_shuffle (nn.ChannelShuffle) against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_raises_like_cpu, make, to_tpu


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((1, 4, 2, 3), 2), ((2, 6, 1, 2, 2), 3), ((0, 4, 2), 2)],
                         ids=str)
def test_channel_shuffle(dtype, shape, groups):
    check(lambda t: F.channel_shuffle(t, groups), make(shape, dtype))
    check(lambda t: F.channel_shuffle(t, groups), make(shape, dtype, noncontiguous=True))


def test_channel_shuffle_grad_and_bad_input():
    x = make((2, 6, 3), torch.float32)

    def run(t):
        t = t.detach().requires_grad_()
        F.channel_shuffle(t, 2).backward(make((2, 6, 3), torch.float32, seed=1).to(t.device))
        return t.grad

    torch.testing.assert_close(run(to_tpu(x)).cpu(), run(x))
    check_raises_like_cpu(lambda t: F.channel_shuffle(t, 4), x)
