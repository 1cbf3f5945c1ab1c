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


def test_mixed_dtypes_raise_where_the_cpu_kernel_takes_one(assert_parity):
    # Found by the fuzzer (known bug mixed-dtypes-not-checked): tpu promoted.
    assert_parity({
        "_prelu_kernel f32/f16": lambda d: torch.ops.aten._prelu_kernel(
            torch.ones(2, 2, device=d), torch.ones(2, device=d).half()),
        "binary_cross_entropy_backward f32/f64": lambda d: torch.ops.aten.binary_cross_entropy_backward(
            torch.tensor(1.0, device=d), torch.tensor([0.3], device=d),
            torch.tensor([0.5], dtype=torch.float64, device=d), None, 1),
        # out= of another dtype, which these CPU kernels refuse (eager/out_dtype_check.cpp)
        "neg.out f32 into f64": lambda d: torch.ops.aten.neg.out(
            torch.ones(3, device=d), out=torch.empty(3, dtype=torch.float64, device=d)),
        "hardtanh.out f32 into complex64": lambda d: torch.ops.aten.hardtanh.out(
            torch.ones(3, device=d), -1, 1, out=torch.empty(3, dtype=torch.complex64, device=d)),
    })


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


def test_mode_of_nan(assert_parity):
    """An all-NaN slice's mode is NaN at index 0 (tpu gave index -1); NaN is
    never the mode of a slice with numbers (which the CPU leaves undefined)."""
    nan = math.nan
    cases = {f"mode {v}": lambda d, v=v: torch.mode(torch.tensor(v, device=d))
             for v in [[nan], [nan, nan], [1.0, nan, nan], [nan, 1.0, 1.0], [3.0, 1.0, 3.0, 1.0], [2.0, 2.0, 1.0]]}
    cases["mode over a size-1 dim, bfloat16"] = lambda d: torch.mode(
        torch.tensor([[-3e38, math.inf, 1e-3, 0.5, nan]], dtype=torch.bfloat16, device=d), -2)
    for dt in (torch.float32, torch.int64, torch.bool, torch.bfloat16):
        x = torch.randint(0, 4, (5, 7, 6), generator=torch.Generator().manual_seed(0)).to(dt)
        for dim in range(3):
            cases[f"mode {dt} dim {dim}"] = lambda d, x=x, dim=dim: torch.mode(x.to(d), dim)
    assert_parity(cases)


def test_shrink_and_hardswish_backward_nan_self(assert_parity):
    """A NaN self gives grad (not in the zeroed band, not below -3). The CPU's
    vectorized loop gives 0 (shrink) or NaN (hardswish) instead, but only in
    blocks of 2 SIMD vectors of a contiguous run; its per-element lambda, which
    small tensors like these take, gives grad, as tpu does (the fuzzer's
    float32[36] and float16[72] draws hit the vectorized blocks)."""
    nan, cases = math.nan, {}
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = lambda d, dt=dt: torch.tensor([nan, 0.5, -2.0, nan, 4.0], dtype=dt, device=d)  # noqa: E731
        g = lambda d, dt=dt: torch.tensor([3.0, 2.0, -1.0, -2.0, 1.0], dtype=dt, device=d)  # noqa: E731
        cases[f"hardshrink_backward {dt}"] = lambda d, x=x, g=g: torch.ops.aten.hardshrink_backward(g(d), x(d), 0)
        cases[f"softshrink_backward {dt}"] = lambda d, x=x, g=g: torch.ops.aten.softshrink_backward(g(d), x(d), True)
        cases[f"hardswish_backward.out {dt}"] = lambda d, x=x, g=g, dt=dt: torch.ops.aten.hardswish_backward.out(
            g(d), x(d), out=torch.empty(0, dtype=dt, device=d))
    cases["hardshrink_backward int32 grad, expanded self"] = lambda d: torch.ops.aten.hardshrink_backward(
        torch.tensor([[2, 7, -3], [1, 5, 4]], dtype=torch.int32, device=d),
        torch.tensor([nan, 0.0, -1.0], device=d).expand(2, 3), 0)
    assert_parity(cases)


def test_bce_backward_grad_input_aliasing_weight():
    """grad_input=weight: tpu gives what an unaliased out gets. The CPU writes
    the unweighted gradient into grad_input first and then multiplies it by
    weight, which is by then that gradient, so it returns its square."""
    def call(d, alias):
        g = torch.tensor(1.6845703125, dtype=torch.float16, device=d)
        x = torch.tensor([[0.977, 0.944, 0.593], [0.977, 0.944, 0.593]], dtype=torch.float16, device=d)
        y = torch.tensor([[0.5, 1.0, math.nan], [1.0, math.nan, 1.0]], dtype=torch.float16, device=d)
        w = torch.tensor([[-4.03, 4.02], [0.117, 0.131], [-3.31, 4.50]], dtype=torch.float16, device=d).t()
        out = w if alias else torch.empty_like(w)
        return torch.ops.aten.binary_cross_entropy_backward.grad_input(g, x, y, w, 2, grad_input=out).cpu()
    torch.testing.assert_close(call(T, True), call("cpu", False), equal_nan=True)
    torch.testing.assert_close(call(T, False), call("cpu", False), equal_nan=True)
def test_logit_backward_at_negative_zero(assert_parity):
    """At x = +-0 and 1 logit_backward is grad * inf, the CPU's per-element
    branch; grad / (x * (1 - x)) gave -grad * inf at x = -0.0. (The CPU's
    SIMD blocks, taken by contiguous runs of 2 vectors, flip the sign there.)"""
    x = lambda d, dt: torch.tensor([-0.0, 0.0, 1.0, 0.5, -0.0, math.nan], dtype=dt, device=d)  # noqa: E731
    g = lambda d, dt: torch.tensor([-2.0, 3.0, -1.0, 2.0, 0.0, 1.0], dtype=dt, device=d)  # noqa: E731
    cases = {}
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        cases[f"{dt}"] = lambda d, dt=dt: torch.ops.aten.logit_backward(g(d, dt), x(d, dt))
        cases[f"{dt} eps 0"] = lambda d, dt=dt: torch.ops.aten.logit_backward(g(d, dt), x(d, dt), 0.0)
    cases["int64 grad, expanded bfloat16 self"] = lambda d: torch.ops.aten.logit_backward(
        torch.tensor([[5, -8, 4], [13, 8, 12]], device=d),
        torch.tensor([-0.0, 0.5, 0.0], dtype=torch.bfloat16, device=d).expand(2, 3))
    assert_parity(cases)


def test_roll_range_check(assert_parity):
    assert_parity({"roll of an empty complex tensor, 2 shifts over 3 dims": lambda d: torch.ops.aten.roll(
        torch.zeros(4, 3, 1, 2, 0, dtype=torch.complex64, device=d), [3, 3], [0, -1, -2])})


def test_logsumexp_empty_dim_list(assert_parity):
    assert_parity({f"logsumexp({shape}, [], keepdim={kd})": lambda d, shape=shape, kd=kd: torch.logsumexp(
        torch.ones(shape, device=d), [], kd) for shape in [(2, 3), (3,), (), (3, 0), (0,)] for kd in (False, True)})


def test_complex_divide_special_values(assert_parity):
    """Complex division as the CPU's (Smith's algorithm): XLA's divide gave
    -1 / (inf + nan j) = 0 where the CPU gives NaN."""
    inf, nan = math.inf, math.nan
    a = [complex(-1, 0), complex(1, 2), complex(3, -1), complex(0, 0), complex(inf, 1), complex(1, 1),
         complex(nan, 1), complex(1e30, 1e30), complex(2, -3), complex(0, 1)]
    b = [complex(inf, nan), complex(0, 0), complex(1, 0), complex(0, 0), complex(2, 3), complex(inf, 0),
         complex(1, 0), complex(1e30, -1e30), complex(0.5, 0.25), complex(0, -2)]
    cases = {}
    for dt in (torch.complex64, torch.complex128):
        cases[f"{dt} / {dt}"] = lambda d, dt=dt: torch.tensor(a, dtype=dt, device=d) / torch.tensor(b, dtype=dt,
                                                                                                     device=d)
        cases[f"{dt} / 2.5j"] = lambda d, dt=dt: torch.tensor(a, dtype=dt, device=d) / 2.5j
        cases[f"int64 / {dt}"] = lambda d, dt=dt: torch.tensor([-1, 2, 0], device=d) / torch.tensor(
            b[:3], dtype=dt, device=d)
    assert_parity(cases)


def test_dtype_rejection_type(assert_parity):
    x = lambda d: torch.arange(4, device=d)  # noqa: E731 - int64, which these CPU kernels do not take
    assert_parity({name: (lambda d, f=f: f(x(d))) for name, f in [
        ("gelu", F.gelu), ("silu", F.silu), ("mish", F.mish), ("softplus", F.softplus),
        ("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid),
        ("_softmax", lambda t: torch.ops.aten._softmax(t, 0, False))]})


def test_reduction_out_dtype(assert_parity):
    """Reductions into an out= of another dtype reduce in out's dtype, the
    input converted first, as the CPU does."""
    x = lambda d: torch.tensor([[0.5, 2.5, 3.0, 1.25], [1.5, 2.0, 0.25, 7.0], [1.0, 1.0, 2.0, 0.0]], device=d)  # noqa
    cases = {}
    for op in (torch.sum, torch.prod, torch.all, torch.any):
        for dt in (torch.int64, torch.int32, torch.uint8, torch.float16, torch.float64):
            if op in (torch.sum, torch.prod) and dt == torch.uint8:
                continue
            for dim in (None, 1):
                cases[f"{op.__name__} dim {dim} into {dt}"] = lambda d, op=op, dt=dt, dim=dim: (
                    op(x(d), out=torch.empty(0, dtype=dt, device=d)) if dim is None
                    else op(x(d), dim, out=torch.empty(0, dtype=dt, device=d)))
    cases["prod into int64, keepdim"] = lambda d: torch.prod(x(d), 1, True, out=torch.empty(0, dtype=torch.long,
                                                                                           device=d))
    assert_parity(cases)


def test_batch_norm_half_cancellation(assert_parity):
    assert_parity({"f16 channel of 60000s": lambda d: torch.ops.aten._native_batch_norm_legit.no_stats(
        torch.tensor([[6e4, 1.0], [6e4, -1.0]], dtype=torch.float16, device=d), None, None, True, 1.0, 1e-5)[0]})


def test_binary_cross_entropy_target_outside_0_1(assert_parity):
    # Found by the fuzzer (known bug argument-checks-missing): tpu returned a loss.
    assert_parity({
        "target > 1": lambda d: F.binary_cross_entropy(torch.tensor([0.5], device=d), torch.tensor([2.0], device=d)),
        "target NaN": lambda d: F.binary_cross_entropy(torch.tensor([0.5], device=d),
                                                       torch.tensor([math.nan], device=d)),
    })


def test_scalar_overflow_raises_like_the_cpu(assert_parity):
    # Found by the fuzzer (known bug scalar-overflow-not-checked): tpu computed with inf.
    h = lambda d: torch.ones(2, dtype=torch.float16, device=d)  # noqa: E731
    assert_parity({
        "clamp_max(half, 1e10)": lambda d: torch.clamp_max(h(d), 1e10),
        "constant_pad_nd(half, value=1e10)": lambda d: F.pad(h(d), (1, 1), value=1e10),
        "constant_pad_nd without padding": lambda d: F.pad(h(d), (0, -1), value=1e10),
        "hardshrink_backward(half, lambd=1e10)": lambda d: torch.ops.aten.hardshrink_backward(h(d), h(d), 1e10),
        "histc(uint8, min=-3)": lambda d: torch.histc(torch.ones(2, dtype=torch.uint8, device=d), 4, -3, 5),
        "baddbmm of an empty batch, complex alpha": lambda d: torch.baddbmm(
            torch.ones(2, 2, device=d), torch.ones(0, 2, 3, device=d), torch.ones(0, 3, 2, device=d), alpha=1 - 2j),
        "addmv(float, beta=1e39)": lambda d: torch.addmv(torch.ones(2, device=d), torch.ones(2, 2, device=d),
                                                         torch.ones(2, device=d), beta=1e39),
        "addmv(float, alpha=1e39), nothing contracted": lambda d: torch.addmv(
            torch.ones(2, device=d), torch.ones(2, 0, device=d), torch.ones(0, device=d), alpha=1e39),
        "pow(half, 1e10)": lambda d: torch.pow(h(d), 1e10),
        "pow(float, 1e39)": lambda d: torch.pow(torch.ones(2, device=d), 1e39),
        "threshold_backward(half, 1e39)": lambda d: torch.ops.aten.threshold_backward(h(d), h(d), 1e39),
    })


def test_argument_checks_only_the_cpu_kernel_makes(assert_parity):
    # Found by the fuzzer (known bug argument-checks-missing) and by calling
    # OpInfo samples with bad numbers after a valid call (a cached program
    # skipped the meta kernel; the checks here are the CPU kernel's own).
    z = lambda d: torch.zeros(3, device=d)  # noqa: E731
    assert_parity({
        "smooth_l1_loss beta < 0": lambda d: F.smooth_l1_loss(torch.ones(2, device=d), torch.zeros(2, device=d),
                                                              beta=-1.0),
        "cummax dim 1 of a 0-d tensor": lambda d: torch.cummax(torch.tensor(1.0, device=d), 1),
        "normal_ std < 0": lambda d: z(d).normal_(0, -1),
        "exponential_ lambd < 0": lambda d: z(d).exponential_(-1),
        "random_ from >= to": lambda d: z(d).random_(3, 3),
        "index_reduce dim 10**12 of a 0-d tensor (was a crash)": lambda d: torch.tensor(1.0, device=d).index_reduce(
            10**12, torch.tensor([0], device=d), torch.tensor([2.0], device=d), "amax"),
        "index_reduce of a 2-D index": lambda d: torch.ones(3, device=d).index_reduce(
            0, torch.zeros(1, 1, dtype=torch.long, device=d), torch.ones(1, device=d), "amax"),
        "index_reduce with more indices than source": lambda d: torch.ones(3, device=d).index_reduce(
            0, torch.zeros(2, dtype=torch.long, device=d), torch.ones(1, device=d), "amax"),
        "slice_scatter src of the wrong size": lambda d: torch.slice_scatter(
            torch.zeros(4, 4, device=d), torch.zeros(4, 4, device=d), 0, 0, 1),
        "index_select dim 64 of a 0-d tensor": lambda d: torch.index_select(
            torch.tensor(1.0, device=d), 64, torch.tensor([0], device=d)),
        "index_select of a 0-d tensor with 3 indices": lambda d: torch.index_select(
            torch.tensor(1.0, device=d), 0, torch.tensor([0, 0, 0], device=d)),
        "mode over an empty dim": lambda d: torch.mode(torch.ones(2, 0, device=d), 1),
        "median over an empty dim": lambda d: torch.median(torch.ones(2, 0, device=d), -1),
        "nanmedian over an empty dim": lambda d: torch.nanmedian(torch.ones(0, 0, device=d), 1),
        # PyTorch's meta kernel checked k's range first (a RuntimeError, not the CPU's IndexError).
        "kthvalue over an empty dim": lambda d: torch.kthvalue(torch.ones(2, 0, device=d), 1, 1),
        "kthvalue over an empty dim, out=": lambda d: torch.kthvalue(
            torch.ones(0, device=d), 1, 0, out=(torch.empty(0, device=d), torch.empty(0, dtype=torch.long, device=d))),
        "searchsorted with a float sorter": lambda d: torch.searchsorted(
            torch.tensor([1.0, 2.0], device=d), torch.tensor([1.5], device=d),
            sorter=torch.tensor([0.0, 1.0], device=d)),
        "searchsorted with a sorter index out of range": lambda d: torch.searchsorted(
            torch.tensor([1.0, 2.0], device=d), torch.tensor([1.5], device=d), sorter=torch.tensor([0, 5], device=d)),
        "leaky_relu_backward in place with a negative slope": lambda d: torch.ops.aten.leaky_relu_backward(
            torch.ones(3, device=d), torch.ones(3, device=d), -0.1, True),
        "elu_backward in place with a negative alpha": lambda d: torch.ops.aten.elu_backward(
            torch.ones(3, device=d), -1.0, 1.0, 1.0, True, torch.ones(3, device=d)),
        "take into an out= that is its input": lambda d: (lambda x: torch.take(
            x, torch.tensor([1, 0], device=d), out=x))(torch.arange(2.0, device=d)),
        "index_select into an out= that is its input": lambda d: (lambda x: torch.index_select(
            x, 0, torch.tensor([1, 0], device=d), out=x))(torch.arange(2.0, device=d)),
        # Ran as a CPU fallback, whose copy of x hid the aliasing; now native.
        "masked_select into an out= that is its input": lambda d: (lambda x: torch.masked_select(
            x, x > 0, out=x))(torch.arange(3.0, device=d)),
        "masked_select into an out= of another dtype": lambda d: (lambda x: torch.masked_select(
            x, x > 0, out=torch.empty(0, dtype=torch.long, device=d)))(torch.arange(3.0, device=d)),
    })


def test_unsupported_dtypes_raise_not_implemented(assert_parity):
    # Found by the fuzzer (known bug unsupported-dtype-compile-error): XLA compile errors.
    b = lambda d: torch.tensor([True, False, True], device=d)  # noqa: E731
    assert_parity({
        "hardshrink_backward bool": lambda d: torch.ops.aten.hardshrink_backward(b(d), b(d), 2),
        "softshrink_backward bool": lambda d: torch.ops.aten.softshrink_backward(b(d), b(d), 0.5),
        "sigmoid_backward bool": lambda d: torch.ops.aten.sigmoid_backward(b(d), b(d)),
        "histc bool": lambda d: torch.histc(b(d), 4, 0, 1),
        "logcumsumexp int64": lambda d: torch.logcumsumexp(torch.arange(3, device=d), 0),
        "frac bool": lambda d: torch.frac(torch.tensor([True], device=d)),
        "tanh_backward bool": lambda d: torch.ops.aten.tanh_backward(b(d), b(d)),
        "logit_backward int64": lambda d: torch.ops.aten.logit_backward(torch.arange(3, device=d),
                                                                          torch.arange(3, device=d), 0.1),
    })


def test_linalg_errors_not_raised(assert_parity):
    npd = lambda d: torch.tensor([[1.0, 2.0], [2.0, 1.0]], device=d)  # noqa: E731 - not positive-definite
    assert_parity({
        "cholesky": lambda d: torch.cholesky(npd(d)),
        "linalg.inv_ex(check_errors=True) of a singular matrix": lambda d: torch.linalg.inv_ex(
            torch.zeros(2, 2, device=d), check_errors=True),
        "cholesky_inverse with a zero diagonal": lambda d: torch.cholesky_inverse(torch.zeros(2, 2, device=d)),
        "svd of NaN": lambda d: torch.linalg.svd(torch.full((2, 2), math.nan, device=d)),
    })


def test_linalg_error_type(assert_parity):
    assert_parity({"cholesky_ex(check_errors=True)": lambda d: torch.linalg.cholesky_ex(
        torch.tensor([[1.0, 2.0], [2.0, 1.0]], device=d), check_errors=True)})
