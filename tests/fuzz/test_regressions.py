"""Regression tests of bugs the fuzzer found and that are fixed: each was a
test_known_bug_* in test_known_bugs.py, kept as found (minimal repros; the
crashes run in a subprocess)."""
import math

import torch
import torch.nn.functional as F

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


def test_prelu_backward_weight_grad_shape(assert_parity):
    cases = {}
    for shape, wshape in [((), (1,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), ()), ((0, 3), (3,))]:
        g = torch.randn(shape, generator=torch.Generator().manual_seed(0))
        x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
        w = torch.rand(wshape, generator=torch.Generator().manual_seed(2))
        cases[f"self {shape}, weight {wshape}"] = lambda d, g=g, x=x, w=w: torch.ops.aten._prelu_kernel_backward(
            g.to(d), x.to(d), w.to(d))
    assert_parity(cases)


def test_backward_mixed_dtype_result(assert_parity):
    h = lambda d: torch.tensor([0.5, -1.0], dtype=torch.float16, device=d)  # noqa: E731
    f = lambda d: torch.tensor([1.0, 2.0], device=d)  # noqa: E731
    assert_parity({
        "threshold_backward uint8 grad, int32 self": lambda d: torch.ops.aten.threshold_backward(
            torch.ones(3, dtype=torch.uint8, device=d), torch.tensor([-1, 0, 2], dtype=torch.int32, device=d), 0),
        "mse_loss_backward f32 grad, f16 self": lambda d: torch.ops.aten.mse_loss_backward(
            torch.tensor(1.0, device=d), h(d), h(d) * 2, 1),
        "mish_backward f32 grad, f16 self": lambda d: torch.ops.aten.mish_backward(f(d), h(d)),
        "mish_backward f16 grad, f32 self": lambda d: torch.ops.aten.mish_backward(h(d), f(d)),
        "threshold_backward f16 grad, f32 self": lambda d: torch.ops.aten.threshold_backward(h(d), f(d), 1.5),
        "threshold_backward int32 grad, uint8 self": lambda d: torch.ops.aten.threshold_backward(
            torch.tensor([3, 4], dtype=torch.int32, device=d), torch.tensor([0, 9], dtype=torch.uint8, device=d), 1),
    })


def test_hardtanh_nan_bound(assert_parity):
    x = lambda d: torch.tensor([-1.0, 0.5, 2.0, math.nan], device=d)  # noqa: E731
    assert_parity({f"hardtanh(x, {lo}, {hi})": lambda d, lo=lo, hi=hi: torch.ops.aten.hardtanh(x(d), lo, hi)
                   for lo, hi in [(0.0, math.nan), (math.nan, 1.0), (math.nan, math.nan), (2.0, 1.0), (-1.0, 1.0)]})


def test_upsample_nearest_scales(assert_parity):
    cases = {"nearest2d backward, equal sizes, scale 1.5": lambda d: torch.ops.aten.upsample_nearest2d_backward(
        torch.arange(6.0, device=d).view(1, 1, 6, 1), [6, 1], [1, 1, 6, 2], 1.5, None)}
    # equal, doubled and other sizes, each with no scale, a matching one and a different one
    for n in (1, 2, 3):
        for op in (f"upsample_nearest{n}d", f"_upsample_nearest_exact{n}d"):
            for k, (size_in, size_out, scale) in enumerate([(3, 3, 2.0), (3, 6, 1.0), (4, 7, 1.5), (5, 5, None),
                                                            (3, 6, 2.0), (6, 4, 0.5)]):
                ins, outs, scales = [size_in] * n, [size_out] * n, [scale] * n
                x = torch.randn([2, 3] + ins, generator=torch.Generator().manual_seed(k))
                g = torch.randn([2, 3] + outs, generator=torch.Generator().manual_seed(k + 50))
                fw, bw = getattr(torch.ops.aten, op), getattr(torch.ops.aten, op + "_backward")
                cases[f"{op} {ins}->{outs} scale {scale}"] = lambda d, fw=fw, x=x, a=(outs, *scales): fw(x.to(d), *a)
                cases[f"{op}_backward {outs}->{ins} scale {scale}"] = \
                    lambda d, bw=bw, g=g, a=(outs, [2, 3] + ins, *scales): bw(g.to(d), *a)
    assert_parity(cases)


def test_range_out_shape(assert_parity):
    fills = {"linspace": lambda o: torch.linspace(0, 1, 3, out=o), "logspace": lambda o: torch.logspace(0, 1, 3, out=o),
             "arange": lambda o: torch.arange(0, 3, out=o), "arange step 1.5": lambda o: torch.arange(0, 3, 1.5, out=o),
             "linspace 1 step": lambda o: torch.linspace(2, 5, 1, out=o)}
    cases = {}
    for name, fill in fills.items():
        for shape in [(3, 1), (1, 3), (3, 1, 1), (2, 2), (0,), (3,), ()]:
            for dt in (torch.float32, torch.int64):
                cases[f"{name} into {shape} {dt}"] = lambda d, fill=fill, shape=shape, dt=dt: fill(
                    torch.zeros(shape, dtype=dt, device=d))
        cases[f"{name} into a transposed [1, 3]"] = lambda d, fill=fill: fill(torch.zeros(3, 1, device=d).t())
    assert_parity(cases)


def test_half_precision_as_accurate_as_the_cpu():
    """float16/bfloat16 convolutions, pooling and norms: tpu accumulates in
    float32 (as CUDA), the CPU rounds some intermediates to the half type, so
    the last bit differs; the fuzz oracle then requires each element of tpu's
    result to be no further from the float64 result (of the same half-type
    inputs) than the CPU's, plus one unit in the last place. It holds here."""
    gen = lambda seed, *shape: torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * 2  # noqa: E731
    for seed in range(3):
        x, w, y = gen(seed, 2, 4, 3), gen(seed + 10, 2, 1, 1, 2), gen(seed + 20, 2, 2, 5, 5)
        z, wc = gen(seed + 30, 2, 3, 6, 6), gen(seed + 40, 4, 3, 3, 3)
        ops = {
            "batch norm": lambda t: torch.ops.aten._native_batch_norm_legit.no_stats(
                t(x), None, None, True, 0.1, 1e-5)[0],
            "transposed conv": lambda t: torch.ops.aten.convolution(t(y), t(w), None, [1, 1], [1, 0], [1, 2], True,
                                                                    [0, 0], 2),
            "conv2d": lambda t: F.conv2d(t(z), t(wc), padding=1),
            "avg_pool2d": lambda t: F.avg_pool2d(t(z), 3, 2, 1),
            "adaptive_avg_pool2d": lambda t: F.adaptive_avg_pool2d(t(z), 4),
            "group_norm": lambda t: F.group_norm(t(z), 3),
            "layer_norm": lambda t: F.layer_norm(t(z), [6, 6]),
        }
        for name, op in ops.items():
            for dt in (torch.float16, torch.bfloat16):
                cpu = op(lambda a: a.to(dt)).double()
                tpu = op(lambda a: a.to(dt).to(T)).cpu()
                assert tpu.dtype == dt
                ref = op(lambda a: a.to(dt).double())
                fi = torch.finfo(dt)
                ulp = fi.eps * torch.exp2(torch.floor(torch.log2(ref.abs().clamp_min(fi.tiny))))
                excess = (tpu.double() - ref).abs() - (cpu - ref).abs()
                assert bool((excess <= ulp).all()), f"{name} {dt} seed {seed}: {(excess / ulp).max():.1f} ulp " \
                                                    "less accurate than the CPU"

