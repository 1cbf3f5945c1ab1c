"""A buffer let go while programs queued earlier may still read it (a dropped
intermediate, a storage overwritten in place, an execution's temporary
operands) must outlive those programs. The CPU plugin was seen to hand such
memory to a later result before the read: ~30% of these chains came out
wrong by ~0.1, with no error, until buffers were retired after queued work."""
import json
import os
import re
import subprocess
import sys

import torch

N = 192  # the size at which the plugin was seen to reuse the memory


def _chain(x, steps):
    for _ in range(steps):
        x = torch.tanh(x @ x * 0.01 + 0.5)  # each step's intermediates are dropped at once
    return x


def test_dropped_intermediates_while_work_is_queued():
    torch.manual_seed(0)
    x_cpu = torch.randn(N, N)
    x = x_cpu.to("tpu")
    want = _chain(x_cpu, 3)
    for trial in range(20):
        _chain(x, 300)  # a long queue, its result dropped
        torch.testing.assert_close(_chain(x, 3).cpu(), want, rtol=1e-5, atol=1e-5, msg=f"trial {trial}")


def test_in_place_overwrite_waits_for_queued_readers():
    torch.manual_seed(1)
    a_cpu = torch.randn(N, N)
    for trial in range(20):
        a = a_cpu.to("tpu")
        b = _chain(a, 20)          # queued readers of a's buffer...
        a.mul_(0).add_(3.0)        # ...while a's storage gets new buffers
        c = a @ a
        torch.testing.assert_close(b.cpu(), _chain(a_cpu, 20), rtol=1e-4, atol=1e-5, msg=f"trial {trial}")
        torch.testing.assert_close(c.cpu(), torch.full((N, N), 9.0 * N), msg=f"trial {trial}")


def test_random_draws_with_temporary_seed_operands_repeat_exactly():
    g = torch.Generator(device="tpu")
    draws = []
    for _ in range(2):
        g.manual_seed(1234)
        x = torch.rand(64, 64, device="tpu", generator=g)
        for _ in range(30):
            x = torch.tanh(x @ x * 0.05 + torch.rand(64, 64, device="tpu", generator=g))
        draws.append(x.cpu())
    torch.testing.assert_close(draws[0], draws[1], rtol=0, atol=0)


def test_matmuls_of_new_buffers_at_freed_addresses():
    # The XLA CPU plugin's XNNPACK dot kept the right-hand operand it had seen
    # at an address and used it for a later buffer at that address: with that
    # dot on (XLA_FLAGS=--xla_cpu_use_xnnpack=true), a product came out as
    # x @ (a freed tensor), no error, within the first 11 batches of each of
    # five runs. torch_tpu turns that dot off (device/plugin_workarounds.h).
    n = 192
    base = torch.ones(n, n, device="tpu")
    for it in range(300):
        values = [float((it * 8 + i) % 13 + 1) for i in range(8)]
        products = [(base * v) @ (base * v) for v in values]  # concurrent programs; buffers freed and reused
        for v, p in zip(values, products):
            torch.testing.assert_close(p.cpu(), torch.full((n, n), v * v * n), rtol=0, atol=0, msg=f"batch {it}")


_MATMUL = "import torch; x = torch.ones(192, 192, device='tpu'); (x @ x).cpu()"
# JAX loads the very same plugin first and starts it, so the plugin has read
# XLA_FLAGS (once per process) before torch_tpu's runtime starts.
_JAX_FIRST = ("import sys, jax; sys.path.insert(0, sys.argv[1]); from jax_plugin import plugin_device; "
              "jax.config.update('jax_platforms', 'cpu,xla_cpu_pjrt'); assert plugin_device(jax) is not None; ")


def test_the_cpu_plugin_runs_without_its_xnnpack_dot(tmp_path):
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")
    for name, code in (("alone", _MATMUL), ("after JAX started the plugin", _JAX_FIRST + _MATMUL)):
        dump = tmp_path / name.replace(" ", "_")
        env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump}", TORCH_TPU_COMPILE_CACHE="0")
        run = subprocess.run([sys.executable, "-c", code, bench], env=env, capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0, (name, run.stderr[-2000:])
        options = [p.read_text() for p in dump.glob("*torch_tpu*.debug_options")]
        # Every program of ours carries the setting, whoever started the plugin.
        assert options and all("xla_cpu_use_xnnpack: false" in o for o in options), (name, options)
        assert "xla_cpu_use_xnnpack" not in run.stderr, name  # no warning: the user set nothing


def test_xla_flags_that_keep_the_xnnpack_dot_on_are_warned_about():
    code = "import torch; torch.ones(2, device='tpu').cpu()"
    for flags, warned in (("--xla_cpu_use_xnnpack=true", True), ("--xla_cpu_use_xnnpack=false", False)):
        env = dict(os.environ, XLA_FLAGS=flags)
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert ("XNNPACK dot on" in run.stderr) == warned, (flags, run.stderr)


def _traced_runs(env_value, code):
    env = dict(os.environ, TORCH_TPU_TRACE_BUFFERS=env_value)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    runs = []
    for m in re.finditer(r"^torch_tpu trace: (.+) args \[(.*)\] -> results \[(.*)\]$", run.stderr, re.M):
        runs.append((m.group(1), m.group(2).split(", ") if m.group(2) else [], m.group(3).split(", ")))
    return run, runs


def test_buffer_trace_shows_each_run_and_its_dataflow():
    # TORCH_TPU_TRACE_BUFFERS=1: one line per program run with its argument and
    # result addresses, so a result read by a later program appears among that
    # program's arguments (how a plugin reading a freed buffer was found).
    code = ("import json, torch\n"
            "a = torch.ones(4, device='tpu')\n"
            "b = a * 2\n"
            "c = b.sin()\n"
            "with torch.tpu.set_eager_mode('fused'):\n"
            "    d = (c * 3).cos()\n"
            "print(json.dumps(d.cpu().tolist()))\n")
    run, runs = _traced_runs("1", code)
    ops = [what for what, _, _ in runs]
    mul, sin = ops.index("mul.Tensor"), ops.index("sin")
    window = next(i for i, what in enumerate(ops) if what.startswith("a fused window of 2 ops"))
    assert mul < sin < window, ops
    for producer, consumer in ((mul, sin), (sin, window)):
        (result,) = runs[producer][2]
        assert int(result, 16) != 0 and result in runs[consumer][1], (runs[producer], runs[consumer])
    want = (torch.ones(4) * 2).sin().mul(3).cos().tolist()
    torch.testing.assert_close(torch.tensor(json.loads(run.stdout.strip().splitlines()[-1])), torch.tensor(want))
    assert _traced_runs("0", code)[1] == [] and _traced_runs("", code)[1] == []


def test_a_whole_storage_update_is_written_in_place():
    # An op that overwrites all of a storage it also reads (a static cache's
    # index_copy_, eager or in a compiled graph) gets that storage's buffer
    # donated as its result: XLA updates it in place instead of first copying
    # the whole storage into a fresh buffer. A clone keeps its own values.
    code = ("import json, torch\n"
            "def run(device):\n"
            "    cache = torch.zeros(4, 2, 6, 8, device=device)\n"
            "    new = torch.arange(64, dtype=torch.float32).reshape(4, 2, 1, 8).to(device)\n"
            "    cache.index_copy_(2, torch.tensor([3], device=device), new)\n"
            "    twin = cache.clone()\n"
            "    twin.index_copy_(2, torch.tensor([1], device=device), new * 2)\n"
            "    f = lambda c, n, p: c.index_copy_(2, p, n)\n"
            "    if device == 'tpu':\n"
            "        f = torch.compile(f, backend='tpu')\n"
            "    f(cache, new * 3, torch.tensor([5], device=device))\n"
            "    return [cache.cpu().tolist(), twin.cpu().tolist()]\n"
            "print(json.dumps([run('tpu'), run('cpu')]))\n")
    run, runs = _traced_runs("1", code)
    got, want = json.loads(run.stdout.strip().splitlines()[-1])
    for g, w in zip(got, want):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(w), rtol=0, atol=0)
    updates = [(args, results) for what, args, results in runs if what in ("index_copy_", "graph")]
    assert len(updates) == 3, runs
    for args, results in updates:
        assert results[0] in args, (args, results)  # the written storage's own buffer
