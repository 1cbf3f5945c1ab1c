"""igamma / igammac (torch.special.gammainc / gammaincc) against the CPU: every
branch of the CPU kernel (boundary values, power series, the series and the
continued fraction for Q, the asymptotic expansion for large a), the float
dtypes (half types computed in float32), promotion of ints, broadcasting,
empty/0-d/non-contiguous inputs, out= and in-place forms, the gradient in x,
and the errors."""
import math

import pytest
import torch

from harness import check, check_grads, check_inplace, check_raises_like_cpu, make, to_tpu

NAN, INF = math.nan, math.inf
FUNCS = [torch.igamma, torch.igammac]
IDS = ["igamma", "igammac"]
FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]

# Values at the branch thresholds of the CPU kernel (0.5, 1, 1.1, 20, 200) and
# around them, boundary values (0, -0, negatives, infinities, NaN), and large ones.
GRID = [0.0, -0.0, 1e-30, 1e-6, 0.01, 0.1, 0.3, 0.5, 0.7, 1.0, 1.05, 1.1, 1.5, 2.0, 5.0, 10.0, 19.0, 20.0,
        21.0, 25.0, 30.0, 50.0, 100.0, 150.0, 199.0, 200.0, 201.0, 250.0, 500.0, 1000.0, 1e4, 1e6, 1e10,
        INF, -1.0, -INF, NAN]


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_grid(fn, dtype):
    v = torch.tensor(GRID, dtype=torch.float64).to(dtype)
    check(fn, v[:, None], v[None, :])


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("scale", [1.0, 30.0, 300.0, 3000.0])
def test_random(fn, dtype, scale):
    # x around a (the asymptotic regime) and spread over [0, 3 a] (series / continued fraction).
    a = make((400,), torch.float64, seed=1, low=0, high=scale)
    x = a * make((400,), torch.float64, seed=2, low=0, high=2)
    x[::3] = make((134,), torch.float64, seed=3, low=0, high=3 * scale)
    check(fn, a.to(dtype), x.to(dtype))


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
def test_subnormal_power(fn):
    # (x / (a + g - 1/2))^a is subnormal in float here, exp(a - x) brings it back.
    a = torch.tensor([196.4967498779297, 190.9984130859375, 150.0, 120.0])
    x = torch.tensor([129.4998779296875, 123.44927215576172, 92.0, 73.0])
    check(fn, a, x)


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (0, 4), (2, 0), ()], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_shapes(fn, shape, dtype):
    check(fn, make(shape, dtype, low=0, high=8), make(shape, dtype, seed=1, low=0, high=8))


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
def test_broadcast_noncontiguous(fn):
    a = make((4, 6), torch.float32, low=0, high=6, noncontiguous=True)
    x = make((6,), torch.float32, seed=1, low=0, high=6)
    check(fn, a, x)
    check(fn, x[:, None], make((3, 6), torch.float32, seed=2, low=0, high=6).t())
    check(fn, a, torch.tensor(2.5))  # 0-d operand
    check(fn, torch.tensor(3.0), a)


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
@pytest.mark.parametrize("da,dx", [(torch.int32, torch.float32), (torch.bfloat16, torch.float32),
                                   (torch.float16, torch.bfloat16), (torch.float32, torch.float64),
                                   (torch.int8, torch.float16), (torch.bool, torch.bfloat16)], ids=str)
def test_promotion(fn, da, dx):
    check(fn, make((3, 4), da, low=0, high=9), make((3, 4), dx, seed=1, low=0, high=9))


def test_aliases_out_inplace():
    a = make((3, 4), torch.float32, low=0, high=5)
    x = make((3, 4), torch.float32, seed=1, low=0, high=5)
    check(torch.special.gammainc, a, x)
    check(torch.special.gammaincc, a, x)
    check(lambda a, x: torch.igamma(a, x, out=torch.empty(3, 4, dtype=a.dtype, device=a.device)), a, x)
    check(lambda a, x: torch.special.gammaincc(a, x, out=torch.empty(0, dtype=torch.float64, device=a.device)), a, x)
    check_inplace(lambda t, x: t.igamma_(x), a, x)
    check_inplace(lambda t, x: t.igammac_(x), a, x[0])


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_grad_x(fn, dtype):
    # The derivative in x (PyTorch's formula); the one in a is not implemented.
    a = make((3, 5), dtype, low=0.2, high=6)
    check_grads(lambda x: fn(to_tpu(a) if x.device.type == "tpu" else a, x), make((3, 5), dtype, seed=1, low=0.1, high=8))


@pytest.mark.parametrize("fn", FUNCS, ids=IDS)
def test_errors(fn):
    a = make((3, 4), torch.float32, low=0, high=5)
    check_raises_like_cpu(fn, a, make((5,), torch.float32, low=0, high=5))  # shapes don't broadcast
    check_raises_like_cpu(lambda a, x: fn(a, x, out=torch.empty(3, 4, dtype=torch.int64, device=a.device)), a, a)
    check_raises_like_cpu(lambda a, x: a[0].igamma_(x), a, a)  # in-place can't broadcast self
    # Integer and bool results: the CPU kernel has float types only (NotImplementedError).
    check_raises_like_cpu(fn, make((3,), torch.int64, high=9), make((3,), torch.int64, seed=1, high=9))
    check_raises_like_cpu(fn, make((3,), torch.bool), make((3,), torch.uint8, high=9))
    ints = make((3,), torch.int64, high=9)
    name = fn.__name__
    check_raises_like_cpu(lambda t, x: getattr(t, name + "_")(x), ints, ints)
    check_raises_like_cpu(lambda t, x: fn(t, x, out=torch.empty(3, device=t.device)), ints, ints)
    check_raises_like_cpu(lambda t, x: fn(t, x, out=torch.empty(3, dtype=torch.int64, device=t.device)), ints, ints)
    a_tpu = to_tpu(a).requires_grad_()
    with pytest.raises(NotImplementedError, match="igamma"):
        fn(a_tpu, to_tpu(a)).sum().backward()
