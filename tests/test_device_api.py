"""torch.tpu, torch.accelerator, generators, autoload and plugin errors."""
import os
import subprocess
import sys

import pytest
import torch

import torch_tpu


def run_python(code, **env):
    full_env = dict(os.environ)
    full_env.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=300)


def test_autoload_without_importing_torch_tpu():
    code = ("import sys, torch\n"
            "x = torch.arange(6., device='tpu').view(2, 3)\n"
            "print((x.t() + x.t()).cpu().tolist(), torch.accelerator.current_accelerator())\n")
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]] tpu"


def test_autoload_imports_no_dynamo():
    # Dynamo's import takes ~1 s; `import torch` loads torch_tpu, so it must
    # not pull Dynamo in (jax_op's Dynamo marks are applied at its first op).
    code = ("import sys, torch\n"
            "print('torch_tpu' in sys.modules, sorted(m for m in sys.modules if m.startswith('torch._dynamo')))\n")
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "True []", (r.stdout, r.stderr)


def test_autoload_can_be_turned_off():
    r = run_python("import sys, torch; print('torch_tpu' in sys.modules)", TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr
    r = run_python("import torch, torch_tpu; print(torch.ones(2, device='tpu').cpu().tolist())",
                   TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0 and r.stdout.strip() == "[1.0, 1.0]", r.stderr


def test_missing_plugin_gives_one_clear_error():
    r = run_python("import torch; torch.zeros(1, device='tpu')", TORCH_TPU_PJRT_PLUGIN="/nonexistent")
    assert r.returncode == 1  # a Python exception, not an abort or a signal
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert lines[-1].startswith("RuntimeError: ")
    assert "/nonexistent" in lines[-1] and "pip install xla-cpu-pjrt" in lines[-1]
    assert "terminate called" not in r.stderr and "Aborted" not in r.stderr
    # Only one traceback: no chain of unrelated errors.
    assert r.stderr.count("Traceback") == 1
    # And the device just reports itself unavailable.
    r = run_python("import torch; print(torch.tpu.is_available(), torch.tpu.device_count())",
                   TORCH_TPU_PJRT_PLUGIN="/nonexistent")
    assert r.returncode == 0 and r.stdout.strip() == "False 0", r.stderr


def test_plugin_path_is_known_before_the_runtime_starts():
    # Tools that load the same plugin beside us (bench/jax_plugin.py) ask
    # which one without starting it; the runtime then loads that very file.
    code = ("import torch, torch_tpu\n"
            "before = torch_tpu._C._plugin_path(); started = torch_tpu._C._runtime_started()\n"
            "torch.ones(1, device='tpu')\n"
            "print(started, before == torch_tpu._C._runtime_info()['plugin_path'] == torch_tpu._C._plugin_path())\n")
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "False True", (r.stdout, r.stderr)
    r = run_python("import torch_tpu; torch_tpu._C._plugin_path()", TORCH_TPU_PJRT_PLUGIN="/nonexistent")
    assert r.returncode == 1 and "/nonexistent" in r.stderr.strip().splitlines()[-1], r.stderr


def test_plugin_that_is_not_a_pjrt_plugin():
    r = run_python("import torch; torch.zeros(1, device='tpu')", TORCH_TPU_PJRT_PLUGIN=sys.executable)
    assert r.returncode == 1
    assert sys.executable in r.stderr.strip().splitlines()[-1]


def test_accelerator_and_backends():
    assert torch.accelerator.current_accelerator().type == "tpu"
    assert torch.accelerator.is_available()
    assert torch.accelerator.device_count() == torch.tpu.device_count() >= 1
    assert torch.backends.tpu.is_built() and torch.backends.tpu.is_available()
    assert torch.tpu.is_available()
    assert torch._C._get_privateuse1_backend_name() == "tpu"


def test_device_selection():
    n = torch.tpu.device_count()
    assert torch.tpu.current_device() == 0
    if n > 1:
        with torch.tpu.device(1):
            assert torch.tpu.current_device() == 1
            t = torch.ones(3, device="tpu")
            assert t.device == torch.device("tpu", 1)
            assert torch.equal((t + t).cpu(), torch.full((3,), 2.0))
        assert torch.tpu.current_device() == 0
        u = torch.arange(4.0, device="tpu:1")
        assert u.device.index == 1 and torch.equal(u.to("tpu:0").cpu(), torch.arange(4.0))
        with pytest.raises(RuntimeError, match="same device"):
            u + torch.ones(4, device="tpu:0")
    with pytest.raises(RuntimeError, match="out of range"):
        torch.tpu.set_device(n)


def test_tensor_and_module_methods():
    t = torch.ones(2).tpu()
    assert t.is_tpu and t.device.type == "tpu"
    m = torch.nn.Linear(2, 2).tpu()
    assert m.weight.device.type == "tpu"


def test_device_properties_and_config():
    p = torch.tpu.get_device_properties(0)
    assert p.total_memory > 0 and p.name == torch.tpu.get_device_name()
    free, total = torch.tpu.mem_get_info()
    assert 0 < free <= total
    text = torch_tpu.config_text()
    assert "xla_cpu_pjrt" in text and "PJRT C API:    0." in text and "tpu:0" in text


def test_generators_and_rng_state():
    g = torch.Generator(device="tpu")
    assert g.device.type == "tpu"
    g.manual_seed(123)
    assert g.initial_seed() == 123
    torch.tpu.manual_seed(7)
    assert torch.tpu.initial_seed() == 7
    state = torch.tpu.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    torch.tpu.manual_seed(8)
    torch.tpu.set_rng_state(state)
    assert torch.tpu.initial_seed() == 7
    torch.manual_seed(11)  # seeds every device's default generator as well
    assert all(torch.tpu.default_generators[i].initial_seed() == 11 for i in range(torch.tpu.device_count()))
    torch.tpu.manual_seed_all(5)
    assert torch.tpu.default_generators[0].initial_seed() == 5
    with pytest.raises(RuntimeError, match="16 bytes"):
        torch.tpu.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_debug_mode_runs_synchronously():
    with torch_tpu.debug_mode():
        assert torch_tpu._C.debug_mode()
        x = torch.ones(8, device="tpu") * 2
        assert torch_tpu._C._is_ready(x)
    assert not torch_tpu._C.debug_mode()


def _op_without_tpu_lowering():
    # A test-only op with just a CPU kernel: it can never gain a tpu lowering,
    # so this test keeps exercising the fallback as op coverage grows.
    lib = torch.library.Library("torch_tpu_fallback_test", "FRAGMENT")
    if not hasattr(torch.ops.torch_tpu_fallback_test, "twice"):
        lib.define("twice(Tensor x) -> Tensor")
        lib.impl("twice", lambda x: x * 2 + 1, "CPU")
    _op_without_tpu_lowering.lib = lib  # keep the registration alive
    return torch.ops.torch_tpu_fallback_test.twice


def test_fallback_is_visible_and_can_be_an_error(monkeypatch, capfd):
    twice = _op_without_tpu_lowering()
    x = torch.linspace(-0.9, 0.9, 7).to("tpu")
    torch_tpu.reset_metrics()
    y = twice(x)
    # torch.ops calls do not route C++ warnings into Python's warnings module,
    # so the one-time warning reaches stderr.
    assert "torch_tpu_fallback_test::twice has no tpu lowering and runs on the CPU" in capfd.readouterr().err
    assert y.device.type == "tpu"
    assert torch.equal(y.cpu(), x.cpu() * 2 + 1)
    assert torch_tpu.metrics()["fallbacks_by_op"] == {"torch_tpu_fallback_test::twice": 1}
    assert torch_tpu.metrics()["fallbacks"] == 1
    twice(x)  # counted every time, warned once
    assert torch_tpu.metrics()["fallbacks"] == 2
    assert "has no tpu lowering" not in capfd.readouterr().err
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")
    with pytest.raises(NotImplementedError, match="torch_tpu_fallback_test::twice has no tpu lowering"):
        twice(x)


def test_autocast_context_on_tpu():
    # Gradient checkpointing and AMP build torch.autocast(device_type="tpu").
    assert torch.tpu.get_amp_supported_dtype() == [torch.bfloat16, torch.float16]
    x = torch.ones(2, 2, device="tpu")
    with torch.autocast(device_type="tpu", dtype=torch.bfloat16, enabled=False):
        assert (x @ x).dtype == torch.float32


def test_gradient_checkpointing_on_tpu():
    lin = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4)
    expect = torch.utils.checkpoint.checkpoint(lin, x.requires_grad_(), use_reentrant=False).sum()
    expect.backward()
    lin_t = torch.nn.Linear(4, 4).to("tpu")
    lin_t.load_state_dict(lin.state_dict())
    xt = x.detach().to("tpu").requires_grad_()
    got = torch.utils.checkpoint.checkpoint(lin_t, xt, use_reentrant=False).sum()
    got.backward()
    torch.testing.assert_close(got.cpu(), expect.detach())
    torch.testing.assert_close(xt.grad.cpu(), x.grad)
    torch.testing.assert_close(lin_t.weight.grad.cpu(), lin.weight.grad)
