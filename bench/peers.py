"""torch_tpu side by side with its peers, in one run, on the same inputs:
torch_tpu eager (strict and fused: TORCH_TPU_EAGER_MODE=fused) and compiled (torch.compile backend="tpu"), PyTorch/XLA 2.9
lazy (torch_xla.sync() per step) and eager (PJRT_DEVICE=CPU, in its own venv,
driven through bench/peers_xla_worker.py), the same models in JAX under
jax.jit (bench/peers_jax.py, same weights) on jaxlib's own CPU client and on
the xla_cpu_pjrt plugin the tpu device runs on ("jax.jit@plugin": what the
plugin build costs, apart from our programs), and PyTorch CPU eager.

    bash bench/setup_peers.sh          # once: jax next to torch_tpu, .venv-peers/xla
    python bench/peers.py [--repeats N] [--workloads a,b] [--out docs/benchmarks.md]

Every system is timed round-robin (one sample of each in turn, repeated), so
load changes on the machine hit all of them alike; a sample is the wall time of
`iters` calls plus the wait for their results, divided by `iters`. The table
gives the median and the interquartile range of the samples, the ratios to PyTorch CPU and
to jax.jit (below 1: faster), the first call's wall time (compilation
included) and the XLA compilations of the first call and after warm-up.
Every system's first result is checked against PyTorch CPU's.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# PyTorch CPU's OpenMP threads spin while they wait; on a loaded 2-core machine
# that made its eager forward 10-40x slower than with passive waiting. Passive
# waiting keeps the CPU baseline from paying for the machine's other load.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from jax_plugin import plugin_device  # noqa: E402
from peers_torch import (ADAMW, BLOCK, HERE, NEW_TOKENS, ROOT, WORKLOADS, Block, TorchSystem,  # noqa: E402
                         first_call, make_inputs, timed_calls)


# --- the peers that run elsewhere ----------------------------------------------

class JaxSystem:
    """jax.jit on jaxlib's own XLA CPU client ("jax.jit"), or on the very
    plugin the tpu device runs on ("jax.jit@plugin": device given), which
    separates what our programs cost from what the plugin build costs."""

    def __init__(self, pj, name="jax.jit", device=None):
        self.pj, self.name, self.device, self.runs = pj, name, device, {}

    def _on_device(self):
        import contextlib
        import jax
        return contextlib.nullcontext() if self.device is None else jax.default_device(self.device)

    def first(self, w, inputs, checkpoint):
        with self._on_device():
            return self._first(w, inputs, checkpoint)

    def timed(self, w, iters):
        with self._on_device():
            return self._timed(w, iters)

    def _first(self, w, inputs, checkpoint):
        pj = self.pj
        if w in ("add16", "matmul1024"):
            a, b = (t.numpy() for t in inputs["add" if w == "add16" else "matmul"])
            built = pj.binary((lambda a, b: a + b) if w == "add16" else (lambda a, b: a @ b), a, b)
        elif w.startswith("qwen3") or w == "decode64":
            from transformers import AutoConfig
            from safetensors.torch import load_file
            state = load_file(os.path.join(checkpoint, "model.safetensors"))
            model = pj.Qwen3(AutoConfig.from_pretrained(checkpoint), state)
            if w == "decode64":
                built = pj.qwen3_decode(model, inputs["prompt"].numpy(), NEW_TOKENS)
            else:
                built = pj.qwen3_forward(model, inputs["ids_b1" if w.endswith("b1") else "ids_b8"].numpy())
        elif w == "train_block":
            block = Block(BLOCK["d"], BLOCK["heads"], BLOCK["vocab"])
            block.load_state_dict(inputs["block"])
            built = pj.block_train_step(block, inputs["tokens"].numpy(), inputs["targets"].numpy(), **ADAMW)
        else:
            raise ValueError(w)
        run, sync, output = built
        self.runs[w] = (run, sync)
        c0 = self.pj.compiles()
        t0 = time.perf_counter()
        run()
        sync()
        s = time.perf_counter() - t0
        return s, self.pj.compiles() - c0, torch.from_numpy(output().copy())

    def _timed(self, w, iters):
        run, sync = self.runs[w]
        c0 = self.pj.compiles()
        t0 = time.perf_counter()
        for _ in range(iters):
            run()
        sync()
        return (time.perf_counter() - t0) / iters, self.pj.compiles() - c0


class XlaWorker:
    """The torch_xla worker process (its own venv and torch); JSON lines."""

    def __init__(self, python, inputs_path, checkpoint, outdir, mode):
        env = dict(os.environ, PJRT_DEVICE="CPU")
        self.log = os.path.join(outdir, f"xla-worker-{mode}.log")
        cmd = [python, os.path.join(HERE, "peers_xla_worker.py"), "--inputs", inputs_path,
               "--checkpoint", checkpoint, "--outdir", outdir, "--mode", mode]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.log, "w"), text=True, env=env, cwd=HERE)
        self.hello = self.ask({"op": "hello"})

    def ask(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            lines = open(self.log).read().strip().splitlines()
            raise RuntimeError(f"torch_xla worker exited (code {self.proc.wait()}): {' / '.join(lines[-3:])}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply

    def close(self):
        try:
            self.ask({"op": "quit"})
        except Exception:
            pass
        self.proc.kill()


class XlaSystem:
    def __init__(self, worker, mode):
        self.worker, self.mode = worker, mode
        self.name = f"torch_xla {mode}"

    def first(self, w, inputs, checkpoint):
        r = self.worker.ask({"op": "first", "w": w})
        return r["s"], r["compiles"], torch.load(r["out"], weights_only=True)

    def timed(self, w, iters):
        r = self.worker.ask({"op": "time", "w": w, "iters": iters})
        return r["s"], r["compiles"]


class LocalSystem:
    """Adapts a TorchSystem to the first/timed interface of the peers."""

    def __init__(self, ts):
        self.ts, self.name = ts, ts.name

    def first(self, w, inputs, checkpoint):
        return first_call(self.ts, w, inputs, checkpoint)

    def timed(self, w, iters):
        return timed_calls(self.ts, w, iters)


# --- measuring ---------------------------------------------------------------

def same_result(out, ref):
    """None if out matches PyTorch CPU's ref, else what differs. Token ids must
    be equal; float results within 1e-4 (rtol and atol): XLA and the CPU order
    float32 reductions differently across a whole model, and this check only
    guards against timing a wrong program."""
    out = out.detach().cpu()
    if out.shape != ref.shape:
        return f"shape {tuple(out.shape)} != {tuple(ref.shape)}"
    if not ref.is_floating_point():
        return None if torch.equal(out, ref) else f"{int((out != ref).sum())} of {ref.numel()} tokens differ"
    err = (out.double() - ref.double()).abs()
    bad = err > 1e-4 + 1e-4 * ref.double().abs()
    return None if not bool(bad.any()) else f"max abs diff {err.max().item():.3g}"


def short(e):
    text = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")
    return text if len(text) < 160 else text[:157] + "..."


def measure(systems, workloads, inputs, checkpoint, repeats):
    """results[w][system] = dict(first, first_compiles, samples, compiles, calls, check, error)."""
    results = {}
    for w in workloads:
        desc, iters = WORKLOADS[w]
        print(f"-- {desc}", flush=True)
        res = results[w] = {}
        ref = None
        for sysm in systems:
            r = res[sysm.name] = {"samples": [], "compiles": 0, "calls": 0}
            try:
                s, c, out = sysm.first(w, inputs, checkpoint)
                r.update(first=s, first_compiles=c)
                if sysm.name == "PyTorch CPU":  # measured first: the reference
                    ref = out.detach().cpu()
                r["check"] = same_result(out, ref) if ref is not None else "no PyTorch CPU result to compare"
                warm = 0
                for _ in range(2):  # warm-up: the second call may still compile (e.g. caches)
                    _, c = sysm.timed(w, 1)
                    warm = None if c is None else warm + c
                r["warm_compiles"] = warm
            except Exception as e:  # a failing system is reported in its cell; the others go on
                r["error"] = short(e)
                print(f"   {sysm.name}: {r['error']}", flush=True)
        live = [s for s in systems if "error" not in res[s.name]]
        for _ in range(repeats):
            for sysm in live:
                r = res[sysm.name]
                if "error" in r:
                    continue
                try:
                    s, c = sysm.timed(w, iters)
                except Exception as e:
                    r["error"] = short(e)
                    continue
                r["samples"].append(s)
                r["calls"] += iters
                r["compiles"] = None if c is None or r["compiles"] is None else r["compiles"] + c
        for sysm in systems:
            r = res[sysm.name]
            if r["samples"]:
                print(f"   {sysm.name:18s} {fmt_time(statistics.median(r['samples']))}"
                      f"  first {r['first']:.3f}s  compiles {r['first_compiles']}/{r['compiles']}", flush=True)
    return results


# --- reporting ---------------------------------------------------------------

def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def label(w):
    """(a), (b), (c) b1, ... : the workload's letter."""
    letter = WORKLOADS[w][0].split(" ")[0]
    return f"{letter} {w[-2:]}" if w.startswith("qwen3_fwd") else letter


def iqr(v):
    """The interquartile range (25th-75th percentile) of the samples."""
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def cell_time(r):
    if "error" in r or not r["samples"]:
        return f"failed: {r.get('error', 'no samples')}"
    lo, hi = iqr(r["samples"])
    mark = "" if r.get("check") is None else " (result differs)"
    return f"{fmt_time(statistics.median(r['samples']))} ({fmt_time(lo)}-{fmt_time(hi)}){mark}"


def median(r):
    return statistics.median(r["samples"]) if r.get("samples") and "error" not in r else None


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"


def compare(mine, peer):
    """ahead / behind when the two interquartile ranges do not overlap."""
    (lo, hi), (plo, phi) = iqr(mine["samples"]), iqr(peer["samples"])
    if hi < plo:
        return "ahead"
    if lo > phi:
        return "behind"
    return "ranges overlap"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


SYSTEMS = ["PyTorch CPU", "tpu eager", "tpu fused", "tpu compiled", "jax.jit", "jax.jit@plugin", "torch_xla lazy",
           "torch_xla eager"]
TORCH_TPU_SYSTEMS = ("tpu eager", "tpu fused", "tpu compiled")  # the columns compared with the peers


def report(results, meta, notes, missing):
    """The markdown report. missing: {system: why} for peers that could not run;
    their columns stay in every table, marked "not measured"."""
    names = SYSTEMS
    na = "not measured (see Notes)"

    def get(w, n):
        return results[w].get(n)

    lines = ["# torch_tpu and its peers, measured in one run", "",
             f"Written by `{meta['command']}` on {meta['date']}.", "",
             f"Machine: {meta['machine']}.", f"Versions: {meta['versions']}.", "",
             f"Load: {meta['load']}", "",
             "Median time per call over the timed samples, with their interquartile range; every system is "
             "timed round-robin in the same run on the same inputs (bench/peers.py's docstring says how), and "
             "every system's first result equals PyTorch CPU's (token ids exactly, floats within 1e-4) unless a "
             "note says otherwise. torch_tpu's `tpu` device (XLA CPU PJRT plugin), jax.jit (jaxlib's own CPU "
             "client) and jax.jit@plugin (the same JAX programs on the plugin the tpu device runs on) run in "
             "one process; torch_xla runs with PJRT_DEVICE=CPU in two worker processes, one per mode. PyTorch "
             "CPU uses 2 threads with OMP_WAIT_POLICY=PASSIVE (see bench/peers.py).", ""]
    wl = list(results)
    lines += ["## Time per call", ""]
    rows = []
    for w in wl:
        rows.append([WORKLOADS[w][0]] + [cell_time(get(w, n)) if get(w, n) else na for n in names])
    lines.append(table(["workload"] + names, rows))
    for peer in ("PyTorch CPU", "jax.jit", "jax.jit@plugin"):
        lines += ["", f"## Ratio to {peer} (time / {peer}'s time; below 1: faster)", ""]
        rows = []
        for w in wl:
            base = median(get(w, peer) or {})
            rows.append([WORKLOADS[w][0]] + [ratio(median(get(w, n) or {}), base) for n in names])
        lines.append(table(["workload"] + names, rows))
    lines += ["", "## (f) Compilation: first call and XLA compilations", "",
              "Each cell: the wall time of the first call after the inputs and weights are on the device "
              "(compilation included; one sample), then the XLA programs compiled by the first call / by the "
              "two warm-up calls / by all timed calls after them (their count). The workloads run in the "
              "table's order, so a program an earlier workload compiled is reused by a later one. "
              "torch_tpu: `torch_tpu.metrics()['compiles']` (single ops and whole graphs); torch_xla: its "
              "UncachedCompile counter (lazy graphs and eager ops); JAX: jax.monitoring's backend_compile "
              "events; PyTorch CPU compiles nothing.", ""]
    rows = []
    for w in wl:
        row = [WORKLOADS[w][0]]
        for n in names:
            r = get(w, n)
            if not r or "first" not in r:
                row.append(na if not r else "failed")
                continue
            c = "-" if r["first_compiles"] is None else \
                f"{r['first_compiles']} / {r.get('warm_compiles')} / {r['compiles']} ({r['calls']} calls)"
            row.append(f"{r['first']:.2f} s; {c}")
        rows.append(row)
    lines.append(table(["workload"] + names, rows))
    lines += ["", "## Where torch_tpu is ahead and where it is behind", "",
              "Time per call: torch_tpu's median / the peer's median; \"ahead\" or \"behind\" only where the "
              "interquartile ranges of the two do not overlap, \"ranges overlap\" otherwise.", ""]
    peers = ("PyTorch CPU", "jax.jit", "jax.jit@plugin", "torch_xla lazy", "torch_xla eager")
    for mine in TORCH_TPU_SYSTEMS:
        for p in peers:
            seen = {"ahead": [], "behind": [], "ranges overlap": []}
            for w in wl:
                m, o = get(w, mine), get(w, p)
                if m and o and median(m) is not None and median(o) is not None:
                    seen[compare(m, o)].append(f"{label(w)} {median(m) / median(o):.2f}x")
            if any(seen.values()):
                lines.append(f"- {mine} vs {p}: " + "; ".join(
                    f"{k} on {', '.join(v)}" for k, v in seen.items() if v) + ".")
    lines += ["", "Per workload:", ""]
    for w in wl:
        parts = []
        for mine in TORCH_TPU_SYSTEMS:
            m = get(w, mine)
            if not m or median(m) is None:
                parts.append(f"{mine}: not measured")
                continue
            cmp = [f"{median(m) / median(get(w, p)):.2f}x {p} ({compare(m, get(w, p))})"
                   for p in peers if get(w, p) and median(get(w, p)) is not None]
            parts.append(f"{mine}: " + ", ".join(cmp))
        lines.append(f"- {WORKLOADS[w][0]}: " + "; ".join(parts) + ".")
    lines += ["", "First call (compile latency; one sample each, so no spread): torch_tpu's first call / the "
              "peer's first call.", ""]
    for w in wl:
        parts = []
        for mine in TORCH_TPU_SYSTEMS:
            m = get(w, mine)
            if not m or "first" not in m:
                continue
            cmp = [f"{m['first'] / get(w, p)['first']:.2f}x {p}" for p in peers[1:]
                   if get(w, p) and get(w, p).get("first")]
            after = "" if m["compiles"] is None else f", {m['compiles']} compilations after warm-up"
            parts.append(f"{mine} {m['first']:.2f} s = " + ", ".join(cmp) + after)
        if parts:
            lines.append(f"- {WORKLOADS[w][0]}: " + "; ".join(parts) + ".")
    if "decode64" in results:
        counts = [f"{n} {get('decode64', n)['compiles']}" for n in names[1:]
                  if get("decode64", n) and get("decode64", n).get("calls")]
        lines += ["", f"XLA compilations during {label('decode64')} after warm-up, in "
                  f"{get('decode64', 'tpu eager')['calls'] if get('decode64', 'tpu eager') else '?'} timed decodes "
                  f"each: " + ", ".join(counts) + "."]
    notes = [f"{n}: not measured: {why}" for n, why in missing.items()] + notes
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def git_commit(so_path):
    """The checkout's commit, and whether the loaded torch_tpu build includes
    uncommitted csrc/ or torch_tpu/ edits (judged by file times against the .so)."""
    def git(*a):
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = [line.split(maxsplit=1)[1] for line in git("status", "--porcelain", "--untracked-files=no",
                                                           "csrc", "torch_tpu").splitlines()]
    except (OSError, subprocess.CalledProcessError):
        return "commit unknown"
    if not dirty:
        return f"commit {head}"
    built = os.path.getmtime(so_path)
    if all(f.startswith("csrc/") and os.path.getmtime(os.path.join(ROOT, f)) > built for f in dirty):
        return f"commit {head}; the build predates the uncommitted csrc/ edits in the checkout"
    return f"commit {head} with uncommitted edits in csrc/ or torch_tpu/"


def machine():
    model = "unknown CPU"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal"):
            mem = int(line.split()[1]) / 2**20
    return f"{model}, {os.cpu_count()} cores, {mem:.0f} GiB memory, {platform.system()} {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated: " + ", ".join(WORKLOADS))
    ap.add_argument("--out", default=None, help="write the report (markdown) here, e.g. docs/benchmarks.md")
    ap.add_argument("--xla-python", default=os.path.join(ROOT, ".venv-peers", "xla", "bin", "python"))
    ap.add_argument("--load-note", default="", help="added to the report's load line")
    args = ap.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w}; known: {', '.join(WORKLOADS)}")

    import torch_tpu
    import torch_tpu._dynamo
    from torch_tpu.examples import tiny_checkpoint
    torch_tpu._dynamo.register()
    load_start = os.getloadavg()
    t_start = time.perf_counter()
    notes = []
    checkpoint = tiny_checkpoint.build()
    inputs = make_inputs(checkpoint)

    def tpu_compiles():  # counts single-op and whole-graph programs alike
        return torch_tpu.metrics()["compiles"]

    systems = [LocalSystem(TorchSystem("PyTorch CPU", "cpu")),
               LocalSystem(TorchSystem("tpu eager", "tpu", sync=torch.tpu.synchronize, compiles=tpu_compiles)),
               LocalSystem(TorchSystem("tpu fused", "tpu", sync=torch.tpu.synchronize, compiles=tpu_compiles,
                                       eager_mode="fused")),
               LocalSystem(TorchSystem("tpu compiled", "tpu", compiled=True, sync=torch.tpu.synchronize,
                                       compiles=tpu_compiles))]
    versions = [f"torch {torch.__version__}", f"torch_tpu {torch_tpu.__version__} ({git_commit(torch_tpu._C.__file__)})"]
    missing = {}  # peer -> why it is not measured; its column stays, marked so

    def setup_error(peer):
        path = os.path.join(ROOT, ".venv-peers", f"{peer}.error")
        if not os.path.exists(path):
            return f"`bash bench/setup_peers.sh {peer}` was not run (or did not finish)"
        return "bench/setup_peers.sh failed: " + " ".join(open(path).read().split())

    try:
        import jax
        jax.config.update("jax_platforms", "cpu,xla_cpu_pjrt")
        on_plugin = plugin_device(jax)  # registers the plugin: before any JAX backend starts
        if on_plugin is None:
            jax.config.update("jax_platforms", "cpu")
        import peers_jax
        systems.append(JaxSystem(peers_jax))
        versions.append(f"jax {jax.__version__}")
        if on_plugin is not None:
            systems.append(JaxSystem(peers_jax, "jax.jit@plugin", on_plugin))
        else:
            missing["jax.jit@plugin"] = "JAX could not load the xla_cpu_pjrt plugin (printed above)"
    except Exception as e:
        missing["jax.jit"] = missing["jax.jit@plugin"] = f"`import jax` failed ({short(e)}); {setup_error('jax')}"
    workers = []
    tmp = tempfile.mkdtemp(prefix="peers-")
    inputs_path = os.path.join(tmp, "inputs.pt")
    torch.save(inputs, inputs_path)
    if not os.path.exists(args.xla_python):
        for mode in ("lazy", "eager"):
            missing[f"torch_xla {mode}"] = f"no {args.xla_python}; {setup_error('xla')}"
    else:
        # One process per mode: torch_xla's compile cache is per process, and
        # one mode would otherwise reuse the other's programs.
        for mode in ("lazy", "eager"):
            try:
                worker = XlaWorker(args.xla_python, inputs_path, checkpoint, tmp, mode)
                workers.append(worker)
                if mode == "lazy":
                    versions.append(f"torch_xla {worker.hello['torch_xla']} (torch {worker.hello['torch']})")
                if worker.hello.get("mode_ok"):
                    systems.append(XlaSystem(worker, mode))
                else:
                    missing[f"torch_xla {mode}"] = worker.hello.get("why")
            except Exception as e:
                err = os.path.join(ROOT, ".venv-peers", "xla.error")
                missing[f"torch_xla {mode}"] = f"the worker failed to start: {short(e)}" + \
                    (f"; {setup_error('xla')}" if os.path.exists(err) else "")
    for n, why in missing.items():
        print(f"{n}: not measured: {why}")
    m0 = torch_tpu.metrics()
    try:
        results = measure(systems, workloads, inputs, checkpoint, args.repeats)
    finally:
        for worker in workers:
            worker.close()
        shutil.rmtree(tmp, ignore_errors=True)
    m1 = torch_tpu.metrics()
    if m1["fallbacks"] > m0["fallbacks"]:
        notes.append(f"torch_tpu ran {m1['fallbacks'] - m0['fallbacks']} ops on the CPU fallback: "
                     f"{m1['fallbacks_by_op']}")
    for w, res in results.items():
        for n, r in res.items():
            if r.get("check"):
                notes.append(f"{n}, {WORKLOADS[w][0]}: result differs from PyTorch CPU: {r['check']}")
            if "error" in r:
                notes.append(f"{n}, {WORKLOADS[w][0]}: not measured: {r['error']}")
    load_end = os.getloadavg()
    meta = {
        "command": "python bench/peers.py " + shlex.join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": ", ".join(versions),
        "load": f"1-minute load average {load_start[0]:.1f} at the start and {load_end[0]:.1f} at the end "
                f"(on {os.cpu_count()} cores), {time.perf_counter() - t_start:.0f} s in all. {args.load_note}".strip(),
    }
    text = report(results, meta, notes, missing)
    print()
    print(text)
    if args.out:
        from report_sections import write_keeping_sections

        write_keeping_sections(args.out, text)  # other benchmarks' sections stay
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
