"""The PyTorch/XLA side of bench/peers.py, run in torch_xla's own venv
(.venv-peers/xla, made by bench/setup_peers.sh) with PJRT_DEVICE=CPU.

It builds the same PyTorch workloads as peers.py (peers_torch.py, on the inputs
peers.py saved), in one mode per process (--mode): torch_xla's lazy mode
(torch_xla.sync() ends every step) or its eager mode
(torch_xla.experimental.eager_mode(True)), and answers peers.py's requests,
one JSON object per line on stdin, one JSON reply per line on stdout
(everything else it prints goes to stderr):

    {"op": "hello"}                        -> versions; whether the mode exists here
    {"op": "first", "w": name}             -> {"s", "compiles", "out": file with the result}
    {"op": "time", "w": name, "iters": n}  -> {"s": seconds per call, "compiles"}
    {"op": "quit"}

Compilations: torch_xla's UncachedCompile counter (lazy graphs and eager ops).
"""
import argparse
import json
import os
import sys
import traceback

REPLY = os.fdopen(os.dup(sys.stdout.fileno()), "w")
sys.stdout = sys.stderr  # torch_xla and transformers may print; replies alone go to REPLY

import torch  # noqa: E402
import torch_xla  # noqa: E402
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402

import peers_torch  # noqa: E402  (bench/ is this script's folder)

try:
    from torch_xla.experimental import eager_mode as _eager_mode
except ImportError:
    _eager_mode = None


def compiles():
    # XLA programs compiled in lazy (CompileTime) and eager (EagerOpCompileTime) mode alike
    return int(met.counter_value("UncachedCompile") or 0)


def make_system(mode):
    if mode == "lazy":
        return peers_torch.TorchSystem("torch_xla lazy", torch_xla.device(), sync=xm.wait_device_ops,
                                 step_end=torch_xla.sync, compiles=compiles)
    _eager_mode(True)
    return peers_torch.TorchSystem("torch_xla eager", torch_xla.device(), sync=xm.wait_device_ops, compiles=compiles)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--mode", choices=["lazy", "eager"], required=True)
    args = ap.parse_args()
    inputs = torch.load(args.inputs, weights_only=True)
    mode_ok = args.mode == "lazy" or _eager_mode is not None
    system = make_system(args.mode) if mode_ok else None
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        try:
            if op == "hello":
                reply = {"torch": torch.__version__, "torch_xla": torch_xla.__version__, "mode_ok": mode_ok,
                         "why": None if mode_ok else "torch_xla.experimental.eager_mode is missing"}
            elif op == "quit":
                REPLY.write(json.dumps({"bye": True}) + "\n")
                REPLY.flush()
                return
            else:
                w = msg["w"]
                if op == "first":
                    s, c, out = peers_torch.first_call(system, w, inputs, args.checkpoint)
                    path = os.path.join(args.outdir, f"xla-{args.mode}-{w}.pt")
                    torch.save(out.detach().cpu(), path)
                    reply = {"s": s, "compiles": c, "out": path}
                elif op == "time":
                    s, c = peers_torch.timed_calls(system, w, msg["iters"])
                    reply = {"s": s, "compiles": c}
                else:
                    reply = {"error": f"unknown op {op}"}
        except Exception as e:
            traceback.print_exc()
            reply = {"error": f"{type(e).__name__}: {e}"}
        REPLY.write(json.dumps(reply) + "\n")
        REPLY.flush()


if __name__ == "__main__":
    main()
