"""torch.profiler on tpu: the PrivateUse1 profiler hooks give each op a device
time from device events (positive, never the negative totals uninitialized
device times gave), CPU-side totals stay sane, and Kineto traces show each
program run on tpu as device activity linked to the op that queued it."""
import json

import torch
import torch_tpu
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile


def _work(x):
    for _ in range(3):
        x = torch.relu(x @ x / x.shape[0])
    return x


def test_legacy_profiler_device_times_are_positive():
    x = torch.randn(256, 256, device="tpu")
    _work(x).cpu()   # compile outside the profile
    with torch.autograd.profiler.profile(use_device="tpu") as prof:
        _work(x)
        torch.tpu.synchronize()
    events = {e.key: e for e in prof.key_averages()}
    assert {"aten::mm", "aten::relu"} <= set(events)
    for e in events.values():
        assert e.cpu_time_total >= 0 and e.device_time_total >= 0, (e.key, e.cpu_time_total, e.device_time_total)
    # Device times are spans between completion callbacks (microseconds of
    # jitter): one op's may round to 0, the run's is positive and bounded.
    top = [e for e in prof.function_events if e.cpu_parent is None]
    total = sum(e.device_time_total for e in top)
    assert 0 < total < 60e6, [(e.name, e.device_time_total) for e in top]


def test_kineto_profiler_cpu_totals_and_trace(tmp_path):
    x = torch.randn(128, 128, device="tpu")
    _work(x).cpu()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        _work(x)
        torch.tpu.synchronize()
    events = {e.key: e for e in prof.key_averages()}
    assert "aten::mm" in events
    assert all(e.cpu_time_total >= 0 for e in events.values())
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    assert "aten::mm" in trace.read_text()


def _kernels(trace_path):
    events = json.loads(trace_path.read_text())["traceEvents"]
    return events, [e for e in events if e.get("cat") == "kernel"]


def test_kineto_trace_has_tpu_device_activity(tmp_path):
    x = torch.randn(128, 128, device="tpu")
    _work(x).cpu()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        y = _work(x)
        torch.tpu.synchronize()
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    events, kernels = _kernels(trace)
    # One device program per op, in order, on tpu:0's row.
    assert [k["name"] for k in kernels] == ["mm", "div.Tensor", "relu"] * 3, [k["name"] for k in kernels]
    assert all(k["pid"] == 0 and k["args"]["device"] == "tpu:0" for k in kernels)
    assert all(k["dur"] >= 0 for k in kernels) and sum(k["dur"] for k in kernels) > 0
    starts = [k["ts"] for k in kernels]
    assert starts == sorted(starts)
    # Inside the profiled window: after the first op began on the CPU.
    first_cpu = min(e["ts"] for e in events if e.get("cat") == "cpu_op")
    assert starts[0] >= first_cpu - 1  # microseconds, rounded
    # PyTorch sees them as PrivateUse1 device events of the ops that queued them.
    device_events = [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]
    assert sorted(e.name for e in device_events) == sorted(["mm", "div.Tensor", "relu"] * 3)
    mm = {e.key: e for e in prof.key_averages()}["aten::mm"]
    assert mm.device_time_total > 0
    torch.testing.assert_close(y.cpu(), _work(x.cpu()), rtol=1e-4, atol=1e-5)


def test_cpu_only_trace_has_no_device_rows(tmp_path):
    x = torch.randn(64, 64, device="tpu")
    _work(x).cpu()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        _work(x)
        torch.tpu.synchronize()
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    assert _kernels(trace)[1] == []


def test_debug_mode_and_repeated_sessions(tmp_path):
    # Synchronous (debug) mode completes each program inside the op; two
    # sessions in a row each see only their own programs.
    x = torch.randn(32, 32, device="tpu")
    _work(x).cpu()
    with torch_tpu.debug_mode():
        counts = []
        for n in (1, 2):
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
                for _ in range(n):
                    _work(x)
                torch.tpu.synchronize()
            path = tmp_path / f"t{n}.json"
            prof.export_chrome_trace(str(path))
            counts.append(len(_kernels(path)[1]))
    assert counts == [9, 18]
