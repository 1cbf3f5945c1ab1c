"""Faults injected into the PJRT layer (a test-only hook standing in for a
failing plugin or device) surface as Python exceptions that name the op, at
the op or at the next synchronization; later work is unaffected; and a
tensor whose write failed raises when read instead of showing stale data."""
import pytest
import torch

from torch_tpu import _C


@pytest.fixture(autouse=True)
def _no_leftover_faults():
    yield
    for site in ("compile", "execute", "host_to_device", "device_to_host"):
        _C._inject_faults(site, 0)


def _raises(fn, *fragments):
    with pytest.raises(RuntimeError) as e:
        fn()
    for f in fragments:
        assert f in str(e.value), str(e.value)


def test_execution_fault_surfaces_at_synchronize_and_poisons_only_its_results():
    x_cpu = torch.arange(6.0).view(2, 3)
    x = x_cpu.to("tpu")
    _C._inject_faults("execute", 1)
    y = x + 1  # returns at once: the failure is asynchronous, as a device's
    _raises(torch.tpu.synchronize, "add.Tensor failed on tpu:0", "injected execution fault")
    torch.tpu.synchronize()  # reported once
    _raises(lambda: y.cpu(), "reading a tpu tensor failed", "add.Tensor")
    # Programs reading the failed result fail too (never compute on garbage)...
    z = y * 3
    _raises(lambda: z.cpu(), "injected execution fault")
    _raises(torch.tpu.synchronize, "mul.Tensor failed")
    # ...and everything else works, the input included.
    torch.testing.assert_close((x * 2).cpu(), x_cpu * 2)
    torch.testing.assert_close(x.cpu(), x_cpu)
    assert (x.sum()).item() == 15.0


def test_failed_in_place_write_is_never_stale():
    w = torch.arange(4.0).to("tpu")
    view = w[1:]
    _C._inject_faults("execute", 1)
    w.add_(1)
    _raises(torch.tpu.synchronize, "add_.Tensor failed")
    # The old values are gone and the new ones were never computed: reading
    # the storage (or any view of it) raises rather than returning either.
    _raises(lambda: w.cpu(), "add_.Tensor")
    _raises(lambda: view.cpu(), "injected execution fault")
    # Reading the view ran a program over the failed storage, which failed too.
    _raises(torch.tpu.synchronize, "copy_ failed")
    torch.tpu.synchronize()
    # Overwriting the whole storage makes it readable again.
    w.copy_(torch.full((4,), 7.0))
    torch.testing.assert_close(w.cpu(), torch.full((4,), 7.0))


def test_transfer_faults_raise_at_the_copy_and_the_next_copy_works():
    a = torch.randn(5)
    _C._inject_faults("host_to_device", 1)
    _raises(lambda: a.to("tpu"), "copying tensor<5xf32> to tpu:0 failed", "injected host-to-device")
    t = a.to("tpu")
    _C._inject_faults("device_to_host", 1)
    _raises(lambda: t.cpu(), "reading a tpu tensor failed", "injected device-to-host")
    torch.testing.assert_close(t.cpu(), a)


def test_compile_fault_names_the_op_and_a_retry_compiles():
    x = torch.randn(13, 11).to("tpu")  # a shape no other test compiles
    _C._inject_faults("compile", 1)
    _raises(lambda: torch.cumsum(x, 1), "compiling cumsum failed", "injected compile fault")
    torch.testing.assert_close(torch.cumsum(x, 1).cpu(), torch.cumsum(x.cpu(), 1))


def test_unknown_site_is_a_value_error():
    with pytest.raises(ValueError, match="unknown site"):
        _C._inject_faults("network", 1)
