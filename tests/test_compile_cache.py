"""The persistent compile cache (issue 19 item 1), across processes: a second
process loads its programs from disk; corrupted, truncated and deleted entries
are rebuilt with a warning naming them; two writers at once leave a consistent
folder; TORCH_TPU_COMPILE_CACHE=0 turns it off; the size bound evicts."""
import json
import os
import subprocess
import sys
import textwrap

TIMEOUT = 300  # seconds per child process; a hang fails the test, not the run

# Eager ops (and, when asked, a torch.compile graph) checked against the CPU;
# prints the cache counters as JSON on its last line.
CHILD = textwrap.dedent("""
    import json, sys, torch, torch_tpu
    x = torch.linspace(-3, 3, 24).reshape(4, 6)
    def f(a):
        return (a.sin() * 2 + a).sum(0), a.exp().mean(), a @ a.t()
    ok = all(torch.allclose(t.cpu(), c, rtol=1e-5, atol=1e-5) for t, c in zip(f(x.to("tpu")), f(x)))
    if "--compile" in sys.argv:
        g = torch.compile(f, backend="tpu")
        ok = ok and all(torch.allclose(t.cpu(), c, rtol=1e-5, atol=1e-5) for t, c in zip(g(x.to("tpu")), f(x)))
    m = torch_tpu.metrics()
    print(json.dumps({"ok": ok, "compiles": m["compiles"], "graph_compiles": m["graph_compiles"],
                      **{k[len("disk_cache_"):]: v for k, v in m.items() if k.startswith("disk_cache_")}}))
""")


def _env(cache, **extra):
    env = dict(os.environ, TORCH_TPU_COMPILE_CACHE=str(cache))
    env.pop("TORCH_TPU_COMPILE_CACHE_MAX_MB", None)
    env.update(extra)
    return env


def _result(proc):
    out, err = proc.stdout, proc.stderr
    assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{out}\n{err}"
    counters = json.loads(out.strip().splitlines()[-1])
    assert counters["ok"], counters
    return counters, err


def run_child(cache, *args, **extra):
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], env=_env(cache, **extra),
                          capture_output=True, text=True, timeout=TIMEOUT)
    return _result(proc)


def entries(cache):
    return sorted(p for p in os.listdir(cache) if p.endswith(".xla"))


def test_second_process_loads_from_disk(tmp_path):
    first, _ = run_child(tmp_path, "--compile")
    assert first["hits"] == 0 and first["misses"] > 0 and first["writes"] == first["misses"]
    assert len(entries(tmp_path)) == first["writes"]
    second, err = run_child(tmp_path, "--compile")
    # Same programs obtained on memory misses, none compiled by XLA.
    assert second["compiles"] == first["compiles"] and second["graph_compiles"] == first["graph_compiles"]
    assert second["hits"] == first["misses"] and second["misses"] == 0, second
    assert second["errors"] == 0 and "compile cache" not in err, err


def test_damaged_entries_are_rebuilt_with_a_warning(tmp_path):
    first, _ = run_child(tmp_path)
    names = entries(tmp_path)
    assert len(names) >= 3
    corrupt, truncate, delete = (tmp_path / n for n in names[:3])
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte in the payload
    corrupt.write_bytes(bytes(data))
    truncate.write_bytes(truncate.read_bytes()[: truncate.stat().st_size // 2])
    delete.unlink()

    second, err = run_child(tmp_path)
    assert second["errors"] == 2 and second["misses"] == 3, (second, err)
    assert second["hits"] == first["misses"] - 3
    warnings = [line for line in err.splitlines() if "compile cache" in line]
    assert len(warnings) == 2, err
    assert any(corrupt.name in w and "checksum" in w for w in warnings), warnings
    assert any(truncate.name in w and "truncated" in w for w in warnings), warnings

    # The damaged and deleted entries were rewritten whole.
    third, err = run_child(tmp_path)
    assert third["hits"] == first["misses"] and third["misses"] == 0 and third["errors"] == 0, (third, err)


def test_two_writers_at_once(tmp_path):
    cmd = [sys.executable, "-c", CHILD, "--compile"]
    procs = [subprocess.Popen(cmd, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(procs, outs):
        counters, err = _result(subprocess.CompletedProcess(p.args, p.returncode, out, err))
        assert counters["errors"] == 0, err
    assert not [n for n in os.listdir(tmp_path) if not n.endswith(".xla")]  # no temp files left
    after, err = run_child(tmp_path, "--compile")
    assert after["misses"] == 0 and after["errors"] == 0 and after["hits"] > 0, (after, err)


def test_zero_turns_it_off(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    counters, _ = run_child("0", HOME=str(home))
    assert counters["hits"] == counters["misses"] == counters["writes"] == 0
    assert not (home / ".cache").exists()


def test_default_folder_is_under_home(tmp_path):
    env_home = tmp_path / "home"
    env_home.mkdir()
    proc = subprocess.run([sys.executable, "-c", CHILD], env=_env("", HOME=str(env_home)),
                          capture_output=True, text=True, timeout=TIMEOUT)
    counters, _ = _result(proc)
    assert counters["writes"] > 0
    assert len(entries(env_home / ".cache" / "torch_tpu" / "xla")) == counters["writes"]


def test_size_bound_evicts_least_recently_used(tmp_path):
    bound_mb = 0.01  # ~10 KB: a couple of entries
    counters, _ = run_child(tmp_path, TORCH_TPU_COMPILE_CACHE_MAX_MB=str(bound_mb))
    assert counters["writes"] > 2 and counters["evictions"] > 0, counters
    total = sum((tmp_path / n).stat().st_size for n in entries(tmp_path))
    assert 0 < total <= bound_mb * 1024 * 1024
    # Unbounded again: what survived loads, what was evicted compiles again.
    survivors = len(entries(tmp_path))
    again, err = run_child(tmp_path)
    assert again["hits"] == survivors and again["misses"] == counters["writes"] - survivors, (again, err)
    assert again["errors"] == 0, err


def test_bad_size_bound_warns_and_uses_default(tmp_path):
    counters, err = run_child(tmp_path, TORCH_TPU_COMPILE_CACHE_MAX_MB="lots")
    assert counters["writes"] > 0 and "TORCH_TPU_COMPILE_CACHE_MAX_MB" in err
