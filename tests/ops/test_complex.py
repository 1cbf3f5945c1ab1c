"""Complex tensors on tpu: copies and casts, real/imag views (read and written
through), conjugate and negative views, complex/polar, elementwise math."""
import warnings

import pytest
import torch

from harness import check, make


def cmake(shape, seed=0, dtype=torch.complex64, noncontiguous=False):
    part = torch.float32 if dtype == torch.complex64 else torch.float64
    return torch.complex(make(shape, part, seed=seed, noncontiguous=noncontiguous),
                         make(shape, part, seed=seed + 100, noncontiguous=noncontiguous))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4)], ids=str)
def test_round_trip_and_arithmetic(dtype, shape):
    x, y = cmake(shape, 1, dtype), cmake(shape, 2, dtype)
    check(lambda a: a.clone(), x)
    check(lambda a, b: a * b + a - b / (b.abs() + 1), x, y)
    check(lambda a, b: (a == b, a != a), x, y)


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_casts_to_and_from_complex(src):
    x = make((3, 4), src, seed=3)
    check(lambda a: a.cfloat(), x)
    check(lambda a: a.to(torch.complex128), x)
    z = cmake((3, 4), 4)
    with warnings.catch_warnings():  # "discards the imaginary part" (warned once per process)
        warnings.simplefilter("ignore")
        check(lambda a: a.to(src), z)


def test_real_imag_views_read_and_write():
    z = cmake((3, 4), 5, noncontiguous=True)
    check(lambda a: (a.real, a.imag, torch.view_as_real(a)), z)
    check(lambda a: torch.view_as_complex(torch.view_as_real(a).contiguous() * 2), z)

    def write(a):
        a = a.clone()
        a.real.mul_(3)
        a.imag[1:] = -1
        torch.view_as_real(a)[0, :, 0] += 10
        return a
    check(write, cmake((3, 4), 6))


def test_conjugate_and_negative_views():
    z = cmake((4,), 7)
    check(lambda a: a.conj(), z)
    check(lambda a: a.conj().resolve_conj(), z)
    check(lambda a: a.conj() * 2, z)
    check(lambda a: -a.conj(), z)
    check(lambda a: torch.conj_physical(a), z)
    check(lambda a: a.conj().imag, z)

    def write_into_conj(a):
        a = a.clone()
        a.conj().copy_(torch.ones(4, dtype=torch.complex64, device=a.device) * (1 + 2j))
        return a
    check(write_into_conj, z)


def test_complex_and_polar():
    a, b = make((2, 3), torch.float32, seed=8), make((3,), torch.float32, seed=9)
    check(torch.complex, a, b)  # broadcast
    check(torch.polar, a.abs(), b)
    check(torch.complex, a.double(), a.double())
    with pytest.raises(RuntimeError):
        torch.complex(a.to("tpu"), a.double().to("tpu"))  # mixed part dtypes: the CPU refuses too
