"""Regression tests of bugs the fuzzer found and that are fixed: each was a
test_known_bug_* in test_known_bugs.py, kept as found (minimal repros; the
crashes run in a subprocess)."""
import math

import torch

T = "tpu"


def test_scatter_0d_index_crash(survives):
    rc, out = survives("d = 'tpu'\n"
                       "r = torch.scatter_add(torch.zeros(1, device=d), 0, torch.tensor(0, device=d), "
                       "torch.ones(1, device=d))\nprint(r.cpu())")
    assert rc == 0 and "tensor([1.])" in out, f"exit {rc}: {out}"


def test_slice_scatter_bad_dim(raises_in_fresh_process):
    raises_in_fresh_process("torch.slice_scatter(torch.zeros(1, device='tpu'), torch.zeros(3, device='tpu'), dim=-2)",
                            "IndexError")


def test_gru_cell_backward_crash(raises_in_fresh_process):
    # the workspace should be (2, 15); a wrong one must raise, not kill the process
    raises_in_fresh_process("torch.ops.aten._thnn_fused_gru_cell_backward(torch.randn(2, 3, device='tpu'), "
                            "torch.tensor(0.1, device='tpu'), True)")


def test_int_pow_large_exponent(assert_parity):
    assert_parity({
        "2**70 int64": lambda d: torch.pow(torch.tensor([2, 3], device=d), torch.tensor([70, 41], device=d)),
        "3**32767 int16": lambda d: torch.pow(torch.tensor([3], dtype=torch.int16, device=d),
                                              torch.tensor([32767], dtype=torch.int16, device=d)),
    })


def test_hardswish_backward_at_minus_3(assert_parity):
    assert_parity({"x=-3": lambda d: torch.ops.aten.hardswish_backward(
        torch.ones(3, device=d), torch.tensor([-3.0, 0.0, 3.0], device=d))})


def test_loss_backward_mean_broadcast(assert_parity):
    g, t = torch.tensor(1.0), torch.tensor([0.5, -1.0, 2.0, 0.0])
    assert_parity({
        op: (lambda d, op=op, extra=extra: getattr(torch.ops.aten, op)(
            g.to(d), torch.tensor(3.0, device=d), t.to(d), 1, *extra))
        for op, extra in [("smooth_l1_loss_backward", (1.0,)), ("huber_loss_backward", (1.0,)),
                          ("mse_loss_backward", ())]})


def test_addmm_empty_k_nan_alpha(assert_parity):
    assert_parity({
        "addmm": lambda d: torch.addmm(torch.ones(2, 3, device=d), torch.ones(2, 0, device=d),
                                       torch.ones(0, 3, device=d), alpha=math.nan),
        "baddbmm": lambda d: torch.baddbmm(torch.ones(1, 2, 3, device=d), torch.ones(1, 2, 0, device=d),
                                           torch.ones(1, 0, 3, device=d), alpha=math.nan),
    })


def test_hardtanh_min_above_max(assert_parity):
    assert_parity({"hardtanh(x, 3, 0)": lambda d: torch.ops.aten.hardtanh(
        torch.tensor([-1.0, 1.0, 5.0], device=d), 3, 0)})


def test_upsample_scales(assert_parity):
    assert_parity({
        "bicubic2d backward": lambda d: torch.ops.aten.upsample_bicubic2d_backward(
            torch.arange(24.0, device=d).view(1, 1, 6, 4), [6, 4], [1, 1, 6, 4], False, 0.5, 2.0),
        "1d": lambda d: torch.ops.aten.upsample_nearest1d(torch.arange(3.0, device=d).view(1, 1, 3), [3], 0.5),
        "3d": lambda d: torch.ops.aten.upsample_nearest3d(torch.arange(12.0, device=d).view(1, 1, 2, 3, 2),
                                                          [4, 3, 3], 2.0, 0.5, 0.5),
    })


def test_bool_div_by_zero(assert_parity):
    assert_parity({"[True, False] / 0.0": lambda d: torch.tensor([True, False], device=d) / 0.0,
                   "[True, False] / -0.0": lambda d: torch.tensor([True, False], device=d) / -0.0})


def test_layer_norm_empty_rstd(assert_parity):
    assert_parity({"normalized_shape [0]": lambda d: torch.ops.aten.native_layer_norm(
        torch.zeros(3, 0, device=d), [0], None, None, 1e-5)})


def test_lerp_bool_weight(assert_parity):
    assert_parity({"weight False": lambda d: torch.lerp(torch.tensor(math.inf, device=d),
                                                        torch.tensor(-1.0, device=d), False)})


def test_slice_scatter_0d_src_crash(raises_in_fresh_process):
    raises_in_fresh_process("torch.slice_scatter(torch.zeros(4, device='tpu'), torch.tensor(0.0, device='tpu'), "
                            "step=2).cpu()")


def test_cholesky_solve_helper_0d_crash(raises_in_fresh_process):
    raises_in_fresh_process("torch.ops.aten._cholesky_solve_helper(torch.ones(2, 2, device='tpu'), "
                            "torch.tensor(1.0, device='tpu'), True).cpu()", "IndexError")


def test_lstm_cell_backward_crash(raises_in_fresh_process):
    # a 0-d CPU workspace (should be (2, 4) here) and a cy of another shape than cx
    raises_in_fresh_process("torch.ops.aten._thnn_fused_lstm_cell_backward_impl(None, None, "
                            "torch.randn(2, 1, device='tpu'), torch.randn(2, 4, device='tpu'), torch.tensor(1.0), True)")


def test_zeta_at_infinity(assert_parity):
    q = [-2.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.01, 1.5, 2.0, 10.0, math.inf, math.nan]
    cases = {f"zeta({x}, q) {dt}": lambda d, x=x, dt=dt: torch.special.zeta(
        torch.full((len(q),), x, dtype=dt, device=d), torch.tensor(q, dtype=dt, device=d))
        for x in [math.inf, 1e300, 1e6, 60.0, 2.0, 1.0, 0.5] for dt in [torch.float64, torch.float32]
        if dt == torch.float64 or x < 1e38}
    assert_parity(cases)
