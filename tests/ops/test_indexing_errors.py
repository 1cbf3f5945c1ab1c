"""Advanced-indexing errors and edge cases against the CPU: indices the host
knows (Python ints and lists, CPU index tensors, tensors just built from host
values) raise the CPU's IndexError before the call returns; exception types,
boolean scalars mixed with index lists, empty-mask writes and the uint8-mask
deprecation warning all equal the CPU's."""
import warnings

import pytest
import torch

from harness import check, check_inplace, make, to_tpu

UINT8_WARNING = "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead"


def raises_at_once_like_cpu(fn, *args):
    """fn on tpu raises the CPU's exception (type and message) from the call
    itself: nothing is synchronized, so a deferred device-side error fails this."""
    with pytest.raises(Exception) as cpu:
        fn(*args)
    with pytest.raises(Exception) as tpu:
        fn(*to_tpu(list(args)))
    assert type(tpu.value) is type(cpu.value), (tpu.value, cpu.value)
    assert str(tpu.value) == str(cpu.value)
    torch.tpu.synchronize()  # and nothing was left pending
    return tpu.value


def dev_tensor(values, like):
    """An index tensor built from host values on `like`'s device (x[[0, 5]] makes one)."""
    return torch.tensor(values, device=like.device)


# --- 1. host-known out-of-range indices: IndexError at once --------------------

HOST_INDEX_READS = {
    "list": lambda t: t[[0, 5]],
    "negative_list": lambda t: t[[-4]],
    "nested_list": lambda t: t[[[0, 1], [2, 5]],],
    "cpu_tensor": lambda t: t[torch.tensor([5])],
    "cpu_tensor_int32": lambda t: t[torch.tensor([1, -7], dtype=torch.int32)],
    "cpu_tensor_noncontiguous": lambda t: t[torch.tensor([[0, 5], [1, 2]]).t()],
    "device_tensor_from_host": lambda t: t[dev_tensor([2, 3], t)],
    "device_tensor_view": lambda t: t[dev_tensor([[0, 1], [5, 2]], t).t()],
    "second_dim": lambda t: t[[0, 1], [0, 9]],
    "second_dim_after_slice": lambda t: t[:, [9]],
    "first_bad_element_is_reported": lambda t: t[[0, 5], [7, 0]],
    "with_mask": lambda t: t[torch.tensor([True, False, True]), [7, 1]],
    "int": lambda t: t[5],
    "int_second_dim": lambda t: t[:, 7],
    "negative_int": lambda t: t[-4],
    "transposed_self": lambda t: t.t()[[0, 4]],
    "sliced_self": lambda t: t[1:][[2]],
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.bool], ids=str)
@pytest.mark.parametrize("case", sorted(HOST_INDEX_READS), ids=str)
def test_host_known_out_of_range_read(case, dtype):
    e = raises_at_once_like_cpu(HOST_INDEX_READS[case], make((3, 4), dtype))
    assert isinstance(e, IndexError)


@pytest.mark.parametrize("accumulate", [False, True])
def test_host_known_out_of_range_write(accumulate):
    x = make((3, 4), torch.float32)

    def put(t, i):
        return t.index_put_((i,), torch.tensor(1.0, device=t.device), accumulate=accumulate)

    def setitem(t):
        t[[0, 5]] = 1.0

    raises_at_once_like_cpu(put, x, torch.tensor([0, 5]))
    raises_at_once_like_cpu(lambda t: put(t, dev_tensor([-4], t)), x)
    raises_at_once_like_cpu(lambda t, v: t.index_put_((torch.tensor([1]), torch.tensor([4])), v, accumulate), x, x[0, :1].clone())
    raises_at_once_like_cpu(setitem, x)
    before = x.clone()
    with pytest.raises(IndexError):
        setitem(y := to_tpu(x.clone()))
    torch.testing.assert_close(y.cpu(), before)  # a rejected write writes nothing


def test_host_known_out_of_range_empty_and_0d():
    raises_at_once_like_cpu(lambda t: t[[0]], torch.ones(0))
    raises_at_once_like_cpu(lambda t: t[[0]], torch.ones(0, 3))
    raises_at_once_like_cpu(lambda t: t[[0], [5]], torch.ones(0, 3))
    raises_at_once_like_cpu(lambda t: t[[0], [5]], torch.ones(3, 0))
    check(lambda t: t[:, [3]], torch.ones(0, 3))  # an empty result reads, and checks, no index
    check(lambda t: t[[5]], torch.ones(3, 0))
    check(lambda t: t[[5], :, [1]], torch.ones(3, 0, 2))
    check_inplace(lambda t: t.index_put_((torch.tensor([5]),), torch.tensor(1.0)), torch.ones(3, 0))
    raises_at_once_like_cpu(lambda t: t[0], torch.ones(0, 3))
    raises_at_once_like_cpu(lambda t: t[[0]], torch.tensor(1.0))
    raises_at_once_like_cpu(lambda t: t[0], torch.tensor(1.0))
    check(lambda t: t[[]], torch.ones(0))
    check(lambda t: t[torch.tensor([], dtype=torch.int64)], torch.ones(0, 3))


def test_in_range_host_indices_still_work():
    x = make((3, 4), torch.float32, noncontiguous=True)
    check(lambda t: t[[0, 2, -1]], x)
    check(lambda t: t[torch.tensor([[2, 0], [-3, 1]])], x)
    check(lambda t: t[dev_tensor([1, -1], t), dev_tensor([3, -4], t)], x)
    check_inplace(lambda t: t.index_put_((torch.tensor([0, 2]),), torch.tensor(5.0, device=t.device)), x)


def test_device_indices_written_on_the_device_are_not_taken_as_host_known():
    x = make((3, 4), torch.float32)
    t = x.to("tpu")
    i = dev_tensor([5], t)
    i.sub_(5)  # now [0]: the values uploaded from the host no longer hold
    torch.testing.assert_close(t[i].cpu(), x[[0]])
    j = dev_tensor([0], t)
    j.add_(5)  # [5], computed on the device: reported asynchronously, as on CUDA
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        t[j]
        torch.tpu.synchronize()
    j.copy_(torch.tensor([7]))  # uploaded again from the host: known again
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 3"):
        t[j]


# --- 2. exception types of indexing errors ------------------------------------------

def test_indexing_error_types_and_messages():
    x = make((3, 4), torch.float32)
    raises_at_once_like_cpu(lambda t: t[torch.tensor([0.0])], x)
    raises_at_once_like_cpu(lambda t: torch.ops.aten.index(t, [torch.tensor([0])] * 3), x)
    raises_at_once_like_cpu(lambda t: t[torch.tensor([True, False])], x)
    raises_at_once_like_cpu(lambda t: t[dev_tensor([True, False], t)], x)
    raises_at_once_like_cpu(lambda t: t[:, torch.ones(4, 4, dtype=torch.bool)], x)
    raises_at_once_like_cpu(lambda t, v: t.index_put_((torch.tensor([True, False]),), v), x, x[0].clone())
    raises_at_once_like_cpu(lambda t: t[[0, 1], [0, 1, 2]], x)
    raises_at_once_like_cpu(lambda t: t.index_put_((torch.tensor([0, 1]),), torch.ones(3, device=t.device)), x)
    raises_at_once_like_cpu(lambda t: torch.ops.aten.index_put_(t, [torch.tensor([0])] * 3, t[0, 0]), x)


# --- 3. index_put_ with a mask that selects nothing ----------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.bool], ids=str)
@pytest.mark.parametrize("accumulate", [True, False])
def test_index_put_empty_mask(dtype, accumulate):
    x = make((3, 4), dtype, 1)
    none = torch.zeros(3, dtype=torch.bool)
    for on_device in (False, True):  # a CPU mask, or one on the tensor's device
        def mask(t):
            return none.to(t.device) if on_device else none
        check_inplace(lambda t: t.index_put_((mask(t),), t[mask(t)], accumulate=accumulate), x)
        check_inplace(lambda t: t.index_put_((mask(t),), torch.ones(0, 4, dtype=dtype, device=t.device), accumulate),
                      x)
    check_inplace(lambda t, m: t.index_put_((m,), t[m], accumulate=accumulate), x, torch.zeros(3, 4, dtype=torch.bool))
    check_inplace(lambda t, m: t.index_put_((m,), t[m], accumulate=accumulate), x.t(), torch.zeros(4, dtype=torch.bool))
    check_inplace(lambda t, m: t.index_put_((m,), t[m], accumulate=accumulate),
                  make((0, 4), dtype), torch.zeros(0, dtype=torch.bool))


def test_index_put_empty_values_with_a_non_empty_mask():
    x = make((3, 4), torch.float32)
    some = torch.tensor([True, False, True])
    # Host-known mask: the CPU's message at once.
    raises_at_once_like_cpu(lambda t: t.index_put_((some,), torch.ones(0, 4, device=t.device), accumulate=True), x)
    # A mask computed on the device: the same exception type, at the next sync.
    t = x.to("tpu")
    with pytest.raises(RuntimeError, match="shape mismatch: value tensor of shape \\[0, 4\\]"):
        t.index_put_((t[:, 0] > -100,), torch.ones(0, 4, device="tpu"), accumulate=True)
        torch.tpu.synchronize()


# --- 4. boolean scalars mixed with index lists ------------------------------------

BOOL_SCALAR_READS = {
    "true_list": lambda t: t[True, [0, 1]],
    "list_true": lambda t: t[[0, 1], True],
    "none_true_list": lambda t: t[None, True, [1]],
    "true_list_list": lambda t: t[True, [1], [2]],
    "list_true_list": lambda t: t[[1], True, [2]],
    "true_slice_list": lambda t: t[True, :, [3, 0]],
    "ellipsis_true_list": lambda t: t[..., True, [2]],
    "true_cpu_tensor": lambda t: t[True, torch.tensor([2, 0])],
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool], ids=str)
@pytest.mark.parametrize("case", sorted(BOOL_SCALAR_READS), ids=str)
def test_bool_scalar_with_index_list(case, dtype):
    check(BOOL_SCALAR_READS[case], make((3, 4), dtype, noncontiguous=True))


def test_bool_scalar_with_index_list_writes():
    x = make((3, 4), torch.float32)

    def put(key):
        def f(t):
            t[key] = 5.0
            return t
        return f

    check(put((True, [0, 1])), x)
    check(put(([2], True, [3])), x)
    raises_at_once_like_cpu(lambda t: t[[0, 1], False], x)
    raises_at_once_like_cpu(lambda t: t[False, [0, 1]], x)
    raises_at_once_like_cpu(put(([0, 1], False)), x)
    raises_at_once_like_cpu(put((False, [0, 1])), x)
    check(lambda t: t[False, [0]], make((3, 4), torch.float32))  # broadcasts: [0] with [1]


# --- 5. uint8 masks: deprecated, with the CPU's warning and result ----------------

UINT8_CASES = {
    "read": (lambda t, m: t[m], torch.tensor([1, 0, 1], dtype=torch.uint8)),
    "read_with_int": (lambda t, m: t[m, 1], torch.tensor([0, 1, 1], dtype=torch.uint8)),
    "read_2d": (lambda t, m: t[m], torch.tensor([[1, 0, 0, 1]] * 3, dtype=torch.uint8)),
    "read_after_slice": (lambda t, m: t[:, m], torch.tensor([0, 1, 1, 0], dtype=torch.uint8)),
    "put": (lambda t, m: t.clone().index_put_((m,), torch.ones(2, 4, dtype=t.dtype, device=t.device)),
            torch.tensor([1, 0, 1], dtype=torch.uint8)),
    "put_accumulate": (lambda t, m: t.clone().index_put_((m,), torch.ones(4, dtype=t.dtype, device=t.device), True),
                       torch.tensor([1, 1, 0], dtype=torch.uint8)),
}


@pytest.mark.parametrize("mask_on_tpu", [False, True], ids=["cpu_mask", "tpu_mask"])
@pytest.mark.parametrize("case", sorted(UINT8_CASES), ids=str)
def test_uint8_mask_warns_like_cpu(case, mask_on_tpu):
    fn, mask = UINT8_CASES[case]
    x = make((3, 4), torch.float32)
    with pytest.warns(UserWarning, match=UINT8_WARNING):
        expect = fn(x, mask)
    with pytest.warns(UserWarning, match=UINT8_WARNING) as record:
        got = fn(x.to("tpu"), mask.to("tpu") if mask_on_tpu else mask)
    assert sum(UINT8_WARNING in str(w.message) for w in record) == 1  # once per call, as on the CPU
    torch.testing.assert_close(got.cpu(), expect)


def test_bool_mask_does_not_warn():
    x = make((3, 4), torch.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(lambda t, m: t[m], x, torch.tensor([True, False, True]))
        check_inplace(lambda t, m: t.index_put_((m,), t[m] * 2), x, torch.tensor([True, False, True]))


# --- dtype checks of the index ops, like the CPU's (cache-order property test) ---

_F, _D = torch.float32, torch.float64
_IDX_DTYPE_CASES = {
    "index_add_self_f32_source_f64": lambda: (torch.index_add, torch.tensor(1.5), 0, torch.tensor([0]),
                                              torch.tensor(2.5, dtype=_D)),
    "index_add_self_f64_source_f32": lambda: (torch.index_add, torch.tensor(1.5, dtype=_D), 0, torch.tensor([0]),
                                              torch.tensor(2.5)),
    "index_add_float_index": lambda: (torch.index_add, torch.tensor(1.5), 0, torch.tensor([0.0]), torch.tensor(2.5)),
    "index_copy_self_f32_source_f64": lambda: (torch.index_copy, torch.tensor(1.5), 0, torch.tensor([0]),
                                               torch.tensor(2.5, dtype=_D)),
    "index_copy_self_f64_source_f32": lambda: (torch.index_copy, torch.tensor(1.5, dtype=_D), 0, torch.tensor([0]),
                                               torch.tensor(2.5)),
    "index_copy_int32_index": lambda: (torch.index_copy, torch.ones(3), 0, torch.tensor([0], dtype=torch.int32),
                                       torch.ones(1)),
    "index_select_float_index": lambda: (torch.index_select, torch.tensor(1.5), 0, torch.tensor(0.0)),
    "index_fill_float_index": lambda: (torch.index_fill, torch.tensor(1.5), 0, torch.tensor(0.0), -8.5),
    "index_fill_int32_index": lambda: (torch.index_fill, torch.ones(3), 0, torch.tensor([1], dtype=torch.int32), 2.0),
    "put_self_f64_source_f32": lambda: (torch.put, torch.tensor(1.5, dtype=_D), torch.tensor([0, 0, 0]),
                                        torch.ones(3), True),
    "put_0d_source": lambda: (torch.put, torch.ones(3, 3), torch.tensor([0, 1, 2]), torch.tensor(1.5), True),
    "put_0d_index": lambda: (torch.put, torch.ones(3, 3), torch.tensor(1), torch.ones(3), True),
    "put_int32_index": lambda: (torch.put, torch.ones(3, 3), torch.tensor([0, 1, 2], dtype=torch.int32),
                                torch.ones(3), False),
}
for _r in ["prod", "mean", "amax", "amin"]:
    _IDX_DTYPE_CASES[f"index_reduce_{_r}_self_f32_source_f64"] = lambda r=_r: (
        torch.index_reduce, torch.tensor(1.5), 0, torch.tensor([0]), torch.tensor(2.5, dtype=_D), r)
    _IDX_DTYPE_CASES[f"index_reduce_{_r}_self_f64_source_f32"] = lambda r=_r: (
        torch.index_reduce, torch.tensor(1.5, dtype=_D), 0, torch.tensor([0]), torch.tensor(2.5), r)
    _IDX_DTYPE_CASES[f"index_reduce_{_r}_float_index"] = lambda r=_r: (
        torch.index_reduce, torch.tensor(1.5), 0, torch.tensor(0.0), torch.tensor(2.5), r)


@pytest.mark.parametrize("case", sorted(_IDX_DTYPE_CASES))
def test_index_op_dtype_checks_like_cpu(case):
    fn, *args = _IDX_DTYPE_CASES[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001
            cpu = e
        else:
            raise AssertionError("the CPU call did not raise")
        with pytest.raises(type(cpu)) as got:
            fn(*to_tpu(args))
            torch.tpu.synchronize()
    assert str(cpu).split("\n")[0] in str(got.value)


@pytest.mark.parametrize("case", ["index_add", "index_select", "index_reduce"])
def test_index_ops_take_int32_indices_like_cpu(case):
    idx = torch.tensor([0, 2, 0], dtype=torch.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case == "index_add":
            check(lambda s, i, src: torch.index_add(s, 0, i, src), torch.ones(3, 2), idx, make((3, 2), torch.float32))
        elif case == "index_select":
            check(lambda s, i: torch.index_select(s, 0, i), make((3, 2), torch.float32), idx)
        else:
            check(lambda s, i, src: torch.index_reduce(s, 0, i, src, "amax"), make((3, 2), torch.float32), idx,
                  make((3, 2), torch.float32, seed=1))
