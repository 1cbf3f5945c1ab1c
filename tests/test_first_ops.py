"""The first lowered ops (add, mul, neg, arange) against the CPU."""
import pytest
import torch
from torch.testing import assert_close

import torch_tpu
from helpers import make_cpu

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.uint8,
          torch.int8, torch.bool]


def check(fn, *cpu_args):
    expect = fn(*cpu_args)
    got = fn(*[a.to("tpu") if isinstance(a, torch.Tensor) else a for a in cpu_args])
    assert got.device.type == "tpu"
    assert got.dtype == expect.dtype and got.shape == expect.shape
    assert_close(got.cpu(), expect, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3)], ids=str)
def test_binary_ops_same_shape(dtype, shape):
    a, b = make_cpu(shape, dtype, 1), make_cpu(shape, dtype, 2)
    check(torch.add, a, b)
    check(torch.mul, a, b)
    if dtype != torch.bool:
        check(lambda x, y: torch.add(x, y, alpha=2), a, b)
        check(torch.neg, a)


@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((), (3, 2)), ((2, 1, 3), (4, 1))])
def test_broadcasting(sa, sb):
    a, b = make_cpu(sa, torch.float32, 1), make_cpu(sb, torch.float32, 2)
    check(torch.add, a, b)
    check(torch.mul, a, b)


@pytest.mark.parametrize("da,db", [(torch.int64, torch.float32), (torch.bool, torch.int32),
                                   (torch.bfloat16, torch.float32), (torch.uint8, torch.int8),
                                   (torch.float16, torch.bfloat16)])
def test_type_promotion(da, db):
    a, b = make_cpu((3, 4), da, 1), make_cpu((3, 4), db, 2)
    check(torch.add, a, b)
    check(torch.mul, a, b)


def test_python_scalars_and_cpu_scalar_tensors():
    a = make_cpu((3, 4), torch.float32)
    check(lambda x: x * 2.5, a)
    check(lambda x: x + 3, a)
    check(lambda x: x + torch.tensor(1.5), a)
    check(lambda x: x * torch.tensor(2, dtype=torch.int64), make_cpu((3,), torch.int32))
    check(lambda x: x + 1.5, make_cpu((3,), torch.int64))  # int tensor + float scalar -> float
    check(lambda x: torch.add(x, x, alpha=0.5), a)


def test_non_contiguous_and_view_inputs():
    a = make_cpu((6, 8), torch.float32, 1)
    b = make_cpu((8, 6), torch.float32, 2)
    check(lambda x, y: x.t() + y, a, b)
    check(lambda x, y: x[:, ::2] * y.t()[:, 1::2], a, b)
    check(lambda x: -x[2:5, 1:], a)
    check(lambda x: x[1].unsqueeze(0).expand(4, -1) + x[:4], a)
    check(lambda x: x.t() + x.t(), a)


def test_output_strides_follow_inputs_like_cpu():
    a = make_cpu((6, 8), torch.float32)
    expect = a.t() + a.t()
    got = a.to("tpu").t() + a.to("tpu").t()
    assert got.stride() == expect.stride()
    assert_close(got.cpu(), expect)


@pytest.mark.parametrize("args,kwargs", [((6.0,), {}), ((10,), {}), ((2, 11, 3), {}), ((0.5, 3.0, 0.25), {}),
                                         ((-3, 4), {"dtype": torch.float32}), ((5,), {"dtype": torch.bfloat16}),
                                         ((0,), {}), ((1.0, 0.0, -0.1), {})])
def test_arange(args, kwargs):
    expect = torch.arange(*args, **kwargs)
    got = torch.arange(*args, **kwargs, device="tpu")
    assert got.dtype == expect.dtype
    assert_close(got.cpu(), expect)


def test_scalar_values_do_not_recompile():
    x = torch.ones(16, device="tpu")
    _ = (x * 0.5).cpu()
    before = torch_tpu.metrics()["compiles"]
    for i in range(20):
        y = x * (1.0 + i / 10)
        assert_close(y.cpu(), torch.full((16,), 1.0 + i / 10))
    assert torch_tpu.metrics()["compiles"] == before
    _ = torch.arange(0, 8, device="tpu").cpu()
    before = torch_tpu.metrics()["compiles"]
    for start in range(5):
        assert torch.equal(torch.arange(start, start + 8, device="tpu").cpu(), torch.arange(start, start + 8))
    assert torch_tpu.metrics()["compiles"] == before


def test_metrics_count_compiles_and_hits():
    torch_tpu.reset_metrics()
    x = torch.randn(7, 3).to("tpu")
    _ = (x + x).cpu()
    _ = (x + x).cpu()
    m = torch_tpu.metrics()
    assert m["compiles_by_op"].get("add.Tensor") == 1
    assert m["cache_hits"] >= 1
    assert m["fallbacks"] == 0


def test_mismatched_shapes_raise_like_cpu():
    a, b = torch.ones(3, 4), torch.ones(5)
    with pytest.raises(RuntimeError) as cpu_err:
        a + b
    with pytest.raises(RuntimeError) as tpu_err:
        a.to("tpu") + b.to("tpu")
    assert type(tpu_err.value) is type(cpu_err.value)
    assert "5" in str(tpu_err.value) and "4" in str(tpu_err.value)
    # The process stays usable.
    assert torch.equal((a.to("tpu") + 1).cpu(), a + 1)
