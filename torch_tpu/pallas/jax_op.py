"""``jax_op``: a JAX (or Pallas) function as a PyTorch op on tpu tensors.

JAX traces, we run: the function is exported with ``jax.export`` for our
plugin's platform, and the exported StableHLO is inlined into the program our
executor builds for the call (``_C._run_module_call``), which runs on the
tensors' own buffers: no copy, no host round trip, no second PJRT client.
The op is a ``torch.library`` custom op (``torch.ops.tpu_jax.<name>``) whose
fake kernel comes from the export's output shapes, so it works under
autograd (``register_autograd``), ``torch.compile`` and ``torch.export``.
"""
from __future__ import annotations

import functools
import threading

import torch

from .module_text import inlinable, symbol_prefix

NAMESPACE = "tpu_jax"
_PLATFORMS = {"cpu": "cpu", "tpu": "tpu", "cuda": "cuda", "gpu": "cuda", "rocm": "rocm"}


def _jax():
    try:
        import jax
        import jax.export  # noqa: F401
    except ImportError as e:
        raise ImportError("torch_tpu.pallas.jax_op needs JAX: pip install 'torch_tpu[jax]' (jax==0.10.2)") from e
    return jax


def _platform() -> str:
    from .. import _C

    name = _C._runtime_info()["platform_name"].lower()
    return _PLATFORMS.get(name, name)


def _jax_dtype(dtype: torch.dtype):
    import jax.numpy as jnp

    table = {torch.float32: jnp.float32, torch.float64: jnp.float64, torch.float16: jnp.float16,
             torch.bfloat16: jnp.bfloat16, torch.int8: jnp.int8, torch.int16: jnp.int16, torch.int32: jnp.int32,
             torch.int64: jnp.int64, torch.uint8: jnp.uint8, torch.bool: jnp.bool_,
             torch.complex64: jnp.complex64, torch.complex128: jnp.complex128}
    if dtype not in table:
        raise TypeError(f"jax_op: no JAX dtype for {dtype}")
    return table[dtype]


def _torch_dtype(jax_dtype) -> torch.dtype:
    import numpy as np

    name = np.dtype(jax_dtype).name
    table = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
             "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
             "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool, "complex64": torch.complex64,
             "complex128": torch.complex128}
    if name not in table:
        raise TypeError(f"jax_op: JAX result dtype {name} has no torch dtype")
    return table[name]


def _signature(args) -> tuple:
    """What a trace depends on: each argument's shape and dtype."""
    return tuple((tuple(a.shape), a.dtype) for a in args)


def _structure(out_tree, name) -> str:
    """The outputs' shape as one word: one array, or a flat tuple or list."""
    import jax

    leaves = list(range(out_tree.num_leaves))
    for kind, build in (("leaf", lambda: leaves[0] if leaves else None), ("tuple", lambda: tuple(leaves)),
                        ("list", lambda: list(leaves))):
        if leaves and jax.tree_util.tree_structure(build()) == out_tree:
            return kind
    raise TypeError(f"jax_op {name}: the function must return an array or a flat tuple/list of arrays, "
                    f"got the structure {out_tree}")


class _Traced:
    """One export of the function, for one input signature."""

    def __init__(self, name, fn, donate_argnums, signature):
        jax = _jax()
        platform = _platform()
        avals = [jax.ShapeDtypeStruct(shape, _jax_dtype(dtype)) for shape, dtype in signature]
        wide = any(dtype in (torch.float64, torch.int64, torch.complex128) for _, dtype in signature)
        jitted = jax.jit(fn, donate_argnums=donate_argnums or ())
        try:
            with jax.enable_x64(wide):  # 64-bit inputs stay 64-bit (JAX narrows them by default)
                exported = jax.export.export(jitted, platforms=[platform])(*avals)
        except Exception as e:
            raise RuntimeError(f"jax_op {name}: JAX could not export the function for platform {platform!r} "
                               f"(inputs {[(tuple(s), str(d)) for s, d in signature]}): {e}") from e
        if exported.nr_devices != 1 or exported.ordered_effects or exported.unordered_effects:
            raise RuntimeError(f"jax_op {name}: only single-device kernels without effects can run on tpu")
        if len(exported.module_kept_var_idx) != len(signature):
            # JAX drops unused arguments from the module: pass only those it kept.
            self.kept = tuple(exported.module_kept_var_idx)
        else:
            self.kept = None
        self.module = inlinable(exported, symbol_prefix(name, repr(signature)))
        self.structure = _structure(exported.out_tree, name)
        self.out_dtypes = [_torch_dtype(a.dtype) for a in exported.out_avals]
        self.out_sizes = [list(a.shape) for a in exported.out_avals]
        aliased = {j for _, j in self.module.aliases}
        self.fresh = [j for j in range(len(self.out_dtypes)) if j not in aliased]

    def run(self, name, args):
        from .. import _C

        inputs = [args[i] for i in self.kept] if self.kept is not None else list(args)
        if self.kept is not None and self.module.aliases:
            raise RuntimeError(f"jax_op {name}: donation with arguments the function does not use")
        return _C._run_module_call(name, self.module.fingerprint, self.module.symbol, self.module.functions,
                                   self.out_dtypes, self.out_sizes, inputs, list(self.module.aliases))


_by_name: dict = {}  # name -> JaxOp, for compiled graphs (describe.py)


def _donating_call(op, args):
    """A donating op writes its inputs, and PyTorch's functionalization does
    not take a custom op that both mutates and returns a list: under
    torch.compile it runs outside the graph (a graph break; marked by
    _mark_for_dynamo)."""
    return op(args)


@functools.cache
def _mark_for_dynamo() -> None:
    """Dynamo's marks on the call path, applied when the first op is made.
    As decorators they would import Dynamo at import time, and torch_tpu is
    imported by every `import torch` (autoload): ~1 s each."""
    import torch._dynamo

    global _donating_call
    _donating_call = torch._dynamo.disable(_donating_call)
    JaxOp._assembly = torch._dynamo.assume_constant_result(JaxOp._assembly)


def graph_call(target, args):
    """For a torch.ops.tpu_jax node in a compiled graph with these (fake)
    input tensors: (entry symbol, MLIR functions) to inline, or None when the
    node cannot join a program (a donating op: it writes its inputs; such ops
    run outside compiled graphs)."""
    op = _by_name.get(target._schema.name.split("::", 1)[1])
    if op is None or op.donate_argnums or target._schema.is_mutable:
        return None
    t = op.traced(args)
    return t.module.symbol, t.module.functions


class JaxOp:
    """The callable ``jax_op`` returns: call it with tpu tensors (the arguments
    of the JAX function); ``.op`` is the torch.library custom op."""

    def __init__(self, name: str, fn, donate_argnums=None):
        if not name.isidentifier():
            raise ValueError(f"jax_op: the name must be a Python identifier, got {name!r}")
        if name in _by_name or hasattr(torch.ops.tpu_jax, name):
            # torch.library would silently replace the earlier op's kernel.
            raise ValueError(f"jax_op: an op named {name!r} exists already (torch.ops.tpu_jax.{name}); "
                             "jax_op names are global to the process")
        _jax()
        self.name, self.fn = name, fn
        self.donate_argnums = tuple(donate_argnums or ())
        self._traced = {}
        self._lock = threading.Lock()
        _mark_for_dynamo()
        mutates = ("args",) if self.donate_argnums else ()
        self.op = torch.library.custom_op(f"{NAMESPACE}::{name}", self._impl, mutates_args=mutates)
        self.op.register_fake(self._fake)
        _by_name[name] = self
        functools.update_wrapper(self, fn)

    def traced(self, args) -> _Traced:
        signature = _signature(args)
        t = self._traced.get(signature)
        if t is None:
            with self._lock:
                t = self._traced.get(signature)
                if t is None:
                    t = self._traced[signature] = _Traced(self.name, self.fn, self.donate_argnums, signature)
        return t

    def _impl(self, args: list[torch.Tensor]) -> list[torch.Tensor]:
        if any(a.device.type != "tpu" for a in args):
            raise RuntimeError(f"jax_op {self.name}: expected tpu tensors, got "
                               f"{sorted({str(a.device) for a in args})}")
        return self.traced(args).run(self.name, args)

    def _fake(self, args):
        t = self.traced(args)
        device = args[0].device if args else torch.device("tpu")
        return [torch.empty(t.out_sizes[j], dtype=t.out_dtypes[j], device=device) for j in t.fresh]

    def __call__(self, *args):
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"jax_op {self.name}: argument {i} is a {type(a).__name__}; only tensors can be "
                                "passed (bind other values with functools.partial before jax_op)")
        fresh = self.op(list(args)) if not self.donate_argnums else _donating_call(self.op, list(args))
        kind, sources = self._assembly(_signature(args))
        outs = [args[k] if src == "arg" else fresh[k] for src, k in sources]
        if kind == "leaf":
            return outs[0]
        return tuple(outs) if kind == "tuple" else list(outs)

    def _assembly(self, signature):
        """How the op's results make the function's outputs: ("leaf" | "tuple"
        | "list", [("fresh", k) or ("arg", i) per output]); plain data, so a
        compiled caller treats it as a constant (_mark_for_dynamo)."""
        t = self._traced[signature]
        donated = {j: i for i, j in t.module.aliases}
        sources, k = [], 0
        for j in range(len(t.out_dtypes)):
            if j in donated:
                sources.append(("arg", donated[j]))
            else:
                sources.append(("fresh", k))
                k += 1
        return t.structure, sources

    def register_autograd(self, backward, *, setup_context=None):
        """backward(ctx, *grads) -> one gradient (or None) per argument;
        setup_context(ctx, inputs, output) with the function's own arguments
        and outputs. Both may call other jax_ops."""
        def op_setup(ctx, inputs, output):
            if setup_context is not None:
                args = tuple(inputs[0])
                kind, sources = self._assembly(_signature(args))
                outs = [args[k] if src == "arg" else output[k] for src, k in sources]
                setup_context(ctx, args, outs[0] if kind == "leaf" else tuple(outs))

        def op_backward(ctx, grads):
            got = backward(ctx, *grads)
            got = got if isinstance(got, (tuple, list)) else (got,)
            return (list(got),)  # one entry per op argument: the gradients of `args`

        self.op.register_autograd(op_backward, setup_context=op_setup)
        return self


def jax_op(name: str, fn=None, /, *, donate_argnums=None):
    """Makes the JAX function `fn` an op on tpu tensors (decorator or call form):

        @jax_op("scaled_sin")
        def scaled_sin(x):
            return jnp.sin(x) * 2

    The function is traced once per input signature (shapes and dtypes) and
    compiled into the call's program; results are new tpu tensors.
    ``donate_argnums`` (as ``jax.jit``'s): a donated argument receives, in
    place, the result JAX pairs with it, and that result is the argument.
    """
    if fn is None:
        return lambda f: JaxOp(name, f, donate_argnums)
    return JaxOp(name, fn, donate_argnums)
