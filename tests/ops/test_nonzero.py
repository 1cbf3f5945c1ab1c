"""nonzero and boolean-mask reads: value-dependent shapes (count read to the host first)."""
import pytest
import torch

from harness import ALL_DTYPES, check, check_raises_like_cpu, make


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 4), (2, 3, 4)], ids=str)
def test_nonzero(dtype, shape):
    x = make(shape, dtype, seed=3)
    if x.numel():
        x.view(-1)[::2] = 0
    check(torch.nonzero, x)
    check(lambda t: torch.nonzero(t, as_tuple=True), x)


def test_nonzero_of_a_view_and_all_zero():
    x = make((6, 5), torch.float32, noncontiguous=True)
    check(lambda t: torch.nonzero(t.t() > 0), x)
    check(torch.nonzero, torch.zeros(4, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16], ids=str)
def test_boolean_mask_reads(dtype):
    x = make((4, 5, 3), dtype, seed=1)
    m = make((4, 5), torch.bool, seed=2)
    check(lambda t, k: t[k], x, m)
    check(lambda t, k: t[:, k[0]], x, m)
    check(lambda t, k: t[k, 1:], x, m)
    check(lambda t, k: t[k.unsqueeze(-1).expand(4, 5, 3)], x, m)
    check(lambda t: t[t > 0], make((10,), dtype))


def test_prod_backward_with_zeros_uses_nonzero():
    for vals in ([0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 2.0]):
        a = torch.tensor(vals, requires_grad=True)
        b = torch.tensor(vals).to("tpu").requires_grad_()
        a.prod().backward()
        b.prod().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((), ()), ((0, 2), (2,))],
                         ids=str)
def test_masked_select(dtype, shapes):
    x = make(shapes[0], dtype, seed=4, noncontiguous=True)
    m = make(shapes[1], torch.bool, seed=5)
    check(torch.masked_select, x, m)


def test_masked_select_rejects_a_non_bool_mask():
    check_raises_like_cpu(torch.masked_select, torch.ones(3), torch.ones(3, dtype=torch.int64))


def test_printing_a_tensor_runs_natively():
    assert "device='tpu:0'" in repr(torch.randn(3, 4).to("tpu"))
