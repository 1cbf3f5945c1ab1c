"""Compiled graphs holding nodes that run outside a tpu program: functional
collectives (DTensor, FSDP2, ``torch.distributed._functional_collectives``).

A collective moves data between processes through the c10d backend (the
host-staging transport runs on the host), not inside a program. The graph is
cut at each one: the parts between them compile to tpu programs as usual,
the collectives run eagerly in between, like a graph break that Dynamo did
not have to make. (jax_ops, by contrast, join the graph's program:
describe.py inlines their kernels.)
"""
from __future__ import annotations

import operator

import torch
from torch.fx.passes.split_module import split_module

NAMESPACES = ("_c10d_functional", "c10d_functional", "_c10d_functional_autograd")


def is_outside(node: torch.fx.Node) -> bool:
    t = node.target
    return node.op == "call_function" and isinstance(t, torch._ops.OpOverload) and t.namespace in NAMESPACES


def has_outside_nodes(gm: torch.fx.GraphModule) -> bool:
    return any(is_outside(n) for n in gm.graph.nodes)


def split_at_outside_nodes(gm: torch.fx.GraphModule, compile_part):
    """gm as a chain of parts: compile_part(sub_gm) -> a boxed callable for
    each part without outside nodes; parts with them run as they are."""
    part_of, part = {}, 0
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        if is_outside(n):
            part += 1
            part_of[n] = part
            part += 1
        elif n.target is operator.getitem and isinstance(n.args[0], torch.fx.Node) and is_outside(n.args[0]):
            part_of[n] = part_of[n.args[0]]  # unpacking a list result stays with its node
        else:
            part_of[n] = part
    split = split_module(gm, None, lambda n: part_of[n], keep_original_order=True)
    for name, sub in list(split.named_children()):
        if has_outside_nodes(sub):
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
