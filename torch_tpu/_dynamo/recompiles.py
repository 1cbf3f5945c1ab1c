"""Recompile explanations: with TORCH_TPU_LOG_RECOMPILES=1, each new program
for a graph that compiled before prints which input's which property changed
(compared with the signature of that graph's previous program)."""
from __future__ import annotations

import os
import sys

import torch

_last: dict = {}  # site -> {input name: facts}


def current_site():
    """The Dynamo frame being compiled (stable across its recompiles). Its
    first compile starts a new history: Dynamo reuses frame ids after reset()."""
    cid = torch._guards.CompileContext.current_compile_id()
    site = getattr(cid, "frame_id", None)
    if getattr(cid, "frame_compile_id", None) == 0:
        _last.pop(site, None)
    return site


def _facts(x):
    if isinstance(x, torch.Tensor):
        return {"dtype": x.dtype, "sizes": tuple(x.shape), "strides": tuple(x.stride()),
                "device": x.device, "requires_grad": x.requires_grad}
    if isinstance(x, (int, float, bool)):
        return {"value": x}
    return {"type": type(x).__name__}


def _changes(name, old, new):
    out = []
    if old.keys() != new.keys():
        return [f"input '{name}' changed kind"]
    for k in old:
        a, b = old[k], new[k]
        if a == b:
            continue
        if k in ("sizes", "strides") and len(a) == len(b):
            for d, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    out.append(f"input '{name}' {k[:-1]}[{d}] changed {x} -> {y}")
        else:
            out.append(f"input '{name}' {k} changed {a} -> {b}")
    return out


def explain(site, names, args) -> list[str]:
    """Differences from the previous signature of this site, and records the new one."""
    new = {n: _facts(a) for n, a in zip(names, args) if isinstance(a, torch.Tensor)}
    old = _last.get(site)
    _last[site] = new
    if old is None:
        return []
    lines = []
    for n in new:
        if n in old:
            lines += _changes(n, old[n], new[n])
        else:
            lines.append(f"input '{n}' is new")
    lines += [f"input '{n}' is gone" for n in old if n not in new]
    return lines or ["no input changed (a guard on something else failed)"]


def note(site, names, args, log=None) -> None:
    """log: the backend's log_recompiles option; None defers to the environment."""
    lines = explain(site, names, args)
    if log is None:
        log = os.environ.get("TORCH_TPU_LOG_RECOMPILES", "") == "1"
    if lines and log:
        print(f"torch_tpu: recompiling graph (frame {site}): " + "; ".join(lines), file=sys.stderr)
