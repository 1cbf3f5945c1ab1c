"""Differences from the CPU the fuzzer finds that remain, each with its reason.

ACCEPTED: by design (documented in docs/reliability.md, "Fuzzing"); a draw
matching one counts as parity. KNOWN_BUGS: backend bugs not fixed yet; each
has a failing `test_known_bug_<name>` in tests/fuzz/known_bugs.py, so the
fuzz suite itself stays green while the bug stays visible. Any other
non-parity draw fails the CI suite.

An entry matches a record (dict: target, outcome, variant, detail) when its
op regex matches the target (full match), its outcome equals the record's and
its detail regex is found in the record's detail.
"""
import re
from dataclasses import dataclass

from . import check as ck


@dataclass(frozen=True)
class Entry:
    name: str
    ops: str          # regex, full match on the target ("add.Tensor")
    outcome: object   # a check.* outcome, or a tuple of them
    detail: str       # regex searched in the detail
    reason: str
    call: str = ""    # regex searched in the call's description

    def matches(self, rec):
        outcomes = self.outcome if isinstance(self.outcome, tuple) else (self.outcome,)
        return (rec["outcome"] in outcomes and re.fullmatch(self.ops, rec["target"]) is not None
                and re.search(self.detail, rec.get("detail") or "") is not None
                and re.search(self.call, rec.get("call") or "") is not None)


ACCEPTED = [
    Entry("meta-kernel exception type", ".*", ck.EXC_TYPE, r"\[meta kernel raises the same\]",
          "Both reject the call. The backend checks arguments with PyTorch's meta kernels (what device='meta' "
          "runs); where one is written in Python or checks in another order, its exception type is not the CPU "
          "kernel's. tpu raises exactly what the meta kernel raises."),
    Entry("meta kernel rejects", ".*", ck.TPU_RAISED, r"\[meta kernel raises the same\]",
          "PyTorch's meta kernel rejects a call its CPU kernel accepts (a stricter check, or a bug in the meta "
          "registration such as an out= overload it cannot take); tpu raises exactly what device='meta' raises."),
    Entry("dtype the CPU kernel lacks", ".*", ck.CPU_RAISED,
          r"^CPU NotImplementedError: .*not implemented for '|^CPU RuntimeError: Expected both inputs to be Half, "
          r"Float or Double|^CPU RuntimeError: softmax with half to float conversion is not supported on CPU|"
          r"^CPU RuntimeError: MKL FFT doesn't support tensors of type|^CPU RuntimeError: MKL FFT error|"
          r"^CPU RuntimeError: itensor_view_from_dense expects|does not support bool dtypes on CPU|could not create a "
          r"primitive descriptor|Unsupported dtype",
          "The CPU kernel has no implementation for this dtype (or half_to_float softmax); the tpu lowering "
          "computes it, as CUDA does."),
    Entry("complex32", ".*", (ck.EXC_TYPE, ck.TPU_RAISED), r"dtype ComplexHalf is not supported on the tpu device",
          "Both reject complex32; tpu rejects it up front with a TypeError (README: complex32)."),
    Entry("norm statistics dtype", r"(native_layer_norm|native_group_norm|_native_batch_norm_legit|native_batch_norm|"
          r"_batch_norm_with_update|_batch_norm_no_update).*", ck.CPU_RAISED, r"Expected out tensor to have dtype",
          "Mean/rstd of float16/bfloat16 norms are float32 on tpu, as on CUDA and in the meta kernels; the CPU "
          "keeps the input dtype, so an out= of the meta dtype is rejected by the CPU only."),
    Entry("CPU needs contiguous tensors", ".*", ck.CPU_RAISED, r"must be contiguous|is_contiguous",
          "The CPU kernel only takes contiguous tensors here; tpu reads and writes any strides."),
    Entry("CPU max.unary_out of an empty tensor", r"max", ck.TPU_RAISED, r"Expected reduction dim to be specified",
          "The CPU's max.unary_out returns -inf for an empty tensor, skipping the check max() makes; tpu raises "
          "what max() raises."),
    Entry("native_dropout mask dtype", r"native_dropout", ck.MISMATCH, r"out\[1\]: dtype torch.bool, CPU gives",
          "native_dropout(train=False): the CPU returns the mask in the input's dtype, tpu bool as the meta "
          "kernel and CUDA do."),
    Entry("internal helper without checks", r"_cholesky_solve_helper", ck.TPU_RAISED, r"compiling .* failed",
          "An internal helper that trusts its caller (torch.cholesky_solve checks the shapes first): with shapes "
          "that do not fit, the CPU kernel returns unspecified values and the tpu program fails to compile."),
    Entry("softmax backward to a half input_dtype", r"_(log_)?softmax_backward_data", ck.MISMATCH, "",
          "The backward of a half_to_float softmax (float32 grad, input_dtype half): tpu returns input_dtype, as "
          "CUDA and the meta kernel do; the CPU, which has no half_to_float softmax, keeps float32.",
          call=r"float32\[.*torch\.(bfloat16|float16)"),
    Entry("CPU setStorage on stride-0 tensors", ".*", ck.EXC_TYPE, r"\| CPU RuntimeError: setStorage: sizes",
          "The CPU kernel fails on a stride-0 (expanded) input with a setStorage error before checking the "
          "indices; tpu reports the index error."),
    Entry("CPU addmv with nothing contracted", r"addmv", ck.MISMATCH, r"out: shape \[\d+\], CPU gives \[\]",
          "addmv of a 0-d self and an (n, 0) matrix: the CPU returns self unbroadcast (shape []), tpu the "
          "broadcast beta * self of shape [n] that a non-empty product gives."),
    Entry("CPU antialiased resize to one column", r"_upsample_(bilinear|bicubic)2d_aa(\.out)?", ck.MISMATCH, "",
          "torch's CPU forward kernel repeats the first row down an output one column wide whose height changes; "
          "tpu computes what the CPU gives for the transposed problem (tests/ops/test_upsample_antialias.py).",
          call=r", \[\d+, 1\],"),
    Entry("LAPACK convergence", r"_linalg_(eigh|svd)", ck.CPU_RAISED, r"failed to converge because the input matrix "
          r"is ill-conditioned", "LAPACK gives up on this matrix (for eigh one holding NaN, for svd one with an "
          "infinite entry); XLA's Jacobi eigh returns a result, and svd returns NaN there."),
]

# Backend bugs still open, each with tests/fuzz/known_bugs.py::test_known_bug_<name with _ for ->.
# Fixed ones leave this list; their tests move to tests/fuzz/test_regressions.py.
KNOWN_BUGS = [
    Entry("dim-error-type", ".*", ck.EXC_TYPE,
          r"^tpu RuntimeError .*(dimension out of range|empty input|Expected reduction dim|hlo::Builder).* \| CPU "
          r"IndexError",
          "The backend's own dim checks raise RuntimeError where the CPU raises IndexError."),
    Entry("raises-where-cpu-computes", ".*", ck.TPU_RAISED,
          r"compiling .* failed|hlo::Builder|lowering result|lowering handles|overlapping strides|view size is not "
          r"compatible|LU without pivoting|not implemented for u?i\d+|could not convert to type|_copy_from_and_resize|"
          r"no index tensor|new_empty\(\): argument 'size'|does not match the output's|boolean mask mixed with "
          r"other index tensors|expected scalar type .* but found|TensorAccessor expected|index out of range in "
          r"self|empty input",
          "tpu raises on a call the CPU computes (empty shapes, dim=[], a dtype, overlapping inputs, ...)."),
    Entry("out-dtype-not-checked", ".*", ck.CPU_RAISED,
          r"Expected out tensor to have|output indices must be of scalar type|only supports bool tensor for result|"
          r"'indices' to have scalar type|can't be cast to the desired output type|output tensor's dtype is wrong|"
          r"self and out expected to have the same dtype|expected scalar_type .* but found|dtype of out: .* should be "
          r"same as input|expects mantissa to have dtype|expects exponent to have int dtype|for indices output|to have "
          r"the same type as tensor for argument|self and result must have the same scalar type|for values output",
          "Ops outside TensorIterator take an out= of another dtype (and cast) where the CPU requires the exact one."),
    Entry("mixed-dtypes-not-checked", ".*", ck.CPU_RAISED, r"Found dtype .* but expected|expected scalar type .* but "
          r"found", "Ops whose CPU kernel requires equal dtypes (loss backward, prelu, padding backward) promote."),
    Entry("check-order", r"(_index_put_impl|index_put|put|index_select|index_reduce|_softmax|native_.*_norm_backward|"
          r"bitwise_\w+(\.\w+)?|nextafter|rrelu_with_noise_?|adaptive_max_pool[23]d_backward|leaky_relu_backward)",
          ck.EXC_TYPE, "",
          "Two faults in one call: the backend reports another one first (another exception type)."),
]


def classify(rec):
    """'accepted:<name>', 'known bug:<name>' or 'new'."""
    for e in ACCEPTED:
        if e.matches(rec):
            return f"accepted:{e.name}"
    for e in KNOWN_BUGS:
        if e.matches(rec):
            return f"known bug:{e.name}"
    return "new"


def is_failure(rec):
    """Whether this record fails the CI suite (anything not accepted or a known bug)."""
    return classify(rec) == "new" or rec["outcome"] in (ck.HARNESS,)
