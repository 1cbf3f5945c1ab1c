"""cat/stack, flip, roll, repeat, tril/triu, constant_pad_nd against the CPU."""
import pytest
import torch
import torch.nn.functional as F

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu
from tiers import pairwise

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cat_dtypes(dtype):
    a, b = make((2, 3), dtype, 1), make((4, 3), dtype, 2)
    check(lambda x, y: torch.cat([x, y]), a, b)
    check(lambda x, y: torch.cat([x, y.t()[:, :2].t()], dim=0), a, b)
    check(lambda x, y: torch.stack([x, x, x], dim=1), a, b)


@pytest.mark.parametrize("shapes,dim", [
    ([(2, 3), (2, 5)], 1), ([(2, 3), (2, 5)], -1), ([(1, 2, 3), (4, 2, 3), (2, 2, 3)], 0),
    ([(5,)], 0), ([(0,), (3,)], 0), ([(2, 0, 3), (2, 4, 3)], 1), ([(2, 0, 3), (2, 0, 3)], 0),
    ([(0,), (2, 3)], 1),  # legacy: a 1-D empty tensor is skipped whatever the rank
    ([(0,), (0,)], 0),
])
def test_cat_shapes(shapes, dim):
    ts = [make(s, torch.float32, i) for i, s in enumerate(shapes)]
    check(lambda *xs: torch.cat(list(xs), dim), *ts)


def test_cat_promotion_and_noncontiguous():
    a = make((3, 4), torch.int32, 1)
    b = make((3, 4), torch.float32, 2, noncontiguous=True)
    c = make((3, 4), torch.bool, 3)
    check(lambda *xs: torch.cat(xs), a, b, c)
    check(lambda *xs: torch.cat(xs, 1), a, c)
    check(lambda x, y: torch.cat([x, y]), make((2,), torch.bfloat16), make((3,), torch.float16))


def test_cat_out_and_errors():
    a, b = make((2, 3), torch.float32, 1), make((2, 3), torch.float32, 2)
    check(lambda x, y, o: torch.cat([x, y], out=o), a, b, torch.empty(4, 3))
    check(lambda x, y: torch.stack([x, y], -1), a, b)
    check_raises_like_cpu(lambda x, y: torch.cat([x, y], 1), a, make((3, 3), torch.float32))
    check_raises_like_cpu(lambda x: torch.cat([x, x], 2), a)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape,dims", [((), []), ((5,), [0]), ((3, 4), [0, 1]), ((2, 3, 4), [-1]),
                                        ((2, 3, 4), [0, 2]), ((2, 0, 3), [1])], ids=str)
def test_flip(dtype, shape, dims):
    x = make(shape, dtype)
    check(lambda t: torch.flip(t, dims), x)
    if len(shape) == 2:
        check(lambda t: torch.flip(t.t(), dims), x)
        check(torch.fliplr, x)
        check(torch.flipud, x)


def test_flip_errors():
    check_raises_like_cpu(lambda t: torch.flip(t, [2]), make((2, 3), torch.float32))
    check_raises_like_cpu(lambda t: torch.flip(t, [0, 0]), make((2, 3), torch.float32))


@pytest.mark.parametrize("shape,shifts,dims", [
    ((5,), 2, None), ((5,), -7, None), ((3, 4), 1, None), ((3, 4), (1, -2), (0, 1)), ((3, 4), 5, 1),
    ((2, 3, 4), (1, 1), (-1, 0)), ((2, 0, 3), 1, 1), ((2, 3), 0, 0), ((0,), 3, None),
])
def test_roll(shape, shifts, dims):
    for dtype in (torch.float32, torch.int64, torch.bool):
        x = make(shape, dtype)
        check(lambda t: torch.roll(t, shifts, dims), x)
    check(lambda t: torch.roll(t, shifts, dims), make(shape, torch.float32, noncontiguous=True))


@pytest.mark.parametrize("shape,reps", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (1, 2, 2)), ((), (3,)),
                                        ((), ()), ((2, 3), (0, 1)), ((2, 0), (2, 2)), ((1, 2), (3, 1, 2))],
                         ids=str)
def test_repeat(shape, reps):
    for dtype in (torch.float32, torch.bfloat16, torch.int32, torch.bool):
        check(lambda t: t.repeat(*reps) if reps else t.repeat(()), make(shape, dtype))
    if shape:
        check(lambda t: t.repeat(*reps), make(shape, torch.float32, noncontiguous=True))


def test_repeat_errors():
    check_raises_like_cpu(lambda t: t.repeat(2), make((2, 3), torch.float32))


@pytest.mark.parametrize(*pairwise("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool],
                                  "shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4), (0, 3), (2, 0, 2)],
                                  "diagonal", [0, 1, -2, 7]))
def test_tril_triu(dtype, shape, diagonal):
    x = make(shape, dtype)
    check(lambda t: torch.tril(t, diagonal), x)
    check(lambda t: torch.triu(t, diagonal), x)


def test_tril_triu_variants():
    x = make((4, 5), torch.float32)
    check(lambda t: torch.tril(t.t()), x)
    check_inplace(lambda t: t.tril_(1), x)
    check_inplace(lambda t: t.triu_(-1), x)
    check(lambda t, o: torch.triu(t, out=o), x, torch.empty(4, 5))
    check_raises_like_cpu(torch.tril, make((3,), torch.float32))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("shape,pad", [((3,), (1, 2)), ((2, 3), (1, 0, 0, 2)), ((2, 3, 4), (0, 0, 1, 1)),
                                       ((2, 3, 4), (-1, 2, 1, -1)), ((3, 4), (-2, -2)), ((0, 3), (1, 1, 2, 0)),
                                       ((2, 3), ())], ids=str)
def test_constant_pad(dtype, shape, pad):
    x = make(shape, dtype)
    value = True if dtype == torch.bool else 3
    check(lambda t: F.pad(t, pad), x)
    check(lambda t: F.pad(t, pad, value=value), x)
    check(lambda t: torch.constant_pad_nd(t, pad, value), x)


def test_constant_pad_float_value_and_errors():
    check(lambda t: F.pad(t, (1, 1), value=-2.5), make((2, 3), torch.float32, noncontiguous=True))
    check(lambda t: F.pad(t, (1, 1), value=float("nan")), make((2, 3), torch.bfloat16))
    check_raises_like_cpu(lambda t: F.pad(t, (1, 1, 1)), make((2, 3), torch.float32))
    check(lambda t: F.pad(t, (-3, 0)), make((2, 3), torch.float32))  # crops to empty
    check_raises_like_cpu(lambda t: F.pad(t, (-4, 0)), make((2, 3), torch.float32))
    check_raises_like_cpu(lambda t: F.pad(t, (1,) * 6), make((2, 3), torch.float32))


def test_zeros_ones_like():
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.bool):
        x = make((2, 3), dtype)
        check(torch.zeros_like, x)
        check(torch.ones_like, x)
        check(lambda t: torch.full_like(t, 1), x)


def test_backward_cat_stack_flip_roll_pad():
    a = make((2, 3), torch.float32, 1)
    b = make((4, 3), torch.float32, 2)
    g = make((6, 6), torch.float32, 3)

    def run(x, y, gout):
        x = x.clone().requires_grad_()
        y = y.clone().requires_grad_()
        z = torch.cat([x, y])                       # (6, 3)
        z = torch.roll(torch.flip(z, [0]), 2, 1)
        z = F.pad(z, (1, 2))                        # (6, 6)
        z = torch.tril(z) + torch.triu(z, 1) * 2
        (z * gout).sum().backward()
        return x.grad, y.grad

    check(run, a, b, g)
    check(lambda x: torch.stack([x, x * 2]).sum(), a)
    x = to_tpu(a).requires_grad_()
    x.repeat(2, 3).sum().backward()
    torch.testing.assert_close(x.grad.cpu(), torch.full((2, 3), 6.0))
