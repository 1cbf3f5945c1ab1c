"""The eager program cache is bounded (least recently used first out): an
unbounded cache of XLA CPU executables exhausts the process's memory maps
after some thousands of distinct shapes and the process dies."""
import os
import subprocess
import sys
import textwrap


def test_program_cache_evicts_least_recently_used_and_frees_its_maps():
    script = textwrap.dedent("""
        import torch, torch_tpu

        def maps():
            with open("/proc/self/maps") as f:
                return sum(1 for _ in f)

        def run(n):
            x = torch.arange(n, dtype=torch.float32, device="tpu")
            got = (x * 3 + 1).cpu()
            torch.testing.assert_close(got, torch.arange(n, dtype=torch.float32) * 3 + 1)

        for n in range(1, 9):   # warm up: 3 programs per shape (arange, mul, add)
            run(n)
        before = maps()
        torch_tpu.reset_metrics()
        for n in range(9, 59):   # 150 more programs through an 8-entry cache
            run(n)
        m = torch_tpu.metrics()
        assert m["compiles"] == 150, m["compiles"]
        assert m["cache_evictions"] == 150, m["cache_evictions"]
        # Evicted executables release their code: the map count stays flat
        # (unbounded, it grows by a few maps per program).
        assert maps() - before < 100, (before, maps())
        torch_tpu.reset_metrics()
        run(58)                  # most recent: still cached
        assert torch_tpu.metrics()["compiles"] == 0
        run(1)                   # evicted long ago: compiled again, still right
        assert torch_tpu.metrics()["compiles"] == 3
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "TORCH_TPU_PROGRAM_CACHE_SIZE": "8"}, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_caches_shrink_when_the_process_nears_the_map_limit():
    # A count bound alone let a CI run over linear-algebra ops (dozens of maps
    # per program) reach vm.max_map_count: XLA's next compile failed and the
    # process crashed. Past half the limit every program cache drops its older
    # half; TORCH_TPU_MAP_LIMIT stands in for the kernel's limit here.
    script = textwrap.dedent("""
        import os, torch, torch_tpu

        def maps():
            with open("/proc/self/maps") as f:
                return sum(1 for _ in f)

        base = maps()
        os.environ["TORCH_TPU_MAP_LIMIT"] = str(2 * (base + 300))   # relief past base + 300
        torch_tpu.reset_metrics()
        peak = 0
        for n in range(1, 121):   # 360 programs, each keeping a few maps while cached
            x = torch.arange(n, dtype=torch.float32, device="tpu")
            got = (x * 3 + 1).cpu()
            torch.testing.assert_close(got, torch.arange(n, dtype=torch.float32) * 3 + 1)
            peak = max(peak, maps())
        m = torch_tpu.metrics()
        assert m["compiles"] == 360, m["compiles"]
        assert m["cache_evictions"] > 0, m["cache_evictions"]
        # Checked every 8th compile: the overshoot is a few programs' maps.
        assert peak - base < 300 + 200, (base, peak)
        print("ok", base, peak, m["cache_evictions"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().startswith("ok"), out.stdout
