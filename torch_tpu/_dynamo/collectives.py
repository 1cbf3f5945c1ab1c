"""Compiled graphs that hold functional collectives (DTensor, FSDP2 and
``torch.distributed._functional_collectives`` under torch.compile).

A collective moves data between processes through the c10d backend, which
is not a node a tpu program can hold (the host-staging transport runs on the
host). The graph is cut at each collective: the parts between them compile
to tpu programs as usual, the collectives run eagerly through the backend in
between, like a graph break that Dynamo did not have to make.
"""
from __future__ import annotations

import torch
from torch.fx.passes.split_module import split_module

NAMESPACES = ("_c10d_functional", "c10d_functional", "_c10d_functional_autograd")


def is_collective(node: torch.fx.Node) -> bool:
    t = node.target
    return node.op == "call_function" and isinstance(t, torch._ops.OpOverload) and t.namespace in NAMESPACES


def has_collectives(gm: torch.fx.GraphModule) -> bool:
    return any(is_collective(n) for n in gm.graph.nodes)


def split_at_collectives(gm: torch.fx.GraphModule, compile_part):
    """gm as a chain of parts: compile_part(sub_gm) -> a boxed callable for
    each part without collectives; parts with them run as they are."""
    part_of, part = {}, 0
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        if is_collective(n):
            part += 1
            part_of[n] = part
            part += 1
        else:
            part_of[n] = part
    split = split_module(gm, None, lambda n: part_of[n], keep_original_order=True)
    for name, sub in list(split.named_children()):
        if has_collectives(sub):
            continue
        setattr(split, name, _Unboxed(compile_part(sub), _returns_tuple(sub)))
    split.recompile()
    return split


def _returns_tuple(sub: torch.fx.GraphModule) -> bool:
    out = next(n for n in sub.graph.nodes if n.op == "output")
    return isinstance(out.args[0], (tuple, list))


class _Unboxed(torch.nn.Module):
    """A boxed program called as the split graph calls its parts."""

    def __init__(self, boxed, returns_tuple: bool):
        super().__init__()
        self.boxed = boxed
        self.returns_tuple = returns_tuple

    def forward(self, *args):
        outs = self.boxed(list(args))
        return tuple(outs) if self.returns_tuple else outs[0]
