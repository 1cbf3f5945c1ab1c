"""cdist (_cdist_forward / _cdist_backward): every p form (0, 1, 2, inf,
fractional, > 2), the matmul form for p = 2 (more than 25 rows, or
compute_mode), batch broadcasting, zero distances, empty inputs, views; values
and both gradients against the CPU."""
import math

import pytest
import torch
from harness import make

P_VALUES = [0.0, 1.0, 2.0, 0.5, 1.5, 3.0, math.inf]
SHAPES = [((5, 3), (4, 3)), ((2, 5, 3), (1, 4, 3)), ((30, 3), (4, 3)), ((0, 3), (4, 3)), ((5, 0), (4, 0)),
          ((7,) * 0 + (1, 3), (6, 3))]


def run(x1, x2, p, device, mode="use_mm_for_euclid_dist_if_necessary"):
    a = x1.detach().to(device).requires_grad_()
    b = x2.detach().to(device).requires_grad_()
    d = torch.cdist(a, b, p, compute_mode=mode)
    weights = torch.arange(d.numel(), dtype=d.dtype).reshape(d.shape).to(device)
    (d * weights).sum().backward()
    return d.detach().cpu(), a.grad.cpu(), b.grad.cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("p", P_VALUES)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_cdist_values_and_gradients(dtype, p, shapes):
    x1, x2 = make(shapes[0], dtype, seed=1), make(shapes[1], dtype, seed=2)
    if x1.numel() and x2.numel():
        x2[..., 0, :] = x1.reshape(-1, x1.shape[-1])[0]  # a zero distance
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else {}
    for got, expect in zip(run(x1, x2, p, "tpu"), run(x1, x2, p, "cpu")):
        torch.testing.assert_close(got, expect, equal_nan=True, **tol)


@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_compute_modes_and_views(mode):
    x1, x2 = make((6, 8), torch.float64, seed=3), make((8, 5), torch.float64, seed=4).t()  # non-contiguous x2
    for got, expect in zip(run(x1, x2, 2.0, "tpu", mode), run(x1, x2, 2.0, "cpu", mode)):
        torch.testing.assert_close(got, expect)


def test_cdist_rejects_integers_like_the_cpu():
    x = torch.ones(3, 2, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="floating"):
        torch.cdist(x, x)
    with pytest.raises(RuntimeError, match="floating"):
        torch.cdist(x.to("tpu"), x.to("tpu"))
