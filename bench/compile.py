"""torch.compile(backend="tpu") vs eager tpu, PyTorch CPU eager and jax.jit,
measured in the same run, for an MLP and a small transformer block (forward,
float32, batch as below).

    setup (once, not needed by CI):  pip install "jax==0.12.*"   # Python >= 3.12
                                     pip install "jax==0.10.2"   # Python 3.11 (newest there)
    python bench/compile.py [--repeats N]

jax.jit runs twice: on jaxlib's own XLA CPU client ("jax.jit"), and on the
very PJRT plugin the tpu device uses here, xla_cpu_pjrt, registered as a JAX
plugin ("jax@plugin": XLA's best on our device, so compiled/jax@plugin measures
the programs torch_tpu emits and the way it runs them). The two differ where
jaxlib's XLA is newer: it lowers these dots to YNNPACK fusions, which the
plugin's build does not (2.4x on the MLP, 2026-12-05). Prints median seconds
per call and the ratios compiled/eager-tpu, compiled/cpu-eager, compiled/jax.jit
and compiled/jax@plugin (below 1: compiled tpu faster). tpu and JAX times
include waiting for the results. Then one compiled tiny graph's call split
by layer, with Dynamo's own floor, and bench/peers.py's compiled greedy
decode beside the same decode with a backend that replays stored outputs
(Dynamo's per-call work on a Transformers forward, plus the loop's eager ops).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

import torch_tpu
import torch_tpu._dynamo

torch_tpu._dynamo.register()  # a no-op where the package's entry point registers it

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "compile"))
from models import MLP, Block  # noqa: E402
from jax_plugin import plugin_device  # noqa: E402


def seconds_per_call(runs, iters, repeats):
    """Median seconds per call of each {name: (fn, sync)}, measured round-robin
    so that load changes on the machine hit every contender alike."""
    for fn, sync in runs.values():
        for _ in range(3):
            fn()
        sync()
    samples = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (fn, sync) in runs.items():
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            sync()
            samples[name].append((time.perf_counter() - t0) / iters)
    return {name: statistics.median(v) for name, v in samples.items()}


# --- the same computations in JAX, from the torch modules' weights ----------

def jax_mlp(jnp, jax, m):
    w = [(jnp.asarray(l.weight.detach().numpy()), jnp.asarray(l.bias.detach().numpy())) for l in (m.fc1, m.fc2, m.fc3)]

    def f(w, x):
        (w1, b1), (w2, b2), (w3, b3) = w
        h = jax.nn.gelu(x @ w1.T + b1, approximate=False)
        h = jax.nn.relu(h @ w2.T + b2)
        return h @ w3.T + b3
    return f, w


def jax_block(jnp, jax, m):
    p = {k: jnp.asarray(v.detach().numpy()) for k, v in m.state_dict().items()}
    eps1, eps3 = m.norm1.eps, m.norm_out.eps
    heads = m.heads

    def rms(x, w, eps):
        eps = jnp.finfo(x.dtype).eps if eps is None else eps
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * w

    def f(p, tokens):
        x = p["emb.weight"][tokens]
        b, t, d = x.shape
        qkv = (rms(x, p["norm1.weight"], eps1) @ p["qkv.weight"].T).reshape(b, t, 3, heads, d // heads)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        s = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(d // heads)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
        a = jax.nn.softmax(s, axis=-1) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(b, t, d) @ p["proj.weight"].T
        mu = x.mean(-1, keepdims=True)
        h = (x - mu) * jax.lax.rsqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * p["norm2.weight"] + p["norm2.bias"]
        g = jax.nn.silu(h @ p["gate.weight"].T + p["gate.bias"]) * (h @ p["up.weight"].T + p["up.bias"])
        x = x + g @ p["down.weight"].T + p["down.bias"]
        return rms(x, p["norm_out.weight"], eps3) @ p["head.weight"].T
    return f, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu,xla_cpu_pjrt")
        on_plugin = plugin_device(jax)
    except ImportError:
        jax = jnp = on_plugin = None
        print("jax not installed (see the setup line in bench/compile.py): the jax.jit columns are skipped")
    torch.manual_seed(0)
    cases = {
        "MLP 512-2048-2048-512, batch 256": (MLP(512, 2048, 512), lambda: torch.randn(256, 512), jax_mlp, 20),
        "block d=256 h=8 seq 256, batch 4": (Block(256, 8, 2000), lambda: torch.randint(0, 2000, (4, 256)),
                                           jax_block, 10),
    }
    print(f"torch {torch.__version__}, torch_tpu {torch_tpu.__version__}, jax {jax.__version__ if jax else '-'}, "
          f"tpu = {torch.tpu.get_device_name()} via PJRT, {torch.get_num_threads()} CPU threads")
    print(f"{'forward, float32':34s} {'compiled':>10s} {'tpu eager':>10s} {'cpu eager':>10s} {'jax.jit':>10s} "
          f"{'jax@plugin':>10s} {'c/eager':>8s} {'c/cpu':>7s} {'c/jax':>7s} {'c/jax@plugin':>12s}")
    for name, (model, make, to_jax, iters) in cases.items():
        model.eval()
        x = make()
        tm = __import__("copy").deepcopy(model).to("tpu")
        tx = x.to("tpu")
        compiled_model = torch.compile(tm, backend="tpu", fullgraph=True)
        runs = {
            "cpu": (lambda: model(x), lambda: None),
            "eager": (lambda: tm(tx), torch.tpu.synchronize),
            "compiled": (lambda: compiled_model(tx), torch.tpu.synchronize),
        }
        if jax is not None:
            f, w = to_jax(jnp, jax, model)
            jf = jax.jit(f)
            xj = jnp.asarray(x.numpy())
            with torch.no_grad():
                ref = model(x)
            err = (torch.tensor(np.asarray(jf(w, xj))) - ref).abs().max().item()
            assert err < 1e-3, f"{name}: the JAX version differs from the torch model by {err}"
            last = []
            runs["jax"] = (lambda: last.__setitem__(slice(None), [jf(w, xj)]), lambda: last[0].block_until_ready())
            if on_plugin is not None:
                wp, xp = jax.device_put((w, xj), on_plugin)
                err = (torch.tensor(np.asarray(jf(wp, xp))) - ref).abs().max().item()
                assert err < 1e-3, f"{name}: jax.jit on the plugin differs from the torch model by {err}"
                last_p = []
                runs["jax@plugin"] = (lambda: last_p.__setitem__(slice(None), [jf(wp, xp)]),
                                      lambda: last_p[0].block_until_ready())
        with torch.no_grad():
            t = seconds_per_call(runs, iters, args.repeats)
        jx, jp = t.get("jax", float("nan")), t.get("jax@plugin", float("nan"))
        c = t["compiled"]
        print(f"{name:34s} {c * 1e3:8.2f}ms {t['eager'] * 1e3:8.2f}ms {t['cpu'] * 1e3:8.2f}ms {jx * 1e3:8.2f}ms "
              f"{jp * 1e3:8.2f}ms {c / t['eager']:8.2f} {c / t['cpu']:7.2f} {c / jx:7.2f} {c / jp:12.2f}")
    tiny_graph_call(jax, jnp, args.repeats)
    decode_floor(args.repeats)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


def tiny_graph_call(jax, jnp, repeats, iters=2000):
    """Per-call cost of a compiled tiny graph, (x * 2 + y).sin() on 16 floats,
    split by layer: the whole torch.compile call; AOTAutograd's callable (what
    the backend returns to Dynamo, so the difference is Dynamo's guards and
    frame wrappers); torch_tpu's runner alone (Python shim + the C++ program
    run: argument checks, cache lookup, execute, outputs); and jax.jit. Then
    Dynamo's own floor: the same lambda compiled with a backend that hands
    back a stored result (no graph runs), on tpu and on CPU tensors: what
    any torch.compile call costs here before a backend's callable runs."""
    import torch_tpu._dynamo.backend as backend
    layers = {}
    compile_graph, aot = backend._compile_graph, backend._aot

    def keep_runner(gm, example_inputs, kind):
        layers["runner"] = compile_graph(gm, example_inputs, kind)
        return layers["runner"]

    def keep_aot(gm, example_inputs):
        layers["aot"] = aot(gm, example_inputs)
        return layers["aot"]

    backend._compile_graph, backend._aot = keep_runner, keep_aot
    folder = backend._graph_code._folder
    backend._graph_code._folder = lambda: ""  # compiled here, not loaded from the graph cache: keeps the runner
    try:
        torch._dynamo.reset()
        x, y = torch.randn(16, device="tpu"), torch.randn(16, device="tpu")
        f = torch.compile(lambda x, y: (x * 2 + y).sin(), backend="tpu", fullgraph=True)
        with torch.no_grad():
            f(x, y)
    finally:
        backend._compile_graph, backend._aot = compile_graph, aot
        backend._graph_code._folder = folder
    runs = {"torch.compile call": (lambda: f(x, y), torch.tpu.synchronize),
            "AOTAutograd callable": (lambda: layers["aot"](x, y), torch.tpu.synchronize),
            "torch_tpu runner": (lambda: layers["runner"]([x, y]), torch.tpu.synchronize)}
    for device in ("tpu", "cpu"):
        a, b = x.to(device), y.to(device)
        stored = [(a * 2 + b).sin()]
        floor = torch.compile(lambda x, y: (x * 2 + y).sin(), fullgraph=True,
                              backend=lambda gm, example_inputs: lambda *args: stored)
        runs[f"Dynamo alone, {device}"] = ((lambda floor=floor, a=a, b=b: floor(a, b)), lambda: None)
    if jax is not None:
        jf = jax.jit(lambda x, y: jnp.sin(x * 2 + y))
        xj, yj = jnp.asarray(x.cpu().numpy()), jnp.asarray(y.cpu().numpy())
        last = []
        runs["jax.jit"] = (lambda: last.__setitem__(slice(None), [jf(xj, yj)]), lambda: last[0].block_until_ready())
    with torch.no_grad():
        t = seconds_per_call(runs, iters, repeats)
    jx = t.get("jax.jit", float("nan"))
    print("compiled tiny graph (x * 2 + y).sin(), 16 floats, per call:")
    for name, s in t.items():
        print(f"  {name:22s} {s * 1e6:7.1f}us  {s / jx:5.2f}x jax.jit")

def decode_floor(repeats):
    """bench/peers.py's compiled greedy decode (tiny Qwen3, static cache, 64
    tokens, one compiled forward call per token) with the "tpu" backend, and
    with a backend that runs each graph once and then hands back its stored
    outputs: what is left is Dynamo's per-call work on a Transformers forward
    (its guards) and the loop's few eager ops, the part of the decode that no
    backend's programs can remove."""
    from peers_torch import build_torch, make_inputs
    from torch_tpu.examples import tiny_checkpoint

    def replaying(gm, example_inputs):
        stored = []

        def run(*args):
            if not stored:
                stored.append(gm(*args))
            return stored[0]
        return run

    checkpoint = tiny_checkpoint.build()
    inputs = make_inputs(checkpoint)
    runs = {name: (build_torch("decode64", inputs, checkpoint, "tpu", backend, lambda: None), torch.tpu.synchronize)
            for name, backend in (("tpu backend", True), ("Dynamo + loop ops", replaying))}
    t = seconds_per_call(runs, 1, repeats)
    print("compiled greedy decode, 64 tokens (bench/peers.py's (d)):")
    for name, s in t.items():
        print(f"  {name:22s} {s * 1e3:7.2f}ms  {s / t['tpu backend']:5.0%}")


if __name__ == "__main__":
    main()
