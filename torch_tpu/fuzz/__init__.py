"""Property-based fuzzing of the lowered ops against the CPU (issue 16).

Every draw is a random call of an op from the backend's lowered registry
(`torch_tpu._C._lowered_ops()`), functional, out= or in-place, with random
shapes (0-d, empty, rank up to 10), dtypes, strides, views, storage offsets,
broadcasting, bad indices, out-of-range dims, CPU operands, and out= tensors
of the wrong shape or dtype or aliasing an input. The same call runs on the
CPU; the tpu result must equal it, or both must raise the same exception
type. Draws run in worker subprocesses, so a crash is counted, not fatal.

  tests/fuzz/                      the CI suite (fixed seeds, bounded draws)
  python -m torch_tpu.fuzz --minutes N   the long mode (a table at the end)

Modules: tensors (tensor specs and layouts), args (arguments from the schema),
hints (op families whose arguments must fit), targets (the registry, draws),
oracle (what the CPU result pins down), check (one draw on both devices),
engine (workers), known (remaining differences), report (tables), repro.
"""
