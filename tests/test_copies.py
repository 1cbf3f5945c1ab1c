"""Host <-> device and device <-> device copies, views, storage semantics."""
import gc
import io

import pytest
import torch
from torch.testing import assert_close

from helpers import ALL_DTYPES, make_cpu

SHAPES = [(), (0,), (3, 0, 2), (7,), (4, 5), (2, 3, 4)]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_round_trip_every_dtype(dtype, shape):
    c = make_cpu(shape, dtype)
    t = c.to("tpu")
    assert t.device.type == "tpu" and t.dtype == dtype and t.shape == c.shape
    back = t.cpu()
    assert back.dtype == dtype
    assert torch.equal(back, c)


def test_special_float_values_survive():
    c = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40, 3.4e38])
    back = c.to("tpu").cpu()
    assert_close(back, c, equal_nan=True, rtol=0, atol=0)
    assert torch.signbit(back[3])


@pytest.mark.parametrize("src_dtype,dst_dtype", [
    (torch.float32, torch.bfloat16), (torch.float64, torch.float16), (torch.float32, torch.int32),
    (torch.int64, torch.float32), (torch.int32, torch.bool), (torch.bool, torch.float32),
    (torch.uint8, torch.int8), (torch.float32, torch.uint8),
])
def test_copy_converts_dtype(src_dtype, dst_dtype):
    c = make_cpu((5, 6), src_dtype).abs() if src_dtype != torch.bool else make_cpu((5, 6), src_dtype)
    expect = torch.empty(5, 6, dtype=dst_dtype).copy_(c)
    # host -> device with conversion
    t = torch.empty(5, 6, dtype=dst_dtype, device="tpu").copy_(c)
    assert torch.equal(t.cpu(), expect)
    # device -> device with conversion
    t2 = torch.empty(5, 6, dtype=dst_dtype, device="tpu").copy_(c.to("tpu"))
    assert torch.equal(t2.cpu(), expect)
    # device -> host with conversion
    h = torch.empty(5, 6, dtype=dst_dtype).copy_(c.to("tpu"))
    assert torch.equal(h, expect)


def test_to_dtype_and_device_at_once():
    c = make_cpu((3, 4), torch.float32)
    assert torch.equal(c.to("tpu", torch.float16).cpu(), c.to(torch.float16))
    assert torch.equal(c.to("tpu").to(torch.int64).cpu(), c.to(torch.int64))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.bfloat16], ids=str)
def test_non_contiguous_sources(dtype):
    base = make_cpu((6, 8), dtype)
    dev = base.to("tpu")
    views = [lambda x: x.t(), lambda x: x[:, 1:5], lambda x: x[::2, ::3], lambda x: x[1:, 2].unsqueeze(1),
             lambda x: x.t()[2:5], lambda x: x[3:, :1].expand(3, 5), lambda x: x.as_strided((3, 3), (9, 1), 2)]
    for view in views:
        assert torch.equal(view(base).to("tpu").cpu(), view(base))  # host view -> device
        assert torch.equal(view(dev).cpu(), view(base))              # device view -> host


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bool], ids=str)
def test_non_contiguous_destinations(dtype):
    for make_view in [lambda x: x.t(), lambda x: x[:, 2:5], lambda x: x[::2, 1::2].t()]:
        cpu_dst = torch.zeros(6, 8, dtype=dtype)
        dev_dst = torch.zeros(6, 8, dtype=dtype, device="tpu")
        view_cpu = make_view(cpu_dst)
        piece = make_cpu(tuple(view_cpu.shape), dtype, seed=2)
        view_cpu.copy_(piece)                 # CPU reference
        make_view(dev_dst).copy_(piece)       # host -> device view
        assert torch.equal(dev_dst.cpu(), cpu_dst)
        dev_dst2 = torch.zeros(6, 8, dtype=dtype, device="tpu")
        make_view(dev_dst2).copy_(piece.to("tpu"))  # device -> device view
        assert torch.equal(dev_dst2.cpu(), cpu_dst)
        host = torch.zeros(6, 8, dtype=dtype)
        make_view(host).copy_(make_view(dev_dst))   # device view -> host view
        assert torch.equal(host, cpu_dst)


def test_copy_broadcasts_source():
    row = torch.arange(4.0)
    cpu = torch.zeros(3, 4).copy_(row)
    assert torch.equal(torch.zeros(3, 4, device="tpu").copy_(row).cpu(), cpu)
    assert torch.equal(torch.zeros(3, 4, device="tpu").copy_(row.to("tpu")).cpu(), cpu)


def test_views_of_a_storage_see_each_others_writes():
    x = torch.zeros(4, 5, device="tpu")
    ref = torch.zeros(4, 5)
    for t in (x, ref):
        flat = t.view(-1)
        flat[3] = 7
        t[:, 1:3] = torch.ones(4, 2)
        t.t()[4].fill_(-2)
        t[2].zero_()
    assert torch.equal(x.cpu(), ref)
    assert torch.equal(x.view(-1).cpu(), ref.view(-1))
    assert torch.equal(x.t().cpu(), ref.t())
    # A view taken before the writes sees them as well.
    y = torch.zeros(3, 3, device="tpu")
    col = y[:, 1]
    y.fill_(2)
    assert torch.equal(col.cpu(), torch.full((3,), 2.0))
    expanded = col.unsqueeze(0).expand(4, -1)
    assert torch.equal(expanded.cpu(), torch.full((4, 3), 2.0))


def test_empty_reads_as_zeros_and_touches_nothing():
    before = torch_tpu_metrics()["executions"]
    e = torch.empty(1000, 1000, device="tpu")
    assert torch_tpu_metrics()["executions"] == before
    assert e.cpu().abs().sum().item() == 0


def torch_tpu_metrics():
    import torch_tpu
    return torch_tpu.metrics()


def test_data_ptrs_are_unique_and_alias_like_cpu():
    ts = [torch.empty(n, device="tpu") for n in (1, 5, 1000, 3)]
    ptrs = [t.data_ptr() for t in ts]
    assert len(set(ptrs)) == len(ptrs) and all(p != 0 for p in ptrs)
    # Like the CPU, a tensor with no elements reports a null data pointer.
    assert torch.empty(0, device="tpu").data_ptr() == torch.empty(0).data_ptr() == 0
    x = torch.empty(4, 4, device="tpu")
    assert x[1].data_ptr() == x.data_ptr() + 4 * 4
    assert x.view(-1).data_ptr() == x.data_ptr()
    assert x.untyped_storage().data_ptr() == x.data_ptr()
    # A freed storage's address is never handed out again.
    old = x.data_ptr()
    del x
    gc.collect()
    assert all(torch.empty(16, device="tpu").data_ptr() != old for _ in range(10))


def test_scalars_and_zero_dim():
    for v, dtype in [(3.5, torch.float32), (-7, torch.int64), (True, torch.bool), (2.25, torch.bfloat16)]:
        t = torch.tensor(v, dtype=dtype).to("tpu")
        assert t.dim() == 0 and t.item() == torch.tensor(v, dtype=dtype).item()
    assert torch.zeros((), device="tpu").item() == 0
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        torch.zeros(2, device="tpu").item()


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.bfloat16], ids=str)
def test_fill_and_zero(dtype):
    for shape in [(), (0,), (3, 4)]:
        t = torch.empty(shape, dtype=dtype, device="tpu").fill_(1)
        assert torch.equal(t.cpu(), torch.ones(shape, dtype=dtype))
        t.zero_()
        assert torch.equal(t.cpu(), torch.zeros(shape, dtype=dtype))
    assert torch.equal(torch.full((2, 3), 5, dtype=dtype, device="tpu").cpu(), torch.full((2, 3), 5, dtype=dtype))
    assert torch.equal(torch.ones(3, dtype=dtype, device="tpu").cpu(), torch.ones(3, dtype=dtype))


def test_fill_with_a_tensor_value():
    t = torch.empty(2, 3, device="tpu")
    t.fill_(torch.tensor(4.0))
    assert torch.equal(t.cpu(), torch.full((2, 3), 4.0))
    t.fill_(torch.tensor(-1.0, device="tpu"))
    assert torch.equal(t.cpu(), torch.full((2, 3), -1.0))


def test_save_and_load_to_tpu():
    tensors = {"w": torch.randn(3, 4), "i": torch.arange(5), "h": torch.randn(2, 2).to(torch.bfloat16),
               "view": torch.randn(4, 6)[:, 1:3]}
    buf = io.BytesIO()
    torch.save(tensors, buf)
    buf.seek(0)
    loaded = torch.load(buf, map_location="tpu")
    for k, v in tensors.items():
        assert loaded[k].device.type == "tpu"
        assert torch.equal(loaded[k].cpu(), v), k
    # And back: a tpu tensor saved and loaded onto the CPU.
    buf = io.BytesIO()
    torch.save({k: v.to("tpu") for k, v in tensors.items()}, buf)
    buf.seek(0)
    for k, v in torch.load(buf, map_location="cpu").items():
        assert torch.equal(v, tensors[k]), k


def test_storage_tpu_method_and_resize():
    s = torch.arange(6, dtype=torch.float32).untyped_storage()
    st = s.tpu()
    assert st.device.type == "tpu" and st.nbytes() == s.nbytes()
    assert torch.equal(torch.empty(0, device="tpu").set_(st).cpu(), torch.arange(6, dtype=torch.float32))
    x = torch.arange(4.0, device="tpu")
    x.resize_(10)
    assert torch.equal(x[:4].cpu(), torch.arange(4.0))
    x.resize_(2, 2)
    assert torch.equal(x.cpu(), torch.arange(4.0).view(2, 2))


def test_set_shares_storage():
    a = torch.arange(6.0, device="tpu")
    b = torch.empty(0, device="tpu")
    b.set_(a.untyped_storage(), 2, (2, 2), (2, 1))
    assert torch.equal(b.cpu(), torch.arange(6.0)[2:].view(2, 2))
    a.fill_(1)
    assert torch.equal(b.cpu(), torch.ones(2, 2))
    c = torch.empty(0, device="tpu").set_(a)
    assert c.data_ptr() == a.data_ptr()
    d = torch.ones(3, device="tpu").set_()
    assert d.numel() == 0 and d.device.type == "tpu"


def test_memory_allocated_returns_to_baseline():
    gc.collect()
    base = torch.tpu.memory_allocated()
    x = torch.empty(1024, 1024, device="tpu")
    y = torch.randn(256, 4).to("tpu")
    assert torch.tpu.memory_allocated() == base + 1024 * 1024 * 4 + 256 * 4 * 4
    assert torch.tpu.max_memory_allocated() >= torch.tpu.memory_allocated()
    del x, y
    gc.collect()
    assert torch.tpu.memory_allocated() == base
    torch.tpu.reset_peak_memory_stats()
    assert torch.tpu.max_memory_allocated() == base
    stats = torch.tpu.memory_stats()
    assert stats["allocated_bytes.all.current"] == base


def test_synchronize_waits_for_outstanding_work():
    import torch_tpu
    x = torch.randn(512, 512).to("tpu")
    for _ in range(20):
        x = x * 1.0001 + x
    torch.tpu.synchronize()
    # After synchronize the last program's output is complete on the device.
    assert torch_tpu._C._is_ready(x)
    assert torch.isfinite(x.cpu()).all()


def test_complex_half_is_rejected_clearly():
    # XLA has no complex<f16>: the one dtype the CPU has and tpu refuses.
    with pytest.raises(TypeError, match="not supported on the tpu device"):
        torch.zeros(2, dtype=torch.complex32).to("tpu")


def test_complex_op_without_complex_rule_falls_back_visibly(monkeypatch):
    import torch_tpu
    # nan_to_num's rule does not declare complex values: the CPU computes it, counted.
    z = torch.tensor([1 + 2j, complex(float("nan"), -0.5)], dtype=torch.complex64)
    torch_tpu.reset_metrics()
    got = torch.nan_to_num(z.to("tpu"))
    torch.testing.assert_close(got.cpu(), torch.nan_to_num(z))
    assert torch_tpu.metrics()["fallbacks_by_op"] == {"nan_to_num": 1}
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")
    with pytest.raises(NotImplementedError, match="no tpu lowering"):
        torch.nan_to_num(z.to("tpu"))


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("dst", [torch.uint8, torch.uint16, torch.uint32])
def test_float_to_unsigned_out_of_range_wraps_like_the_cpu(src, dst):
    """Out of the unsigned range the cast is undefined in C++; the CPU's x86
    kernels truncate through a signed int and wrap (-1.5 -> 255 for uint8),
    XLA would saturate (0). The CPU's values, through a view, in-kernel too
    (all() into a uint8 out= converts its input first, as the CPU)."""
    x = torch.tensor([[-1.13, -0.5, 300.7, -300.2], [255.9, 65504.0, -7000.2, 0.0]]).to(src)
    assert_close(x.to("tpu").t().to(dst).cpu(), x.t().to(dst), rtol=0, atol=0)
    out = torch.empty((), dtype=torch.uint8)
    want = torch.all(x[0, :1], dim=-1, out=out).clone()
    got = torch.all(x[0, :1].to("tpu"), dim=-1, out=out.to("tpu")).cpu()
    assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("src", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("dst", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.uint16])
def test_float_to_int_nan_inf_and_out_of_range_like_the_cpu(src, dst):
    """NaN, infinities and values out of int32/int64 become the type's minimum
    on the CPU (x86's cvtt), and the narrower types wrap what int32 (int64 for
    a double to an unsigned type) holds: NaN -> 0, 2**32 + 1 -> 1 from a
    double to uint8. XLA saturates and maps NaN to 0, which was silently
    different. Through a view and in a copy_ into an int tensor too."""
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[nan, inf, -inf, 3e10, -3e10, 3e19, -3e19, 2.5e9],
                      [40000.5, -40000.5, 300.7, -129.5, 2147483647.5, -2147483649.5, 4294967297.0, -0.9]],
                     dtype=torch.float64).to(src)
    assert_close(x.to("tpu").t().to(dst).cpu(), x.t().to(dst), rtol=0, atol=0)
    assert_close(x.to("tpu")[:, 1:].to(dst).cpu(), x[:, 1:].to(dst), rtol=0, atol=0)
    want = torch.zeros(2, 8, dtype=dst).copy_(x)
    got = torch.zeros(2, 8, dtype=dst, device="tpu").copy_(x.to("tpu")).cpu()
    assert_close(got, want, rtol=0, atol=0)
