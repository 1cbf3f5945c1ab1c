"""Device-computed factories (arange, linspace, eye) and *_like / one_hot against the CPU."""
import re
import warnings

import pytest
import torch
import torch.nn.functional as F

from harness import check, make


def same(fn):
    """fn(device) on tpu vs on the CPU."""
    expect = fn("cpu")
    got = fn("tpu")
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), expect)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int64,
                                   torch.int32, torch.uint8], ids=str)
@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-3, 7, 11), (2, 2, 4), (10, 0, 7), (0, 100, 64), (1, 5, 1),
                                             (0, 1, 0), (-1.5, 2.5, 9)], ids=str)
def test_linspace(dtype, start, end, steps):
    if not dtype.is_floating_point and dtype.is_signed is False and min(start, end) < 0:
        start, end = abs(start), abs(end)
    same(lambda d: torch.linspace(start, end, steps, dtype=dtype, device=d))


def test_linspace_out_and_default_dtype():
    same(lambda d: torch.linspace(0.5, 9.5, 1000, device=d))
    same(lambda d: torch.linspace(0, 1, 7, out=torch.empty(0, device=d)))
    check(lambda o: torch.linspace(-2, 2, 5, out=o), torch.empty(5, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("n,m", [(3, None), (1, None), (0, None), (2, 5), (5, 2), (3, 0)], ids=str)
def test_eye(dtype, n, m):
    if m is None:
        same(lambda d: torch.eye(n, dtype=dtype, device=d))
    else:
        same(lambda d: torch.eye(n, m, dtype=dtype, device=d))
    same(lambda d: torch.eye(n, m if m is not None else n, out=torch.empty(0, dtype=dtype, device=d)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32], ids=str)
def test_arange(dtype):
    same(lambda d: torch.arange(10, dtype=dtype, device=d))
    same(lambda d: torch.arange(-3, 17, 4, dtype=dtype, device=d))
    same(lambda d: torch.arange(5, -5, -3, dtype=dtype, device=d))


@pytest.mark.parametrize("args,dtype", [((0.5, 3.2, 0.7), torch.int32), ((-3, 4, 2), torch.float16),
                                        ((1.0, 0.0, -0.1), torch.bfloat16), ((2**60, 2**60 + 5), None),
                                        ((0, 1, 0.1), None), ((7, 7), torch.int64), ((0.25, 1e4, 0.5), None)], ids=str)
def test_arange_lengths_like_cpu(args, dtype):
    # The length is the CPU's (its helper, not PyTorch's Python meta kernel),
    # an int32 result of a fractional step counts its truncated step (zeros) as the CPU does.
    same(lambda d: torch.arange(*args, dtype=dtype, device=d))


@pytest.mark.parametrize("args,dtype", [((0, 5, 0), None), ((0, float("inf")), None), ((5, 0), None),
                                        ((5,), torch.bool), ((5,), torch.complex64), ((1e30,), torch.float32),
                                        ((0, 1, 1e-300), None), ((0, 1, 0.5), torch.int64)], ids=str)
def test_arange_refuses_what_the_cpu_refuses(args, dtype):
    with pytest.raises(Exception) as cpu:
        torch.arange(*args, dtype=dtype)
    with pytest.raises(type(cpu.value), match=re.escape(str(cpu.value).split("\n")[0])):
        torch.arange(*args, dtype=dtype, device="tpu")


def test_arange_out_resizes_like_cpu():
    for device in ("cpu", "tpu"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            column = torch.arange(5, out=torch.empty(5, 1, device=device))  # as many elements: keeps its shape
            short = torch.arange(5, out=torch.empty(3, device=device))  # resized, with the CPU's warning
        assert column.shape == (5, 1) and short.shape == (5,)
        assert torch.equal(short.cpu(), torch.arange(5.0)) and torch.equal(column.cpu().flatten(), torch.arange(5.0))
        assert [str(w.message).split(" (Triggered")[0] for w in caught] == [
            "The number of elements in the out tensor of shape [3] is 3 which does not match the computed number "
            "of elements 5. Note that this may occur as a result of rounding error. The out tensor will be resized "
            "to a tensor of shape (5,)."], device


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_zeros_ones_full_like(dtype):
    for shape in [(), (0,), (2, 3)]:
        x = make(shape, dtype)
        check(torch.zeros_like, x)
        check(torch.ones_like, x)
        check(lambda t: torch.full_like(t, 1), x)
        check(lambda t: torch.zeros_like(t, dtype=torch.float32), x)


def test_one_hot():
    i = torch.tensor([[0, 3, 1], [2, 2, 4]])
    check(lambda t: F.one_hot(t, 5), i)
    check(lambda t: F.one_hot(t, 6), torch.tensor([], dtype=torch.int64))


@pytest.mark.parametrize("fn", [torch.tril_indices, torch.triu_indices], ids=["tril", "triu"])
@pytest.mark.parametrize("args", [(3, 4, 1), (4, 3, 0), (5, 5, -2), (3, 3, -5), (0, 3, 0), (6, 2, 7), (1, 1, 0),
                                  (40, 30, 3)], ids=str)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32], ids=str)
def test_tri_indices(fn, args, dtype):
    got = fn(*args, dtype=dtype, device="tpu")
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), fn(*args, dtype=dtype), rtol=0, atol=0)


@pytest.mark.parametrize("fn", [torch.tril_indices, torch.triu_indices], ids=["tril", "triu"])
def test_tri_indices_errors_like_cpu(fn):
    for kwargs in [dict(row=-1, col=3), dict(row=3, col=-3), dict(row=3, col=3, dtype=torch.float32),
                   dict(row=3, col=3, dtype=torch.int16)]:
        with pytest.raises(Exception) as cpu:
            fn(**kwargs)
        with pytest.raises(type(cpu.value)):
            fn(**kwargs, device="tpu")
