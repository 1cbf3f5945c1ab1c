"""torch.tpu.Stream / Event and torch.Stream / torch.Event on tpu: events
cover the work queued before record(), report completion honestly, wait for
it, and time it; every Stream of a device is its one PJRT-ordered stream."""
import time

import pytest
import torch


def _busy(n=6, size=700):
    x = torch.randn(size, size, device="tpu")
    for _ in range(n):
        x = torch.tanh(x @ x / size)
    return x


def test_event_covers_queued_work_and_times_it():
    _busy(1)                      # compile outside the timed region
    torch.tpu.synchronize()
    start, end = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)
    assert start.query()          # not yet recorded: complete, as CUDA
    t0 = time.perf_counter()
    start.record()
    y = _busy(6)
    end.record()
    pending = not end.query()
    end.synchronize()
    host_ms = (time.perf_counter() - t0) * 1e3
    assert end.query()
    ms = start.elapsed_time(end)
    assert 0 < ms <= host_ms + 1.0
    assert pending or ms < 5, "the work was still running at record time, so query() had to say so"
    torch.testing.assert_close(y.cpu(), y.cpu())   # and the result is there


def test_event_on_idle_device_is_complete_at_once():
    torch.tpu.synchronize()
    e = torch.Event("tpu")
    e.record()
    assert e.query()
    e.synchronize()


def test_elapsed_time_needs_timing_and_records():
    a, b = torch.tpu.Event(), torch.tpu.Event()
    a.record()
    b.record()
    with pytest.raises((RuntimeError, ValueError), match="enable_timing"):
        a.elapsed_time(b)
    c, d = torch.tpu.Event(enable_timing=True), torch.tpu.Event(enable_timing=True)
    c.record()
    with pytest.raises((RuntimeError, ValueError)):
        c.elapsed_time(d)     # d never recorded
    with pytest.raises(RuntimeError, match="interprocess"):
        torch.tpu.Event(interprocess=True)


def test_streams_are_the_device_stream_and_waits_are_correct():
    s = torch.tpu.Stream(priority=-1)
    assert s.device == torch.device("tpu", 0) and s == torch.tpu.default_stream() == torch.tpu.current_stream()
    x = _busy(2)
    s.wait_stream(torch.tpu.current_stream())
    e = torch.tpu.Event()
    e.record()
    s.wait_event(e)
    e.wait(s)
    with torch.tpu.stream(s):
        y = x + 1
    s.synchronize()
    assert s.query()
    torch.testing.assert_close(y.cpu(), x.cpu() + 1)


def test_cross_device_wait_and_stream_context():
    n = torch.tpu.device_count()
    other = torch.tpu.Stream(device=n - 1)
    with torch.tpu.stream(other):
        assert torch.tpu.current_device() == n - 1
        z = torch.ones(3, device="tpu") * 2
    assert torch.tpu.current_device() == 0
    e = torch.Event("tpu")
    x = _busy(2)
    e.record(torch.tpu.current_stream(0))
    other.wait_event(e)           # another device's stream: the host waits for the event
    assert e.query()
    torch.testing.assert_close(z.cpu(), torch.full((3,), 2.0))
    torch.tpu.set_stream(other)
    assert torch.tpu.current_device() == n - 1
    torch.tpu.set_stream(torch.tpu.default_stream(0))
    assert torch.tpu.current_device() == 0
    del x
