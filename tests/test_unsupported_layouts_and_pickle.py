"""Tensor kinds tpu does not run (sparse, quantized, strided nested) fail at
once with an error naming the feature, the op and what to do instead, the way
a CPU kernel's absence would; jagged nested tensors and pickle work."""
import copy
import io
import pickle
import warnings

import pytest
import torch


def _expect_unsupported(fn, feature, op):
    with pytest.raises(NotImplementedError) as e:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's prototype/deprecation notices
            fn()
    msg = str(e.value)
    assert f"{feature} are not supported on tpu" in msg and op in msg, msg


def test_sparse_tensors_are_a_clear_error():
    dense = torch.tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    _expect_unsupported(lambda: dense.to_sparse().to("tpu"), "sparse tensors", "aten::_sparse_coo_tensor")
    for to_layout in (torch.Tensor.to_sparse_csr, torch.Tensor.to_sparse_csc):
        _expect_unsupported(lambda: to_layout(dense).to("tpu"), "sparse tensors", "aten::_to_copy")
    on_tpu = dense.to("tpu")
    _expect_unsupported(lambda: on_tpu.to_sparse(), "sparse tensors", "aten::_to_sparse")
    _expect_unsupported(lambda: on_tpu.to_sparse_csr(), "sparse tensors", "aten::_to_sparse_csr")
    # Nothing fell back to the CPU on the way, and the device still works.
    torch.testing.assert_close((on_tpu * 2).cpu(), dense * 2)


def test_quantized_tensors_are_a_clear_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)
    _expect_unsupported(lambda: q.to("tpu"), "quantized tensors", "aten::")
    torch.testing.assert_close(q.dequantize().to("tpu").cpu(), q.dequantize())


def test_nested_tensors():
    parts = [torch.randn(2, 3), torch.randn(4, 3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strided = torch.nested.nested_tensor(parts, device="tpu")
    _expect_unsupported(lambda: strided + 1, "nested tensors with the strided layout", "aten::add.Tensor")
    jagged = torch.nested.nested_tensor([p.to("tpu") for p in parts], layout=torch.jagged)
    out = (jagged * 2 + 1).to("cpu")
    for got, want in zip(out.unbind(), parts):
        torch.testing.assert_close(got, want * 2 + 1)


@pytest.mark.parametrize("make", [
    lambda: torch.arange(12.0, device="tpu").view(3, 4)[:, 1:3],   # a non-contiguous view at an offset
    lambda: torch.tensor(3.5, device="tpu"),                         # 0-d
    lambda: torch.empty(0, 5, device="tpu"),                         # empty
    lambda: torch.arange(6, device="tpu", dtype=torch.int32).view(2, 3).t(),
])
def test_pickle_and_deepcopy_round_trip(make):
    x = make()
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert y.device == x.device and y.dtype == x.dtype and y.shape == x.shape and y.stride() == x.stride()
        torch.testing.assert_close(y.cpu(), x.cpu(), rtol=0, atol=0)
    # PyTorch's legacy (non-zip) format goes through the same path.
    buf = io.BytesIO()
    torch.save(x, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    torch.testing.assert_close(torch.load(buf).cpu(), x.cpu(), rtol=0, atol=0)


def test_pickled_parameter_keeps_its_kind_and_an_unpickled_copy_is_independent():
    p = torch.nn.Parameter(torch.randn(3, device="tpu"))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, torch.nn.Parameter) and q.requires_grad
    with torch.no_grad():
        q.add_(1)
    torch.testing.assert_close(q.cpu(), p.cpu() + 1)
