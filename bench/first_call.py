"""Where the first call of a compiled model goes: Dynamo, AOTAutograd,
torch_tpu's graph description, lowering and XLA.

    python bench/first_call.py

Runs the main job's compiled generation (a tiny Qwen3 from a config, random
weights, `generate` with a static cache and Transformers' compile config
pointed at the "tpu" backend) in two fresh processes that share one new
compile-cache folder: the first compiles, the second loads the programs and
the graph (AOTAutograd's result, torch_tpu/_dynamo/graph_code.py) from it.
Eager generation runs first in each process, so the eager programs generate's
bookkeeping uses are already built; the compiled call's time is then the
graph's. Each process prints its first compiled call split into: the
backend's AOTAutograd (tracing the graph to core ATen, or loading its result
from the folder), torch_tpu's graph description (none when loaded), the
graph's first runs less XLA (lowering to StableHLO and
executing), XLA (compiling, or loading from the disk cache), Dynamo's
trace of the model's Python and its guards (torch._dynamo's own timers:
bytecode_tracing and build_guards; the same work on any device), and the
rest (Dynamo's other work, generate's own).
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def measure():
    import torch
    import torch_tpu
    import torch_tpu._dynamo.backend as backend
    from transformers import AutoModelForCausalLM
    from torch_tpu.examples import tiny_checkpoint

    spent = {"backend": 0.0, "describe": 0.0, "runs": 0.0}

    def timed(key, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - t0
        return wrapper

    from torch_tpu._dynamo import graph_code

    # Runs are timed at the compiled graph's call; the description only where
    # the graph is compiled (a graph loaded from AOTAutograd's cache skips it).
    graph_code.GraphCode.__call__ = timed("runs", graph_code.GraphCode.__call__)
    backend._aot = timed("backend", backend._aot)
    backend._compile_graph = timed("describe", backend._compile_graph)

    path = tiny_checkpoint.build()
    model = AutoModelForCausalLM.from_pretrained(path, device_map="tpu", dtype=torch.float32).eval()
    ids = torch.randint(3, model.config.vocab_size, (1, 8)).to("tpu")
    kw = dict(max_new_tokens=40, min_new_tokens=40, do_sample=False, cache_implementation="static")
    model.generate(ids, **kw, disable_compile=True).cpu()  # eager: builds generate's own small programs
    c0 = torch_tpu.metrics()["compile_seconds"]
    from torch._dynamo.utils import compilation_time_metrics as dynamo_timers
    dynamo_timers.clear()
    t0 = time.perf_counter()
    model.generate(ids, **kw, disable_compile=False).cpu()
    first = time.perf_counter() - t0
    xla = torch_tpu.metrics()["compile_seconds"] - c0
    trace = sum(sum(dynamo_timers.get(k, [])) for k in ("bytecode_tracing", "build_guards"))
    t0 = time.perf_counter()
    model.generate(ids, **kw, disable_compile=False).cpu()
    second = time.perf_counter() - t0
    return {"first": first, "second": second, "aot": spent["backend"] - spent["describe"],
            "describe": spent["describe"], "lower_and_run": spent["runs"] - xla, "xla": xla,
            "dynamo_trace": trace, "rest": first - spent["backend"] - spent["runs"] - trace}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(measure()))
        return
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    cache = tempfile.mkdtemp(prefix="torch_tpu_first_call_")
    env = dict(os.environ, TORCH_TPU_COMPILE_CACHE=cache)
    rows = []
    for label in ("first process (compiles)", "second process (disk caches)"):
        out = subprocess.run([sys.executable, __file__, "--child"], env=env, check=True, capture_output=True,
                             text=True).stdout
        rows.append((label, json.loads(out.strip().splitlines()[-1])))
    cols = [("first", "first call"), ("aot", "AOTAutograd"), ("describe", "describe"),
            ("lower_and_run", "lower+run"), ("xla", "XLA"), ("dynamo_trace", "Dynamo trace"), ("rest", "rest"),
            ("second", "second call")]
    print("compiled generate (tiny Qwen3, 40 new tokens), seconds:")
    print(f"{'':30s}" + "".join(f"{name:>13s}" for _, name in cols))
    for label, r in rows:
        print(f"{label:30s}" + "".join(f"{r[key]:13.2f}" for key, _ in cols))
    print(f"second process's first call: {rows[1][1]['first'] / rows[0][1]['first']:.0%} of the first's")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
