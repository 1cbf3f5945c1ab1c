"""Bad input raises the same exception type as the CPU, names the op where the
error comes from device values, and leaves the process usable."""
import pytest
import torch
import torch.nn.functional as F


def raises_like_cpu(fn, *cpu_args):
    with pytest.raises(Exception) as cpu:
        fn(*cpu_args)
        torch.tpu.synchronize()
    with pytest.raises(Exception) as tpu:
        fn(*[a.to("tpu") if isinstance(a, torch.Tensor) else a for a in cpu_args])
        torch.tpu.synchronize()
    assert type(tpu.value) is type(cpu.value), (tpu.value, cpu.value)
    return str(tpu.value)


def still_usable():
    x = torch.arange(6.0).to("tpu")
    assert torch.equal((x * 2 + 1).cpu(), torch.arange(6.0) * 2 + 1)


def test_mismatched_shapes():
    raises_like_cpu(torch.add, torch.ones(3, 4), torch.ones(5))
    raises_like_cpu(torch.mm, torch.ones(3, 4), torch.ones(5, 2))
    raises_like_cpu(torch.cat, [torch.ones(2, 3), torch.ones(2, 4)])
    still_usable()


def test_wrong_dtypes():
    raises_like_cpu(torch.mm, torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64))
    raises_like_cpu(torch.index_select, torch.ones(3), 0, torch.tensor([0.0]))
    raises_like_cpu(lambda a: a.add_(1.5), torch.ones(3, dtype=torch.int64))  # float result into int64
    raises_like_cpu(torch.gather, torch.ones(3), 0, torch.tensor([0], dtype=torch.int16))
    still_usable()


def test_out_of_range_indices_in_gather_and_index_select():
    msg = raises_like_cpu(torch.gather, torch.ones(3, 2), 0, torch.tensor([[0, 5]]))
    assert "gather" in msg
    msg = raises_like_cpu(torch.index_select, torch.ones(3, 2), 0, torch.tensor([0, 3]))
    assert "index_select" in msg
    msg = raises_like_cpu(torch.index_select, torch.ones(3, 2), 0, torch.tensor([-1]))
    still_usable()


def test_out_of_range_embedding_and_advanced_index():
    raises_like_cpu(lambda w, i: torch.nn.functional.embedding(i, w), torch.ones(4, 2), torch.tensor([1, 4]))
    raises_like_cpu(lambda x, i: x[i], torch.ones(4), torch.tensor([7]))
    still_usable()


def test_inplace_broadcast_onto_a_smaller_tensor():
    raises_like_cpu(lambda a, b: a.add_(b), torch.ones(3), torch.ones(2, 3))
    raises_like_cpu(lambda a, b: a.mul_(b), torch.ones(1, 3), torch.ones(4, 1))
    still_usable()


def test_bad_dims():
    raises_like_cpu(lambda a: a.sum(5), torch.ones(2, 3))
    raises_like_cpu(lambda a: a.transpose(0, 3), torch.ones(2, 3))
    still_usable()


def test_debug_mode_raises_at_the_op():
    import torch_tpu
    x, i = torch.ones(3).to("tpu"), torch.tensor([9]).to("tpu")
    with torch_tpu.debug_mode():
        with pytest.raises(IndexError, match="index_select"):
            torch.index_select(x, 0, i)
    still_usable()


@pytest.mark.parametrize("call", [
    lambda d: torch.ones(3, device=d).add_(1 + 2j),
    lambda d: torch.ones(3, device=d).sub_(torch.tensor(2j)),
    lambda d: torch.ones(3, dtype=torch.long, device=d).mul_(1.5),
    lambda d: torch.ones(3, dtype=torch.long, device=d).mul_(torch.tensor(1.5, dtype=torch.float64)),
    lambda d: torch.ones(3, dtype=torch.bool, device=d).add_(1),
    lambda d: torch.ones(3, dtype=torch.long, device=d).sqrt_(),
    lambda d: torch.mul(torch.ones(3, device=d), 2.5, out=torch.empty(3, dtype=torch.long, device=d)),
])
def test_unsafe_cast_into_written_tensor_raises_like_cpu(call):
    """In-place and pointwise out= results are never cast unsafely (the meta
    kernels don't check this; the CPU's TensorIterator does)."""
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type") as cpu:
        call("cpu")
    with pytest.raises(RuntimeError):
        call("tpu")
    still_usable()


@pytest.mark.parametrize("call", [
    lambda d: torch.ones(3, device=d).add_(torch.ones(3, dtype=torch.float64, device=d)),
    lambda d: torch.ones(3, dtype=torch.long, device=d).fill_(1.5),
    lambda d: torch.ones(3, device=d).logical_not_(),
    lambda d: torch.sum(torch.ones(3, device=d), 0, out=torch.empty((), dtype=torch.long, device=d)),
    lambda d: torch.eq(torch.ones(3, device=d), 1, out=torch.empty(3, device=d)),
])
def test_safe_casts_into_written_tensor_work_like_cpu(call):
    want, got = call("cpu"), call("tpu")
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want)


BN = torch.ops.aten.native_batch_norm


@pytest.mark.parametrize("dtypes", [
    (torch.float32, torch.float64, torch.float32, torch.float32, torch.float32),   # mixed weight
    (torch.float32, torch.float32, torch.float32, torch.float64, torch.float32),   # running_mean
    (torch.bfloat16, torch.bfloat16, torch.float32, torch.bfloat16, torch.bfloat16),
    (torch.bfloat16, torch.float32, torch.float32, torch.bfloat16, torch.float32),
])
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_parameter_dtypes_like_cpu(dtypes, training):
    x = torch.randn(3, 2, 4, dtype=dtypes[0])
    params = [torch.ones(2, dtype=d) for d in dtypes[1:]]
    with pytest.raises(RuntimeError) as cpu:
        BN(x, *params, training, 0.1, 1e-5)
    with pytest.raises(RuntimeError) as tpu:
        BN(x.to("tpu"), *[p.to("tpu") for p in params], training, 0.1, 1e-5)
    assert str(tpu.value).endswith(str(cpu.value)), (tpu.value, cpu.value)
    still_usable()


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_mixed_bfloat16_input_float32_params_like_cpu(training):
    x = torch.randn(3, 2, 4, dtype=torch.bfloat16)
    params = [torch.rand(2) + 0.5 for _ in range(4)]
    want = BN(x, *[p.clone() for p in params], training, 0.1, 1e-5)
    got = BN(x.to("tpu"), *[p.to("tpu") for p in params], training, 0.1, 1e-5)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g.cpu(), w, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("arg,shape", [(0, ()), (1, ()), (0, (3,)), (2, (1,)), (3, ())])
def test_batch_norm_parameter_sizes_checked(arg, shape):
    """The CPU's kernel reads past a weight shorter than the channel count (an
    undefined result); tpu refuses it, naming the parameter and sizes."""
    params = [torch.ones(2, device="tpu") for _ in range(4)]
    params[arg] = torch.ones(shape, device="tpu")
    name = ["weight", "bias", "running_mean", "running_var"][arg]
    with pytest.raises(RuntimeError, match=name):
        BN(torch.randn(3, 2, 4, device="tpu"), *params, False, 0.1, 1e-5)
    still_usable()


A = torch.ops.aten


def _t(shape, dtype=torch.float32):
    return torch.rand(shape, dtype=dtype)


# CPU kernels that take one dtype for all their tensors raise on mixed dtypes
# (the meta kernels, and so tpu before, promoted and computed).
MIXED_DTYPES = {
    "huber_loss_backward": lambda d: A.huber_loss_backward(_t((2, 3), d), _t((2, 3)), _t((2, 3)), 1, 1.0),
    "binary_cross_entropy": lambda d: A.binary_cross_entropy(_t((2, 3)), _t((2, 3), d), None, 1),
    "binary_cross_entropy_backward": lambda d: A.binary_cross_entropy_backward(
        _t((2, 3), d), _t((2, 3)), _t((2, 3)), None, 1),
    "log_sigmoid_backward": lambda d: A.log_sigmoid_backward(_t((2, 3), d), _t((2, 3)), _t((2, 3))),
    "_softmax_backward_data": lambda d: A._softmax_backward_data(_t((2, 3)), _t((2, 3), d), 1, torch.float32),
    "_log_softmax_backward_data": lambda d: A._log_softmax_backward_data(_t((2, 3)), _t((2, 3), d), 1, torch.float32),
    "_prelu_kernel": lambda d: A._prelu_kernel(_t((2, 3)), _t((3,), d)),
    "_prelu_kernel_backward": lambda d: A._prelu_kernel_backward(_t((2, 3), d), _t((2, 3)), _t((3,))),
    "reflection_pad2d_backward": lambda d: A.reflection_pad2d_backward(_t((1, 4, 5), d), _t((1, 2, 3)), [1, 1, 1, 1]),
    "replication_pad1d_backward": lambda d: A.replication_pad1d_backward(_t((2, 5)), _t((2, 3), d), [1, 1]),
    "glu_backward": lambda d: A.glu_backward(_t((2, 2), d), _t((2, 4)), 1),
    "nll_loss_forward": lambda d: A.nll_loss_forward(_t((2, 3)), torch.tensor([0, 1]), _t((3,), d), 1, -100),
    "nll_loss_backward": lambda d: A.nll_loss_backward(torch.tensor(1.0, dtype=d), _t((2, 3)), torch.tensor([0, 1]),
                                                       None, 1, -100, torch.tensor(2.0)),
    "linalg_cross": lambda d: A.linalg_cross(_t((2, 3)), _t((2, 3), d)),
    "multilabel_margin_loss_backward": lambda d: A.multilabel_margin_loss_backward(
        torch.tensor(1.0, dtype=d), _t((2, 3)), torch.zeros(2, 3, dtype=torch.long), 1, _t((2, 3))),
}


@pytest.mark.parametrize("name", list(MIXED_DTYPES))
@pytest.mark.parametrize("other", [torch.float64, torch.bfloat16], ids=str)
def test_mixed_dtypes_raise_like_the_cpu(name, other):
    call = MIXED_DTYPES[name]
    with pytest.raises(RuntimeError) as cpu:
        call(other)
    with torch.device("tpu"):
        with pytest.raises(RuntimeError) as tpu:
            call(other)
            torch.tpu.synchronize()
    assert str(cpu.value).splitlines()[0] in str(tpu.value), (str(tpu.value), str(cpu.value))
    with torch.device("tpu"):
        call(torch.float32)  # one dtype: computes
    still_usable()


# Pointwise and activation out= tensors of another dtype: the CPU kernels
# built on a same-dtype TensorIterator refuse them ("Found dtype Double but
# expected Float"), the others cast; tpu cast for all.
OUT_DTYPES = {
    "neg": lambda x, o: torch.neg(x, out=o),
    "round": lambda x, o: torch.round(x, out=o),
    "clamp": lambda x, o: torch.clamp(x, 0.2, 0.5, out=o),
    "hardtanh": lambda x, o: torch._C._nn.hardtanh(x, -1, 1, out=o),
    "elu": lambda x, o: torch._C._nn.elu(x, out=o),
    "leaky_relu": lambda x, o: torch._C._nn.leaky_relu(x, 0.1, out=o),
    "hardshrink": lambda x, o: A.hardshrink.out(x, 0.5, out=o),
    "sin": lambda x, o: torch.sin(x, out=o),
    "add": lambda x, o: torch.add(x, x, out=o),
    "sigmoid": lambda x, o: torch.sigmoid(x, out=o),
    "abs": lambda x, o: torch.abs(x, out=o),
}


def same_outcome(call, *args):
    """call(*args) on the CPU and on tpu: the same exception type (the CPU's
    message where tpu's own check raised it), or the same result."""
    try:
        want = call(*args)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as tpu:
            call(*[a.to("tpu") if isinstance(a, torch.Tensor) else a for a in args])
            torch.tpu.synchronize()
        assert type(tpu.value) is type(e), (tpu.value, e)
        return str(e).splitlines()[0], str(tpu.value)
    got = call(*[a.to("tpu") if isinstance(a, torch.Tensor) else a for a in args])
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)
    return None


@pytest.mark.parametrize("name", list(OUT_DTYPES))
@pytest.mark.parametrize("out_dtype", [torch.float64, torch.float16, torch.complex64], ids=str)
def test_out_of_another_dtype_like_the_cpu(name, out_dtype):
    raised = same_outcome(OUT_DTYPES[name], torch.tensor([0.3, -1.7, 2.5]), torch.empty(3, dtype=out_dtype))
    if raised and raised[0].startswith("Found dtype"):
        # the CPU kernel's own check; PyTorch's Python meta kernels (elu,
        # leaky_relu) word theirs otherwise ("Expected out tensor to have dtype")
        assert raised[0] in raised[1] or "Expected out tensor to have dtype" in raised[1], raised
    still_usable()


# Python numbers out of the dtype's range: the CPU kernels that convert them
# with value.to<T>() raise (tpu computed with inf or a wrapped value), each
# to its own T: the result type (clamp), self's dtype (masked_fill, F.pad),
# float for float16 (addcmul's value, threshold's threshold); the others
# compute (bfloat16 + 1e39 is inf; tpu raised while narrowing it to float32,
# and where(half, x, 1e10) raised filling its one-element scalar tensor).
# pow converts its exponent only to a half or integer result, addmv skips
# alpha (and, for half types, beta) when an operand is empty, and
# threshold_backward converts to the tensors' common dtype.
SCALARS = {
    "clamp_max": lambda x, v: torch.clamp_max(x, v),
    "clamp_min": lambda x, v: torch.clamp_min(x, v),
    "clamp": lambda x, v: torch.clamp(x, -v, v),
    "clamp_": lambda x, v: x.clone().clamp_(None, v),
    "pad": lambda x, v: torch.nn.functional.pad(x, (1, 1), value=v),
    "threshold": lambda x, v: torch.nn.functional.threshold(x, v, 0.0),
    "threshold value": lambda x, v: torch.nn.functional.threshold(x, 0.5, v),
    "addcmul": lambda x, v: torch.addcmul(x, x, x, value=v),
    "add alpha": lambda x, v: torch.add(x, x, alpha=v),
    "sub alpha": lambda x, v: torch.sub(x, x, alpha=v),
    "masked_fill": lambda x, v: x.masked_fill(x > 0, v),
    "hardtanh": lambda x, v: torch.nn.functional.hardtanh(x, -v, v),
    "hardshrink": lambda x, v: torch.nn.functional.hardshrink(x, v) if x.is_floating_point() else x,
    "logit eps": lambda x, v: torch.logit(x, v),
    "add number": lambda x, v: torch.add(x, v),
    "where": lambda x, v: torch.where(x > 0, x, v),
    "addmm beta": lambda x, v: torch.addmm(x[:2].expand(2, 2), x[:2].expand(2, 2), x[:2].expand(2, 2), beta=v),
    "baddbmm alpha": lambda x, v: torch.baddbmm(x[:1].expand(1, 1, 1), x[:1].expand(1, 1, 1),
                                                x[:1].expand(1, 1, 1), alpha=v),
    "fill_ one element": lambda x, v: x[:1].clone().fill_(v),
    "fill_ empty": lambda x, v: x[:0].clone().fill_(v),
    "full_like empty": lambda x, v: torch.full_like(x[:0], v),
    "pow": lambda x, v: torch.pow(x, v),
    "addmv beta": lambda x, v: torch.addmv(x, x.expand(3, 3), x, beta=v),
    "addmv alpha": lambda x, v: torch.addmv(x, x.expand(3, 3), x, alpha=v),
    "addmv beta, nothing contracted": lambda x, v: torch.addmv(x, x[:0].expand(3, 0), x[:0], beta=v),
    "addmv alpha, nothing contracted": lambda x, v: torch.addmv(x, x[:0].expand(3, 0), x[:0], alpha=v),
    "threshold_backward": lambda x, v: A.threshold_backward(x, x, v),
    "threshold_backward mixed": lambda x, v: A.threshold_backward(x, x.float(), v),
    "index_fill": lambda x, v: x.index_fill(0, torch.tensor([0], device=x.device), v),
    "scatter value": lambda x, v: x.scatter(0, torch.tensor([1], device=x.device), v),
    "lerp weight": lambda x, v: torch.lerp(x, x, v),
    "addr beta": lambda x, v: torch.addr(x[:2].expand(2, 2), x[:2], x[:2], beta=v),
    "addr alpha": lambda x, v: torch.addr(x[:2].expand(2, 2), x[:2], x[:2], alpha=v),
    # (its CPU kernel takes float32 and float64 only)
    "multi_margin_loss margin": lambda x, v: torch.nn.functional.multi_margin_loss(
        x.expand(2, 3), torch.tensor([0, 2], device=x.device), margin=v) if x.dtype == torch.float32 else x,
    "rrelu eval lower": lambda x, v: torch.nn.functional.rrelu(x, -v, 1.0, training=False),
    "leaky_relu": lambda x, v: torch.nn.functional.leaky_relu(x, v),
    "leaky_relu_backward": lambda x, v: A.leaky_relu_backward(x, x, v, False),
    "elu alpha": lambda x, v: torch.nn.functional.elu(x, v) if x.is_floating_point() else x,
    "elu input_scale": lambda x, v: A.elu(x, 1.0, 1.0, v) if x.is_floating_point() else x,
    "elu_backward scale": lambda x, v: A.elu_backward(x, 1.0, v, 1.0, False, x),
    "softplus threshold": lambda x, v: torch.nn.functional.softplus(x, 1.0, v),
    "softplus_backward beta": lambda x, v: A.softplus_backward(x, x, v, 20.0),
    "hardtanh_backward": lambda x, v: A.hardtanh_backward(x, x, -v, v) if x.is_floating_point() else x,
    "softshrink_backward": lambda x, v: A.softshrink_backward(x, x, v) if x.is_floating_point() else x,
}


@pytest.mark.parametrize("name", list(SCALARS))
@pytest.mark.parametrize("dtype,value", [(torch.float16, 1e10), (torch.bfloat16, 1e39), (torch.float32, 1e39),
                                         (torch.int8, 1000), (torch.int8, 1000.5), (torch.uint8, -3),
                                         (torch.int16, 40000), (torch.float16, 100.0), (torch.float32, 1 + 2j),
                                         (torch.bfloat16, 1.5 - 0.5j), (torch.complex64, 1e39)], ids=str)
def test_numbers_out_of_the_dtypes_range_like_the_cpu(name, dtype, value):
    raised = same_outcome(SCALARS[name], torch.tensor([1.0, 0.25, -2.0]).to(dtype), value)
    if raised and "without overflow" in raised[0]:
        assert raised[0] in raised[1], raised
    still_usable()


# Checks only the CPU kernel makes (its meta kernel does not): on tpu they
# raised at most when a program was built, so a call after a valid one with
# a cached program computed (normal_ with std -1, softshrink with lambd NaN
# (a runtime number), cummax of a 0-d tensor along dim 2).
def _zeros(*shape, dtype=torch.float32):
    return lambda dev: torch.zeros(shape, dtype=dtype, device=dev)


CPU_ONLY_CHECKS = {
    # name: (tensor maker, valid call, bad call)
    "normal_ std": (_zeros(4), lambda x: x.normal_(0, 1), lambda x: x.normal_(0, -1)),
    "uniform_ from > to": (_zeros(4), lambda x: x.uniform_(0, 1), lambda x: x.uniform_(2, 1)),
    "uniform_ out of float": (_zeros(4), lambda x: x.uniform_(0, 1), lambda x: x.uniform_(0, 1e39)),
    "uniform_ complex": (_zeros(4, dtype=torch.complex64), lambda x: x.uniform_(0, 1), lambda x: x.uniform_(2, 1)),
    "log_normal_ std": (_zeros(4), lambda x: x.log_normal_(0, 1), lambda x: x.log_normal_(0, 0)),
    "exponential_ lambd": (_zeros(4), lambda x: x.exponential_(1), lambda x: x.exponential_(float("nan"))),
    "geometric_ p": (_zeros(4), lambda x: x.geometric_(0.5), lambda x: x.geometric_(1.0)),
    "cauchy_ sigma": (_zeros(4), lambda x: x.cauchy_(0, 1), lambda x: x.cauchy_(0, -1)),
    "cauchy_ integer": (_zeros(4, dtype=torch.int32), lambda x: x.fill_(1), lambda x: x.cauchy_()),
    "bernoulli_ p": (_zeros(4), lambda x: x.bernoulli_(0.5), lambda x: x.bernoulli_(1.5)),
    "random_ from >= to": (_zeros(4), lambda x: x.random_(0, 5), lambda x: x.random_(5, 5)),
    "random_ past int8": (_zeros(4, dtype=torch.int8), lambda x: x.random_(0, 100), lambda x: x.random_(0, 1000)),
    "cummax 0-d dim": (_zeros(), lambda x: torch.cummax(x, 0), lambda x: torch.cummax(x, 2)),
    "cummin 0-d dim": (_zeros(), lambda x: torch.cummin(x, -1), lambda x: torch.cummin(x, 1)),
    "softshrink lambd": (_zeros(4), lambda x: F.softshrink(x, 0.5), lambda x: F.softshrink(x, float("nan"))),
    "softshrink lambd past float": (_zeros(4), lambda x: F.softshrink(x, 0.5), lambda x: F.softshrink(x, 1e39)),
    "renorm maxnorm": (_zeros(2, 3), lambda x: torch.renorm(x, 2, 0, 1.0), lambda x: torch.renorm(x, 2, 0, -1.0)),
    "renorm p": (_zeros(2, 3), lambda x: torch.renorm(x, 2, 0, 1.0), lambda x: torch.renorm(x, 0, 0, 1.0)),
    "smooth_l1_loss beta": (_zeros(3), lambda x: F.smooth_l1_loss(x, x, beta=1.0),
                            lambda x: F.smooth_l1_loss(x, x, beta=-1.0)),
    "multinomial no samples": (lambda dev: torch.ones(3, device=dev), lambda x: torch.multinomial(x, 1),
                               lambda x: torch.multinomial(x, 0)),
    "unfold negative padding": (_zeros(1, 1, 6, 6), lambda x: F.unfold(x, 2, padding=1),
                                lambda x: F.unfold(x, 2, padding=-1)),
    "index_reduce 0-d dim": (_zeros(), lambda x: x.index_reduce(0, torch.tensor([0], device=x.device), x.reshape(1), "amax"),
                             lambda x: x.index_reduce(2, torch.tensor([0], device=x.device), x.reshape(1), "amax")),
}


@pytest.mark.parametrize("name", list(CPU_ONLY_CHECKS))
def test_checks_only_the_cpu_kernel_makes_after_a_valid_call(name):
    make, valid, bad = CPU_ONLY_CHECKS[name]
    with pytest.raises(Exception) as cpu:
        bad(make("cpu"))
    x = make("tpu")
    valid(x)  # builds (and caches) the program the bad call would reuse
    torch.tpu.synchronize()
    with pytest.raises(type(cpu.value)) as tpu:
        bad(x)
        torch.tpu.synchronize()
    assert type(tpu.value) is type(cpu.value)
    assert str(cpu.value).splitlines()[0] in str(tpu.value), (tpu.value, cpu.value)
    still_usable()


def test_cpu_argument_checks_leave_the_cpu_generator_alone():
    # asking the CPU kernel must not draw from the CPU's default generator
    state = torch.get_rng_state()
    torch.zeros(5, device="tpu").normal_(0, 3.25)
    torch.zeros(5, device="tpu").random_(0, 17)
    assert torch.equal(state, torch.get_rng_state())


@pytest.mark.parametrize("op", [torch.cummax, torch.cummin])
def test_empty_cummax_checks_no_dim_like_the_cpu(op):
    # the CPU returns an empty cummax/cummin whatever its dim (the fuzz found
    # tpu raising IndexError once the dim was checked for 0-d tensors)
    for shape in [(0,), (0, 3)]:
        want = op(torch.zeros(shape), 64)
        got = op(torch.zeros(shape, device="tpu"), 64)
        assert got.values.shape == want.values.shape and got.indices.dtype == want.indices.dtype


@pytest.mark.parametrize("inputs,out_dtype", [
    ((torch.float32,), torch.int64), ((torch.float32,), torch.bool), ((torch.complex64,), torch.float32),
    ((torch.float32, torch.int64), torch.float64), ((torch.int32,), torch.int64)], ids=str)
def test_cat_into_an_out_it_cannot_cast_to_like_the_cpu(inputs, out_dtype):
    """The CPU's TypeError, in its words (tpu's was the meta kernel's RuntimeError);
    casts it allows compute the CPU's values."""
    def call(out, *ts):
        return torch.cat(ts, out=out)
    args = [torch.empty(0, dtype=out_dtype)] + [torch.arange(3).to(d) for d in inputs]
    raised = same_outcome(call, *args)
    if raised:
        assert raised[1] == raised[0]


def test_multinomial_of_integers_raises_like_the_cpu():
    msg = raises_like_cpu(lambda p: torch.multinomial(p, 1), torch.ones(3, dtype=torch.int64))
    assert msg.endswith("multinomial only supports floating-point dtypes for input, got: Long"), msg
    still_usable()
