"""Backend bugs the fuzzer found that are still open (torch_tpu/fuzz/known.py
KNOWN_BUGS), each as a minimal repro that FAILS until the bug is fixed.

They are deliberately not marked xfail: a red test per open bug. When one
passes, delete its KNOWN_BUGS entry (the fuzz suite then checks that class of
draws like any other) and move the test to test_regressions.py as
test_<name>.
"""
import torch

T = "tpu"


# -- crashes: none open (fixed ones are in test_regressions.py) ------------

# -- wrong values ---------------------------------------------------------

# -- exception types ------------------------------------------------------

def test_known_bug_dim_error_type(assert_parity):
    assert_parity({
        "_softmax dim 5": lambda d: torch.ops.aten._softmax(torch.ones(2, device=d), 5, False),
        "median.dim of an empty dim": lambda d: torch.ones(0, 2, device=d).median(0),
        "min.dim of an empty dim": lambda d: torch.ones(0, 2, device=d).min(0),
    })


def test_known_bug_raises_where_cpu_computes(assert_parity):
    x = lambda d: torch.arange(4.0, device=d)  # noqa: E731
    assert_parity({
        "nansum(dim=[])": lambda d: torch.ops.aten.nansum(x(d), []),
        "native_layer_norm_backward 1-D": lambda d: torch.ops.aten.native_layer_norm_backward(
            x(d), x(d), [4], torch.tensor([1.5], device=d), torch.tensor([0.9], device=d),
            torch.ones(4, device=d), None, [True, True, False]),
        "cummin(dim=64) of an empty tensor": lambda d: torch.cummin(torch.zeros(1, 0, device=d), 64),
        "channel_shuffle of an overlapping view": lambda d: torch.ops.aten.channel_shuffle(
            torch.arange(8.0, device=d).as_strided((1, 2, 3, 3), (0, 3, 1, 1)), 2),
        "frexp float64": lambda d: torch.frexp(torch.tensor([3.0], dtype=torch.float64, device=d)),
        "linalg_lu(pivot=False) of 0x0": lambda d: torch.linalg.lu(torch.zeros(0, 0, device=d), pivot=False),
        "masked_fill_ of bool with a complex value": lambda d: torch.ones(1, dtype=torch.bool, device=d)
        .masked_fill_(torch.tensor([False], device=d), 1.5 - 0.5j),
        "index_put.out with [None]": lambda d: torch.ops.aten.index_put.out(
            torch.zeros(0, 2, device=d), [None], torch.zeros(0, 2, device=d), out=torch.empty(0, device=d)),
        "batch norm functional f16, eval": lambda d: torch.ops.aten._native_batch_norm_legit_functional(
            torch.ones(2, 3, dtype=torch.float16, device=d), None, None, torch.zeros(3, dtype=torch.float16,
                                                                                     device=d),
            torch.ones(3, dtype=torch.float16, device=d), False, 0.1, 1e-5)[0],
        "convolution_backward, bias_sizes None": lambda d: torch.ops.aten.convolution_backward(
            torch.ones(1, 1, 2, device=d), torch.ones(1, 1, 3, device=d), torch.ones(1, 1, 2, device=d), None,
            [1], [0], [1], False, [0], 1, [True, True, True]),
        "avg_pool3d_backward int64": lambda d: torch.ops.aten.avg_pool3d_backward(
            torch.ones(1, 1, 1, 1, 1, dtype=torch.long, device=d), torch.ones(1, 1, 2, 2, 2, dtype=torch.long,
                                                                                 device=d),
            [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None),
    })


def test_known_bug_out_dtype_not_checked(assert_parity):
    x = lambda d: torch.tensor([[3.0, 1.0, 2.0]], device=d)  # noqa: E731
    assert_parity({
        "sort(out= int32 indices)": lambda d: torch.sort(
            x(d), out=(torch.empty(0, device=d), torch.empty(0, dtype=torch.int32, device=d))),
        "kthvalue(out= int32 indices)": lambda d: torch.kthvalue(
            x(d), 1, out=(torch.empty(0, device=d), torch.empty(0, dtype=torch.int32, device=d))),
        "all(dim, out= int64)": lambda d: torch.all(x(d), 1, out=torch.empty(0, dtype=torch.long, device=d)),
        "take(out= another dtype)": lambda d: torch.take(x(d), torch.tensor([0], device=d),
                                                         out=torch.empty(0, dtype=torch.float64, device=d)),
    })


def test_known_bug_mixed_dtypes_not_checked(assert_parity):
    assert_parity({
        "col2im.out f32 into f64": lambda d: torch.ops.aten.col2im.out(
            torch.ones(1, 4, 9, device=d), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1],
            out=torch.empty(0, dtype=torch.float64, device=d)),
        "max_pool3d_with_indices.out f32 into f64": lambda d: torch.ops.aten.max_pool3d_with_indices.out(
            torch.ones(1, 1, 4, 4, 4, device=d), [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False,
            out=torch.empty(0, dtype=torch.float64, device=d), indices=torch.empty(0, dtype=torch.long, device=d)),
    })


def test_known_bug_check_order(assert_parity):
    assert_parity({"index_put_: bad value shape and an index out of range": lambda d: torch.zeros(0, device=d)
                   .index_put_([torch.tensor([1, 0], device=d)], torch.ones(1, 0, device=d))})


