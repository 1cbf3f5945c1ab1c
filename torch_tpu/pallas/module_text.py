"""A jax.export result as functions our programs can inline.

The exported module's functions are renamed under a prefix unique to the
kernel and its signature (our program's own entry is @main), made private,
stripped of JAX's argument/result annotations and source locations, and
printed in MLIR's generic form, the spelling least tied to one StableHLO
version (our plugin may be older than JAX). Donation pairs come from the
`tf.aliasing_output` marks jax.jit(donate_argnums=...) leaves on @main's
arguments.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InlinableModule:
    symbol: str                  # entry function
    functions: str               # MLIR text defining it and what it calls
    fingerprint: str             # sha256 of `functions`
    aliases: tuple               # (input index, output index): donated input i receives output j


def inlinable(exported, prefix: str) -> InlinableModule:
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    with jax_mlir.make_ir_context():
        module = ir.Module.parse(exported.mlir_module())
        functions = list(module.body.operations)
        aliases = []
        for op in functions:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if name == "main" and "arg_attrs" in op.attributes:
                for i, attrs in enumerate(ir.ArrayAttr(op.attributes["arg_attrs"])):
                    attrs = ir.DictAttr(attrs)
                    if "tf.aliasing_output" in attrs:
                        aliases.append((i, ir.IntegerAttr(attrs["tf.aliasing_output"]).value))
            ir.SymbolTable.replace_all_symbol_uses(name, prefix + name, module.operation)
            op.attributes["sym_name"] = ir.StringAttr.get(prefix + name)
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
            for key in ("arg_attrs", "res_attrs"):
                if key in op.attributes:
                    del op.attributes[key]
        text = "\n".join(op.get_asm(enable_debug_info=False, print_generic_op_form=True) for op in functions)
    return InlinableModule(prefix + "main", text, hashlib.sha256(text.encode()).hexdigest(), tuple(aliases))


def symbol_prefix(name: str, signature_key: str) -> str:
    """A symbol prefix unique to the kernel's name and input signature."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return f"jax_op_{safe}_{hashlib.sha256(signature_key.encode()).hexdigest()[:12]}_"
