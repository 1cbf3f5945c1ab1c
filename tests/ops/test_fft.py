"""torch.fft on tpu (_fft_r2c / _fft_c2c / _fft_c2r as stablehlo.fft) against the CPU."""
import pytest
import torch

from harness import check, make, to_tpu
from tiers import pairwise

NORMS = [None, "ortho", "forward"]

ONE_DIM = {
    "fft": torch.fft.fft, "ifft": torch.fft.ifft, "rfft": torch.fft.rfft, "irfft": torch.fft.irfft,
    "hfft": torch.fft.hfft, "ihfft": torch.fft.ihfft,
}
N_DIM = {
    "fft2": torch.fft.fft2, "ifft2": torch.fft.ifft2, "rfft2": torch.fft.rfft2, "irfft2": torch.fft.irfft2,
    "fftn": torch.fft.fftn, "ifftn": torch.fft.ifftn, "rfftn": torch.fft.rfftn, "irfftn": torch.fft.irfftn,
    "hfft2": torch.fft.hfft2, "ihfft2": torch.fft.ihfft2,
}


@pytest.mark.parametrize(*pairwise("name", ONE_DIM, "dtype", [torch.float32, torch.int64, torch.bool, torch.complex64],
                                  "norm", NORMS))
def test_one_dim(name, dtype, norm):
    fn = ONE_DIM[name]
    if dtype.is_complex and name in ("rfft", "ihfft"):
        with pytest.raises(RuntimeError):  # real-input transforms: the CPU refuses complex input too
            fn(to_tpu(torch.ones(4, dtype=dtype)))
        return
    x = make((3, 10), torch.float32, seed=1) if not dtype.is_complex else torch.complex(
        make((3, 10), torch.float32, seed=1), make((3, 10), torch.float32, seed=2))
    if not dtype.is_complex:
        # Small values: float32 FFTs (XLA's and pocketfft's) differ by a few
        # ulps of the signal's norm, which the per-element default tolerance
        # only absorbs for elements near that norm.
        x = make((3, 10), dtype, seed=1, low=-3, high=3)
    check(lambda t: fn(t, norm=norm), x)
    check(lambda t: fn(t, n=7, dim=0, norm=norm), x)   # cropped/padded signal along another dim
    check(lambda t: fn(t, n=16, norm=norm), x)


@pytest.mark.parametrize("name", N_DIM)
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 4, 5), (2, 2, 3, 4, 5)], ids=str)
def test_n_dim(name, shape):
    fn = N_DIM[name]
    x = make(shape, torch.float32, seed=3)
    check(fn, x)
    check(lambda t: fn(t, norm="ortho"), x)
    if len(shape) >= 4:  # more than XLA's 3 dims per transform: done in groups
        check(lambda t: fn(t, dim=tuple(range(len(shape)))), x)
        check(lambda t: fn(t, dim=(0, 2)), x)


def test_noncontiguous_and_views():
    x = make((5, 8), torch.float32, seed=4, noncontiguous=True)
    check(torch.fft.rfft, x)
    check(lambda t: torch.fft.fft(t.t()), x)
    check(lambda t: torch.fft.irfft(torch.fft.rfft(t[1:, 2:])), x)


def test_float64():
    check(torch.fft.fft, make((9,), torch.float64, seed=5))
    check(torch.fft.irfft, make((9,), torch.float64, seed=5))


def test_stft_istft():
    x = make((64,), torch.float32, seed=6)
    window = torch.hann_window(16)
    check(lambda t, w: torch.stft(t, 16, hop_length=4, window=w, return_complex=True), x, window)
    spec = torch.stft(x, 16, hop_length=4, window=window, return_complex=True)
    check(lambda s, w: torch.istft(s, 16, hop_length=4, window=w, length=64), spec, window)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft"])
def test_backward_matches_cpu(name):
    fn = ONE_DIM[name]

    def grads(x):
        x = x.detach().clone().requires_grad_()
        out = fn(x, norm="ortho")
        up = make(out.shape, torch.float32, seed=7) if not out.is_complex() else torch.complex(
            make(out.shape, torch.float32, seed=7), make(out.shape, torch.float32, seed=8))
        out.backward(up.to(out.device))
        return out.detach().cpu(), x.grad.cpu()

    x = make((3, 10), torch.float32, seed=9)
    for got, expect in zip(grads(x.to("tpu")), grads(x)):
        torch.testing.assert_close(got, expect)


def test_bad_input_errors_like_cpu():
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        torch.fft.fft(torch.ones(0, device="tpu"))
    with pytest.raises(IndexError):
        torch.fft.fft(torch.ones(4, device="tpu"), dim=3)
