"""A bounded, deterministic slice of the OpInfo conformance sweep
(python -m torch_tpu.conformance): a few dozen ops across the op families,
their first samples, forward and backward. Every (op, dtype) here passes
natively today; a regression (mismatch, error or CPU fallback) fails the test.
The sweep runs in-process here (no worker subprocesses): a crash fails the run.
"""
import pytest
import torch

import torch_tpu  # noqa: F401
from torch_tpu.conformance import report, runner

MAX_SAMPLES = 2

# (OpInfo full name, dtypes): one or two per family, floating plus an integer
# or bool dtype where the family takes one.
SLICE = {
    # elementwise arithmetic, division, select
    "add": ["float32", "int64"], "mul": ["bfloat16", "bool"], "sub": ["float32"],
    "div.no_rounding_mode": ["float32"], "remainder": ["int64"], "where": ["float32"],
    "clamp": ["float32"], "maximum": ["int64"],
    # unary math
    "exp": ["float32", "bfloat16"], "sin": ["float32"], "rsqrt": ["float32"], "abs": ["int64"],
    "sigmoid": ["float32"], "nn.functional.gelu": ["float32"], "logaddexp": ["float32"], "xlogy": ["bfloat16"],
    "copysign": ["float32"], "vdot": ["float32"],
    # comparison / logical
    "eq": ["int64", "bool"], "lt": ["float32"], "logical_and": ["bool"], "signbit": ["bfloat16"],
    # reductions, scans
    "sum": ["float32", "int64"], "mean": ["float32"], "amax": ["float32"], "argmax": ["float32"],
    "cumsum": ["float32"], "logsumexp": ["float32"], "aminmax": ["int64"], "count_nonzero": ["bool"],
    # softmax, normalization, matmul
    "softmax": ["float32"], "nn.functional.rms_norm": ["float32"], "mm": ["float32"],
    "bmm": ["float32"], "addmm": ["float32"],
    # shape, views, indexing, scatter/gather, sorting, factories
    "cat": ["float32", "bool"], "permute": ["float32"], "reshape": ["int64"], "transpose": ["float32"],
    "index_select": ["float32"], "gather": ["float32"], "scatter_add": ["float32"],
    "sort": ["float32"], "topk": ["float32"], "zeros_like": ["float32"], "full_like": ["int64"],
    "nn.functional.embedding": ["float32"],
    # image-model NN families
    "nn.functional.conv2d": ["float32", "bfloat16"], "nn.functional.conv_transpose2d": ["float32"],
    "nn.functional.max_pool2d": ["float32"], "nn.functional.avg_pool2d": ["float32"],
    "nn.functional.adaptive_avg_pool2d": ["float32"], "nn.functional.batch_norm": ["float32"],
    "nn.functional.group_norm": ["bfloat16"], "nn.functional.interpolate.bilinear": ["float32"],
    "nn.functional.interpolate.nearest": ["bfloat16"], "nn.functional.pad.reflect": ["float32"],
    "nn.functional.unfold": ["float32"], "nn.functional.max_unpool2d": ["float32"],
    # complex and FFT, linear algebra, special functions, data-dependent sizes
    "fft.fft": ["float32"], "fft.rfft": ["int64"], "fft.irfft": ["float32"], "fft.fft2": ["float32"],
    "cfloat": ["bfloat16"], "polar": ["float32"],
    "linalg.qr": ["float32"], "linalg.eigh": ["float32"], "linalg.svd": ["float32"], "linalg.inv": ["float32"],
    "linalg.cholesky": ["float32"],
    "special.bessel_j0": ["float32"], "special.ndtri": ["float32"], "special.chebyshev_polynomial_t": ["float32"],
    "special.i0e": ["bfloat16"], "polygamma.polygamma_n_1": ["float32"], "angle": ["int64"],
    "unique": ["float32", "bool"],
}


# The dtypes beyond float32/bfloat16/int64/bool (float16, float64, complex,
# the narrow integers), on ops whose case passes in the full sweep.
MORE_DTYPES = {
    "add": ["complex64", "int8"], "mul": ["float16", "uint8"], "sub": ["int16", "complex128"],
    "div.no_rounding_mode": ["float64", "complex64"], "exp": ["float16", "complex64"], "sin": ["float64"],
    "sum": ["int32", "float16"], "mean": ["float64"], "cumsum": ["int32"], "mm": ["float64", "complex128"], "bmm": ["float16"],
    "cat": ["uint8", "complex64"], "sort": ["int16", "float64"], "abs": ["int8", "complex64"],
    "eq": ["uint8", "float16"], "where": ["int32", "complex64"], "softmax": ["float64"],
    # (float16 convolution: the CPU's own result depends on its ISA -- oneDNN's
    # AVX-512 kernels round differently from AVX2's -- so it is checked against
    # the exactly rounded value in tests/ops/test_convolution.py instead.)
    "nn.functional.conv2d": ["float64"], "fft.fft": ["complex64", "float64"], "linalg.qr": ["float64", "complex128"],
    "index_select": ["int8"], "gather": ["uint8"], "amax": ["float16", "int16"], "reshape": ["complex128"],
    "remainder": ["int8"], "topk": ["int32"],
    # complex math, reductions, products, indexing and linear algebra
    "asin": ["complex128"], "sqrt": ["complex64"], "sgn": ["complex64", "float32"],
    "var": ["complex64"], "prod": ["complex128"], "linalg.vector_norm": ["complex64"],
    "vdot": ["complex64"], "index_put": ["complex64"], "randn": ["complex64"],
    "linalg.solve": ["complex64"], "linalg.det": ["complex128"], "linalg.cholesky": ["complex64"],
    "linalg.inv": ["complex128"], "logsumexp": ["complex64"], "linalg.svd": ["complex64"],
    "linalg.eigh": ["complex128"], "geqrf": ["float32", "complex64"], "ormqr": ["float64"],
    # hash_tensor (float64 bit patterns without float64), layer norm statistics' dtype
    "hash_tensor": ["float32", "int8"], "native_layer_norm": ["bfloat16"],
    # the lowerings that replaced the last CPU fallbacks, and the CPU's rounding
    "linalg.eig": ["float64", "complex64"], "linalg.eigvals": ["float32"],
    "linalg.lstsq": ["float32", "complex128"], "linalg.lstsq.grad_oriented": ["float64"],
    "linalg.ldl_factor_ex": ["float32", "complex64"], "linalg.ldl_solve": ["float64", "complex128"],
    "igamma": ["float32", "bfloat16"], "igammac": ["float64", "float16"],
    "logcumsumexp": ["complex64", "float32"],
    "nn.functional.embedding_bag": ["float16", "float32"], "nn.functional.ctc_loss": ["float32"],
    "cdist": ["float32"], "nn.functional.pdist": ["float64"], "histogram": ["float32"], "histogramdd": ["float64"],
    "_upsample_bilinear2d_aa": ["float32", "uint8"], "nn.functional.interpolate.bilinear": ["uint8"],
    "nn.functional.interpolate.bicubic": ["uint8"], "addbmm": ["float32", "bfloat16"], "addr": ["float16"],
    "linalg.cross": ["float16"], "frexp": ["float64"],
}
for _op, _dtypes in MORE_DTYPES.items():
    SLICE[_op] = SLICE.get(_op, []) + _dtypes


@pytest.fixture(scope="module")
def op_db():
    return runner.load_op_db()


@pytest.mark.parametrize("name,dtype", [(op, d) for op, ds in SLICE.items() for d in ds],
                         ids=lambda x: str(x))
def test_slice_case_passes(op_db, name, dtype):
    op = op_db[name]
    assert torch.__dict__[dtype] in op.supported_dtypes("cpu")
    result = runner.run_case(op, dtype, MAX_SAMPLES)
    assert result["samples"], "no samples ran"
    assert result["status"] == runner.PASS, f"{name} {dtype}: {result['status']}: {result['reason']}"


def test_summary_counts_fallback_and_cpu_errors():
    """A fallback is a failure; a case the CPU rejects is counted neither way."""
    ok = {"status": runner.PASS, "reason": None, "fallbacks": []}
    fell = {"status": runner.FALLBACK, "reason": "fell back to CPU: foo", "fallbacks": ["foo"]}
    cpu = {"status": runner.CPU_ERROR, "reason": "RuntimeError: x", "fallbacks": []}
    cases = [runner.summarize("a", "float32", [ok, ok]), runner.summarize("b", "float32", [ok, fell]),
             runner.summarize("c", "float32", [cpu, cpu]), runner.summarize("d", "float32", [ok, cpu])]
    assert [c["status"] for c in cases] == [runner.PASS, runner.FALLBACK, runner.CPU_ERROR, runner.PASS]
    assert report.summary_line(cases) == "2 passed, 1 failed"
    assert "foo" in report.render(cases, {"command": "x", "date": "d", "torch": "t", "torch_tpu": "v",
                                          "dtypes": ["float32"], "max_samples": 1, "backward": True,
                                          "jobs": 1, "case_timeout_s": 1, "seconds": 0, "n_ops": 4})


class _FakeOp:
    """An OpInfo stand-in whose tpu result is off by one (or raises), to prove detection."""
    full_name = "fake"
    supports_autograd = True

    def __init__(self, fail):
        self.fail = fail

    def __call__(self, x):
        if x.device.type == "tpu" and self.fail == "raise":
            raise ValueError("boom")
        return x * 2 + (1 if x.device.type == "tpu" and self.fail == "value" else 0)

    def sample_inputs(self, device, dtype, requires_grad=False):
        from torch.testing._internal.opinfo.core import SampleInput
        yield SampleInput(torch.arange(6, dtype=dtype).reshape(2, 3).t().requires_grad_(requires_grad))


@pytest.mark.parametrize("fail,status", [(None, runner.PASS), ("value", runner.MISMATCH),
                                         ("raise", runner.ERROR)])
def test_runner_detects_mismatch_and_error(fail, status):
    result = runner.run_case(_FakeOp(fail), "float32", MAX_SAMPLES)
    assert result["status"] == status, result
    if status == runner.MISMATCH:
        assert "max abs 1" in result["reason"]


def test_report_gives_the_pass_rate_per_dtype_family():
    ok = {"status": runner.PASS, "reason": None, "fallbacks": []}
    bad = {"status": runner.MISMATCH, "reason": "values differ", "fallbacks": []}
    cases = [runner.summarize("a", "float16", [ok]), runner.summarize("b", "float64", [bad]),
             runner.summarize("a", "int8", [ok]), runner.summarize("a", "uint8", [ok]),
             runner.summarize("a", "complex64", [bad]), runner.summarize("a", "bool", [ok])]
    assert report.family_summary(cases) == {"bool": 100.0, "complex": 0.0, "floating": 50.0,
                                            "signed integer": 100.0, "unsigned integer": 100.0}
    text = report.render(cases, {"command": "x", "date": "d", "torch": "t", "torch_tpu": "v", "dtypes": ["float16"],
                                 "max_samples": 1, "backward": True, "jobs": 1, "case_timeout_s": 1,
                                 "seconds": 1, "n_ops": 2})
    assert "| **floating** | all | **1** | **1** | **50.0%** |" in text
    assert set(runner.DEFAULT_DTYPES) >= {"float16", "float64", "complex64", "complex128", "int8", "int16",
                                           "int32", "int64", "uint8", "bool", "bfloat16", "float32"}
