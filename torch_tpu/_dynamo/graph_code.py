"""A compiled tpu graph as an Inductor ``OutputCode``, so that AOTAutograd's
own cache keeps it across processes (issue 19: the compiled first call).

torch's AOTAutogradCache stores, per Dynamo graph, AOTAutograd's result: the
runtime wrappers' metadata and the compiled forward/backward. Its "bundled"
entries pickle the compiled functions themselves when they are OutputCode
objects. A GraphCode is one: what it pickles is plain data (the graph
description, the default float dtype it was traced under), and loading it
builds the program again, whose XLA executable comes from the disk compile
cache. A later process with the same graph, inputs and configs then skips
AOTAutograd's trace and the description.

The entries live in ``<compile cache folder>/graphs`` (off with
TORCH_TPU_COMPILE_CACHE=0); each is checked against its checksum before it
is unpickled, and a bad one is removed with a warning naming it.
AOTAutograd's key covers the graph, the inputs' metadata, its own config,
grad mode and autocast; for tpu graphs ``_hash_details`` adds what decides
them (the compile kwargs, deterministic algorithms, the default dtype,
torch's build and ``build_tag()``: this torch_tpu build, whose rules decide
the decompositions) in place of Inductor's details, which cost more than the
trace they would save. Graphs that run eagerly (fallback) or split at outside
nodes are not stored, nor are training graphs: AOTAutograd writes an entry
with a backward only once the backward is compiled, lazily, outside the
backend's call.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import pickle
import threading
import warnings

import torch
from torch._functorch._aot_autograd import autograd_cache
from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache, BypassAOTAutogradCache
from torch._inductor.codecache import FxGraphCache, FxGraphHashDetails, sha256_hash
from torch._inductor.output_code import OutputCode
from torch._subclasses.fake_tensor import unset_fake_temporarily

from .. import _C
from ..config import graph_disk as stats


# Graphs whose tensor constants (get_attr tensors: tensors made inside the
# function; captured ones are inputs) take more are not stored.
MAX_CONSTANT_BYTES = 1 << 20

class GraphCode(OutputCode):
    """The boxed callable AOTAutograd runs for one graph (forward, backward
    or inference). ``uncacheable`` (a reason) marks a graph that runs some
    other way (eagerly, or split) and must not be stored."""

    def __init__(self, kind: str, desc=None, default_float: int = 0, num_placeholders: int = 0,
                 run=None, uncacheable: str | None = None):
        self.kind = kind
        self.desc = desc
        self.default_float = default_float
        self.num_placeholders = num_placeholders
        self.uncacheable = uncacheable
        # An instance attribute: AOTAutograd's wrapper copies the instance's
        # __dict__, and reads this to pass the arguments as one list.
        self._boxed_call = True
        self._run = run if run is not None else self._build()

    def __call__(self, args):
        return self._run(args)

    def _build(self):
        desc, kind, default_float = self.desc, self.kind, self.default_float
        # One program per float32 matmul precision, built when first run at
        # it: Dynamo's guards do not tell "high" from "medium", nor see
        # torch.tpu.precision() contexts.
        programs = {}

        def program_at(precision):
            p = programs.get(precision)
            if p is None:
                p = programs[precision] = _C._GraphProgram(kind, desc.num_inputs, desc.nodes, desc.results,
                                                           desc.writes, desc.outputs, desc.num_generators,
                                                           default_float, precision)
            return p

        program_at(_C._matmul_precision())  # check the graph now
        positions = desc.tensor_inputs
        constants = desc.constants
        every_input_is_tensor = len(positions) == self.num_placeholders
        cpu_outputs, cpu_writes = desc.cpu_outputs, desc.cpu_writes
        n_outputs = len(desc.outputs) - len(cpu_writes)

        def run(args):
            full = list(args) if every_input_is_tensor else [args[p] for p in positions]
            args.clear()  # free inputs (saved activations) as soon as the program holds them
            if constants:
                full.extend(constants)
            outs = program_at(_C._matmul_precision()).run(full)
            if cpu_writes or cpu_outputs:
                for i, k in cpu_writes:
                    full[i].copy_(outs[k])
                del outs[n_outputs:]
                for k in cpu_outputs:
                    outs[k] = outs[k].cpu()
            return outs

        return run

    # OutputCode's protocol, as AOTAutogradCache drives it.
    def prepare_for_serialization(self) -> None:
        if self.uncacheable:
            raise BypassAOTAutogradCache(f"torch_tpu: {self.kind} graph {self.uncacheable}")
        held = sum(t.numel() * t.element_size() for t in self.desc.constants)
        if held > MAX_CONSTANT_BYTES:  # a big tensor made inside the function: not copied into the folder
            raise BypassAOTAutogradCache(f"torch_tpu: {self.kind} graph holds {held} bytes of tensor constants")

    def post_compile(self, example_inputs, constants, graph_kwargs) -> None:
        if self._run is None:  # loaded from the cache
            self._run = self._build()
            stats["graph_disk_hits"] += 1

    def set_triton_bundle(self, triton_bundle) -> None:
        pass

    def __copy__(self):  # AOTAutogradCache copies before it pickles: no tensor moves here
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __getstate__(self):  # only AOTAutogradCache pickles a GraphCode: count it as a write
        state = dict(self.__dict__)
        state["_run"] = None
        desc = state["desc"]
        if desc is not None and desc.constants:
            # Stored as CPU tensors; the flag says which go back to the tpu.
            # (Pickled while AOTAutograd's fake mode is on: real tensors here.)
            with unset_fake_temporarily():
                state["desc"] = dataclasses.replace(
                    desc, constants=[(t.cpu(), t.device.type == "tpu") for t in desc.constants])
        stats["graph_disk_writes"] += 1
        return state

    def __setstate__(self, state):
        desc = state["desc"]
        if desc is not None and desc.constants:
            with unset_fake_temporarily():
                desc.constants = [t.to("tpu") if on_tpu else t for t, on_tpu in desc.constants]
        self.__dict__.update(state)


def eager(kind: str, fn, why: str) -> GraphCode:
    """A graph that runs through ``fn`` (boxed), not as one program."""
    return GraphCode(kind, run=fn, uncacheable=why)


@functools.lru_cache(None)
def build_tag() -> str:
    """What, besides AOTAutograd's own key, decides a cached graph: this
    torch_tpu build, i.e. its extension module (the lowering rules, which
    decide the decomposition table with torch's version) and the Python that
    picks the decompositions and describes graphs."""
    h = hashlib.sha256()
    st = os.stat(_C.__file__)
    h.update(f"{_C.__file__} {st.st_size} {st.st_mtime_ns}\n".encode())
    here = os.path.dirname(__file__)
    for name in ("describe.py", "graph_code.py", "backend.py", "split_graph.py"):
        with open(os.path.join(here, name), "rb") as f:
            h.update(f.read())
    return "torch_tpu " + h.hexdigest()[:32]


_where = threading.local()  # the graph folder while this thread runs the tpu backend's AOTAutograd


def _backend_folder() -> str | None:
    """None outside the tpu backend; inside it, the graph folder ("" when the cache is off)."""
    return getattr(_where, "folder", None)


def _folder() -> str:
    base = _C._compile_cache_dir()
    return os.path.join(base, "graphs") if base else ""


_torch_tmp_dir = AOTAutogradCache.__dict__["_get_tmp_dir"].__func__


def _tmp_dir(cls):
    folder = _backend_folder()
    return os.path.join(folder, "aotautograd") if folder else _torch_tmp_dir(cls)


# AOTAutogradCache keeps every backend's entries in Inductor's cache folder;
# the tpu backend's go to the compile cache's folder instead, so that
# TORCH_TPU_COMPILE_CACHE moves, isolates and turns off both together.
# (Only while this thread runs the tpu backend: Inductor's entries stay put.)
AOTAutogradCache._get_tmp_dir = classmethod(_tmp_dir)


_torch_hash_details = autograd_cache.AOTAutogradCacheDetails._init_fx_graph_hash_details


def _hash_details(self, gm, example_inputs, fx_config):
    """The key's part beyond AOTAutograd's own (its config, grad mode,
    autocast), for a tpu graph. torch's version adds Inductor's: its configs,
    the hash of torch's source files and its code generators for every device,
    which it imports (~1 s in a new process, more than the trace it saves).
    None of them decides a tpu graph; what does is kept: the graph and the
    inputs' metadata, the tag (``build_tag``), the compile kwargs,
    deterministic algorithms, the default dtype and torch's build."""
    if _backend_folder() is None:
        return _torch_hash_details(self, gm, example_inputs, fx_config)
    FxGraphCache._check_can_cache(gm, example_inputs, fx_config)  # what torch refuses to cache
    self.gm = gm
    self.example_inputs = list(example_inputs)
    self.cache_key_tag = torch.compiler.config.cache_key_tag
    self.fx_kwargs = {k: v for k, v in sorted(fx_config.items()) if k not in FxGraphHashDetails.EXCLUDED_KWARGS}
    self.deterministic_algorithms_settings = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.utils.deterministic.fill_uninitialized_memory)
    self.default_dtype = torch.get_default_dtype()
    self.torch_version = (torch.__version__, torch.version.git_version)


autograd_cache.AOTAutogradCacheDetails._init_fx_graph_hash_details = _hash_details


_torch_candidates = AOTAutogradCache.iterate_over_candidates  # GuardedCache's, bound to AOTAutogradCache


def _candidates(cls, local, remote_cache, key):
    """The entries stored under ``key``, each checked against its name (the
    SHA-256 of its bytes, as AOTAutogradCache names them) before it is
    unpickled: a corrupted or truncated entry is removed with a warning that
    names it, and the graph is traced again. (torch's own loop unpickles
    whatever the file holds, and flipped bytes can unpickle into a different,
    valid graph.)"""
    folder = _backend_folder()
    if folder is None:
        yield from _torch_candidates(local, remote_cache, key)
        return
    subdir = cls._get_tmp_dir_for_key(key)
    if not (local and folder and os.path.isdir(subdir)):
        return
    for name in sorted(os.listdir(subdir)):
        if name.startswith("."):
            continue  # a writer's temporary file
        path = os.path.join(subdir, name)
        try:
            with open(path, "rb") as f:
                content = f.read()
            if sha256_hash(content) != name:
                raise ValueError("its contents do not match its checksum")
            entry = pickle.loads(content)
        except FileNotFoundError:
            continue  # removed meanwhile
        except Exception as e:  # noqa: BLE001 - any bad entry is rebuilt, never trusted
            stats["graph_disk_errors"] += 1
            warnings.warn(f"torch_tpu: graph cache: entry {path} is unusable ({e}); removed, the graph is "
                          f"traced again")
            with contextlib.suppress(OSError):
                os.remove(path)
            continue
        yield entry, content, True


AOTAutogradCache.iterate_over_candidates = classmethod(_candidates)


@contextlib.contextmanager
def cached(enabled: bool = True):
    """The context the tpu backend runs AOTAutograd in: its results are
    bundled GraphCode entries in our folder, keyed with ``build_tag``."""
    folder = _folder() if enabled else ""
    prior = _backend_folder()
    _where.folder = folder
    user_tag = torch.compiler.config.cache_key_tag
    try:
        with torch._functorch.config.patch(enable_autograd_cache=bool(folder), bundled_autograd_cache=True), \
                torch.compiler.config.patch(cache_key_tag=f"{user_tag}|{build_tag()}"):
            yield
    finally:
        _where.folder = prior
