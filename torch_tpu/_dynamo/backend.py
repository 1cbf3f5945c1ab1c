"""torch.compile(backend="tpu"): Dynamo graph -> AOTAutograd (functional core
ATen, forward and backward) -> one StableHLO program per graph, lowered by the
same csrc/ops rules as eager and run by the same executor (DESIGN.md:
"Compile shares the lowering").

Shapes are static (dynamic=False semantics): each input signature gets its
own program. Graphs that Dynamo made symbolic on its own (automatic dynamic
shapes after a size change) are specialized here per concrete signature;
dynamic=True is rejected. Inductor's modes are accepted and change nothing
(one whole-graph XLA compile either way); options= takes the keys in OPTIONS.
"""
from __future__ import annotations

import collections.abc
import functools
import os
import warnings

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch._aot_autograd.schemas import SerializableAOTDispatchCompiler
from torch._functorch.aot_autograd import make_boxed_func
from torch._inductor.output_code import OutputCode

from .. import _C
from .. import config as _config
from . import describe as _describe
from . import graph_code as _graph_code
from . import split_graph as _split_graph
from . import recompiles as _recompiles

_fallback_graphs = 0


def metrics() -> dict:
    """Graph-level counters: programs compiled, cache hits, runs, eager-fallback graphs."""
    m = dict(_C._graph_metrics())
    m["graph_fallbacks"] = _fallback_graphs
    m.update(_config.graph_disk)
    return m


def reset_metrics() -> None:
    global _fallback_graphs
    _C._reset_graph_metrics()
    _fallback_graphs = 0
    _config.reset_graph_disk()


def _has_rule(name: str) -> bool:
    return _C._graph_has_lowering(name)


@functools.lru_cache(None)
def decompositions() -> dict:
    """Core ATen decompositions, minus the ops a tpu rule lowers directly (a
    rule beats its decomposition: fewer, larger ops for XLA), plus PyTorch's
    decompositions of the non-core ops that have no rule."""
    from torch._decomp import core_aten_decompositions, decomposition_table

    table = {}
    for op, fn in core_aten_decompositions().items():
        if isinstance(op, torch._ops.OpOverload) and _has_rule(_describe.op_name(op) or ""):
            continue
        table[op] = fn
    for op in (torch.ops.aten.embedding.default,):
        if op in decomposition_table and not _has_rule(_describe.op_name(op)):
            table[op] = decomposition_table[op]
    for name in dir(torch.ops.aten):
        if name.startswith("_foreach_"):
            packet = getattr(torch.ops.aten, name)
            for overload in packet.overloads():
                op = getattr(packet, overload)
                if "out" not in overload and not _has_rule(_describe.op_name(op)):
                    table[op] = functools.partial(_foreach_as_loop, name[len("_foreach_"):].rstrip("_"),
                                                  name.endswith("_"))
    return table


def _foreach_as_loop(base: str, inplace: bool, *args, **kwargs):
    """_foreach_<op>(lists, ...) as one <op> per element (list arguments
    indexed, others shared): the graph keeps them as separate ops, which XLA
    fuses within the program anyway."""
    n = len(next(a for a in args if isinstance(a, (list, tuple))))
    fn = getattr(torch.ops.aten, base + ("_" if inplace else ""))

    def pick(a, i):
        return a[i] if isinstance(a, (list, tuple)) and len(a) == n else a

    results = [_call_base(fn, [pick(a, i) for a in args], {k: pick(v, i) for k, v in kwargs.items()})
               for i in range(n)]
    return None if inplace else results


def _call_base(fn, args, kwargs):
    """fn(*args) where trailing positionals may be the base op's keyword-only
    arguments (_foreach_addcmul(self, t1, t2, value) vs addcmul(..., *, value))."""
    for overload in fn.overloads():
        schema = getattr(fn, overload)._schema
        pos = [a for a in schema.arguments if not a.kwarg_only]
        kwo = [a.name for a in schema.arguments if a.kwarg_only and not a.is_out]
        if len(pos) < len(args) <= len(pos) + len(kwo):
            try:
                return fn(*args[:len(pos)], **dict(zip(kwo, args[len(pos):])), **kwargs)
            except (RuntimeError, TypeError):
                continue
    return fn(*args, **kwargs)


def _fallback_error_mode() -> bool:
    return os.environ.get("TORCH_TPU_FALLBACK", "").lower() == "error"


def _compile_graph(gm: torch.fx.GraphModule, example_inputs, kind: str) -> _graph_code.GraphCode:
    """fw/bw/inference compiler: the AOT graph -> a boxed callable."""
    global _fallback_graphs
    if _split_graph.has_outside_nodes(gm):
        split = _split_graph.split_at_outside_nodes(gm, functools.partial(_compile_graph, example_inputs=None,
                                                                           kind=kind))
        return _graph_code.eager(kind, make_boxed_func(split.forward), "is split at outside nodes")
    try:
        desc = _describe.describe(gm)
        missing = sorted(op for op in desc.ops if not _has_rule(op))
        if missing:
            raise _describe.Unsupported("no tpu lowering for " + ", ".join("aten." + m for m in missing))
    except _describe.Unsupported as e:
        msg = f"torch_tpu: cannot compile the {kind} graph: {e}"
        if _fallback_error_mode():
            raise RuntimeError(msg + " (TORCH_TPU_FALLBACK=error)") from None
        # Visible fallback: the graph runs op by op on the eager tpu path.
        warnings.warn(msg + "; running this graph eagerly")
        _fallback_graphs += 1
        return _graph_code.eager(kind, make_boxed_func(gm.forward), "runs eagerly")
    return _graph_code.GraphCode(kind, desc, _describe.dtype_code(torch.get_default_dtype()),
                                 len([n for n in gm.graph.nodes if n.op == "placeholder"]))


def _compiler(kind: str):
    # Serializable: AOTAutogradCache stores what it returns (graph_code.py).
    return SerializableAOTDispatchCompiler(OutputCode, functools.partial(_compile_graph, kind=kind))


class _Decompositions(collections.abc.Mapping):
    """decompositions(), built on first use: a graph loaded from AOTAutograd's
    cache is not traced, and the table takes ~0.15 s to build in a new process."""

    def __getitem__(self, op):
        return decompositions()[op]

    def __contains__(self, op):
        return op in decompositions()

    def __iter__(self):
        return iter(decompositions())

    def __len__(self):
        return len(decompositions())


def _aot(gm, example_inputs, cacheable: bool = True):
    with _graph_code.cached(enabled=cacheable):
        return aot_autograd(
            fw_compiler=_compiler("forward"),
            bw_compiler=_compiler("backward"),
            inference_compiler=_compiler("inference"),
            decompositions=_Decompositions(),
            keep_inference_input_mutations=True,
        )(gm, example_inputs)


def _is_symbolic(gm, example_inputs) -> bool:
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("example_value", n.meta.get("val"))
        if isinstance(v, torch.SymInt):
            return True
        if isinstance(v, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in (*v.shape, *v.stride())):
            return True
    return any(isinstance(x, torch.SymInt) for x in example_inputs)


class _Specialized:
    """A graph Dynamo traced with symbolic sizes, run as static programs: one
    AOTAutograd trace (and tpu program) per concrete input signature."""

    def __init__(self, gm, site, names, log=None):
        self.gm = gm
        self.site = site
        self.names = names
        self.log = log
        self.compiled = {}

    def __call__(self, *args):
        key = (torch.is_grad_enabled(),) + tuple(
            (a.dtype, tuple(a.shape), tuple(a.stride()), a.device, a.requires_grad)
            if isinstance(a, torch.Tensor) else a for a in args)
        fn = self.compiled.get(key)
        if fn is None:
            _recompiles.note(self.site, self.names, args, self.log)
            # Not stored: the graph is symbolic, its key would not say which
            # signature a stored program was specialized to.
            fn = _aot(self.gm, list(args), cacheable=False)
            self.compiled[key] = fn
        return fn(*args)


# Inductor's modes choose cudagraphs and autotuning; an XLA program is one
# whole-graph compile either way, so each is accepted and changes nothing.
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# options= keys this backend understands.
OPTIONS = {"log_recompiles": "bool: print why each recompile happened (as TORCH_TPU_LOG_RECOMPILES=1)"}


def _check_options(mode, options) -> dict:
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"torch.compile(backend='tpu'): unknown mode {mode!r}; known modes: {', '.join(MODES)}")
    options = dict(options or {})
    for key, value in options.items():
        if key not in OPTIONS:
            known = "; ".join(f"{k} ({v})" for k, v in OPTIONS.items())
            raise RuntimeError(f"torch.compile(backend='tpu'): unknown option {key!r}; known options: {known}")
        if not isinstance(value, bool):
            raise RuntimeError(f"torch.compile(backend='tpu'): option {key!r} takes a bool, got {value!r}")
    return options


def tpu_backend(gm: torch.fx.GraphModule, example_inputs, mode=None, options=None):
    options = _check_options(mode, options)
    if not torch._dynamo.config.assume_static_by_default:
        raise RuntimeError(
            "torch.compile(backend='tpu', dynamic=True) is not supported: the tpu backend compiles one "
            "static-shape program per input signature; use dynamic=False (or leave it unset)")
    site = _recompiles.current_site()
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    log = options.get("log_recompiles")
    if _is_symbolic(gm, example_inputs):
        return _Specialized(gm, site, names, log)
    _recompiles.note(site, names, example_inputs, log)
    return _aot(gm, example_inputs)
