"""out= calls remember the sizes their meta kernel gave each exact call
signature (csrc/eager/out_meta_memo.h): a repeated out= call skips PyTorch's
(mostly Python) meta kernel, and still behaves as the CPU does: the same
results, the same resize warnings on every call, and every check that depends
on a number's value."""
import warnings

import pytest
import torch
from torch.testing import assert_close

import torch_tpu


def hits():
    return torch_tpu.metrics()["out_meta_memo_hits"]


def test_a_repeated_out_call_skips_its_meta_kernel_and_matches_the_cpu():
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    c = x > 0
    for device in ("cpu", "tpu"):
        a, b, cond = x.to(device), y.to(device), c.to(device)
        out = torch.empty(0, device=device)
        first = hits()
        for _ in range(3):  # a fresh empty out each time resizes quietly; the memo answers the 2nd and 3rd
            out = torch.empty(0, device=device)
            torch.add(a, b, alpha=2, out=out)
            assert_close(out.cpu(), x + 2 * y)
        out = torch.empty(0, device=device)
        torch.add(a, b, alpha=3, out=out)  # another alpha: another signature, its meta kernel runs
        assert_close(out.cpu(), x + 3 * y)
        w = torch.empty(4, 6, device=device)
        for _ in range(2):
            torch.where(cond, a, b, out=w)
            assert_close(w.cpu(), torch.where(c, x, y))
        if device == "tpu":
            assert hits() - first == 3  # add's 2nd and 3rd, where's 2nd


def test_resizing_a_non_empty_out_warns_on_every_call_like_the_cpu():
    x = torch.randn(5)
    counts = {}
    for device in ("cpu", "tpu"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                out = torch.empty(2, device=device)
                torch.neg(x.to(device), out=out)
                assert out.shape == (5,)
                assert_close(out.cpu(), -x)
        counts[device] = sum("resized" in str(w.message) for w in caught)
    assert counts["tpu"] == counts["cpu"] == 3


def test_a_new_number_value_runs_the_meta_kernel_checks_again():
    # renorm's p must be positive: a check on the number's value, which a memo
    # keyed on shapes and dtypes alone would skip after a good call.
    x = torch.randn(3, 4)
    for device in ("cpu", "tpu"):
        out = torch.empty(3, 4, device=device)
        torch.renorm(x.to(device), 2, 0, 1.0, out=out)
        torch.renorm(x.to(device), 2, 0, 1.0, out=out)
        assert_close(out.cpu(), torch.renorm(x, 2, 0, 1.0))
        with pytest.raises(RuntimeError, match="non-positive.norm"):
            torch.renorm(x.to(device), -1, 0, 1.0, out=out)


def test_strides_and_dtypes_are_in_the_key():
    x = torch.randn(4, 6)
    for device in ("cpu", "tpu"):
        a = x.to(device)
        o32 = torch.empty(0, device=device)
        torch.mul(a, 2, out=o32)
        o16 = torch.empty(0, dtype=torch.bfloat16, device=device)
        torch.mul(a, 2, out=o16)  # same shapes, another out dtype: its own entry
        assert o16.dtype == torch.bfloat16 and o16.shape == (4, 6)
        ot = torch.empty(0, device=device)
        torch.mul(a.t(), 2, out=ot)  # a transposed input: another signature, another shape
        assert ot.shape == (6, 4)
        assert_close(ot.cpu(), x.t() * 2)
        assert_close(o16.cpu(), (x * 2).bfloat16())


def test_an_override_that_reads_values_is_never_remembered():
    # linalg_lstsq.out (gelsd) has residuals only when every matrix has full
    # rank: the same shapes give [2, 2] residuals, then none, then [2, 2].
    g = torch.Generator().manual_seed(3)
    full = torch.randn(2, 5, 3, dtype=torch.float64, generator=g)
    deficient = full.clone()
    deficient[1, :, 2] = deficient[1, :, 0]  # rank 2 < n = 3
    b = torch.randn(2, 5, 2, dtype=torch.float64, generator=g)
    for a in (full, deficient, full):
        expect = torch.linalg.lstsq(a, b, driver="gelsd")
        outs = tuple(torch.empty(0, dtype=dt, device="tpu") for dt in (torch.float64, torch.float64, torch.int64,
                                                                          torch.float64))
        got = torch.linalg.lstsq(a.to("tpu"), b.to("tpu"), driver="gelsd", out=outs)
        for e, r in zip(expect, got):
            assert r.shape == e.shape
            assert_close(r.cpu(), e)
