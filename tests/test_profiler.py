"""torch.profiler on tpu: the PrivateUse1 profiler hooks give each op a device
time from device events (positive, never the negative totals uninitialized
device times gave), and CPU-side totals stay sane."""
import torch
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
