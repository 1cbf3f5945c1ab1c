"""The persistent compile cache (issue 19 item 1), across processes: a second
process loads its programs from disk; corrupted, truncated and deleted entries
are rebuilt with a warning naming them; two writers at once leave a consistent
folder and compile each program once; a process waits for the entry of a
program another process is compiling (and compiles it itself when none comes
or the wait runs out); TORCH_TPU_COMPILE_CACHE=0 turns it off; the size bound
evicts."""
import fcntl
import json
import os
import subprocess
import sys
import textwrap
import time

from helpers import run_at_once

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
    misses = 0
    for rc, out, err in run_at_once(cmd, 2, env=_env(tmp_path), timeout=TIMEOUT):
        counters, err = _result(subprocess.CompletedProcess(cmd, rc, out, err))
        assert counters["errors"] == 0, err
        misses += counters["misses"]
    # Each program compiled by one of them: the other loaded it, waiting if it
    # asked while the program was being compiled (compile_claim.h).
    assert misses == len(entries(tmp_path)), (misses, entries(tmp_path))
    # No temp or lock files left ("graphs" holds torch.compile's graphs, test_graph_cache.py).
    assert not [n for n in os.listdir(tmp_path) if not n.endswith(".xla") and n != "graphs"]
    after, err = run_child(tmp_path, "--compile")
    assert after["misses"] == 0 and after["errors"] == 0 and after["hits"] > 0, (after, err)


def _claim_every_entry(cache):
    """Takes the compile claim of every program in `cache` (as a process
    compiling them would) and moves the entries aside; returns the held lock
    files and the moved entries."""
    locks, moved = [], {}
    for name in entries(cache):
        f = open(cache / (name + ".lock"), "w")
        fcntl.flock(f, fcntl.LOCK_EX)
        locks.append(f)
        moved[name] = (cache / name).read_bytes()
        (cache / name).unlink()
    return locks, moved


def _child_that_says_ready(cache, **extra):
    # The child announces itself once torch_tpu is imported, before its first program.
    code = "import torch_tpu; print('ready', flush=True)\n" + CHILD
    return subprocess.Popen([sys.executable, "-c", code], env=_env(cache, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _release(locks, cache, restore=None):
    for name, data in (restore or {}).items():
        (cache / name).write_bytes(data)
    for f in locks:
        os.unlink(f.name)  # as a finished compiler does, before unlocking
        f.close()


def _finish(child, ready_read=False):
    try:
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
    if not ready_read:
        assert out.startswith("ready\n"), (out, err)
    return _result(subprocess.CompletedProcess(child.args, child.returncode, out, err))


def test_a_program_another_process_is_compiling_is_waited_for(tmp_path):
    first, _ = run_child(tmp_path)
    locks, moved = _claim_every_entry(tmp_path)
    child = _child_that_says_ready(tmp_path)
    assert child.stdout.readline() == "ready\n"
    time.sleep(2)  # the child is at its first program by now, waiting for our claim
    assert child.poll() is None, "finished while another process held its programs' claims"
    _release(locks, tmp_path, restore=moved)
    counters, err = _finish(child, ready_read=True)
    # Every program came from the entries "the other process" wrote: none compiled here.
    assert counters["waits"] >= 1 and counters["misses"] == 0, (counters, err)
    assert counters["hits"] == first["misses"] and counters["errors"] == 0, (counters, err)


def test_a_waiter_compiles_when_the_other_process_wrote_nothing(tmp_path):
    first, _ = run_child(tmp_path)
    locks, _ = _claim_every_entry(tmp_path)
    child = _child_that_says_ready(tmp_path)
    assert child.stdout.readline() == "ready\n"
    time.sleep(2)
    _release(locks, tmp_path)  # a failed compile: no entry
    counters, err = _finish(child, ready_read=True)
    assert counters["waits"] >= 1 and counters["misses"] == first["misses"] and counters["hits"] == 0, (counters, err)
    assert "compile cache" not in err, err


def test_the_wait_for_another_process_is_bounded(tmp_path):
    first, _ = run_child(tmp_path)
    locks, _ = _claim_every_entry(tmp_path)
    try:
        # Claims held until the child is done: it gives up waiting on each and compiles.
        child = _child_that_says_ready(tmp_path, TORCH_TPU_COMPILE_WAIT_S="0.2")
        counters, err = _finish(child)
    finally:
        _release(locks, tmp_path)
    assert counters["misses"] == first["misses"] and counters["hits"] == 0, (counters, err)
    warnings = [line for line in err.splitlines() if "another process has been compiling" in line]
    assert len(warnings) == first["misses"], err
    assert all(".xla.lock" in w for w in warnings), warnings


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
