#!/usr/bin/env bash
# The test command: sets up (scripts/setup.sh), then runs the C++ unit tests
# of the torch-free layers (ctest) and the fast pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
TORCH_TPU_PJRT_PLUGIN="$(python -c 'import os, xla_plugins.xla_cpu_pjrt as p; print(os.path.join(os.path.dirname(p.__file__), "xla_cpu_pjrt.so"))')"
# One fresh compile cache for the whole run: later pytest processes load what
# earlier ones compiled, and nothing an earlier run (or ~/.cache) holds is read.
TORCH_TPU_COMPILE_CACHE="$(mktemp -d -t torch_tpu_test_xla.XXXXXX)"
export TORCH_TPU_COMPILE_CACHE
trap 'rm -rf "$TORCH_TPU_COMPILE_CACHE"' EXIT
echo "== C++ unit tests (plugin: $TORCH_TPU_PJRT_PLUGIN)"
TORCH_TPU_PJRT_PLUGIN="$TORCH_TPU_PJRT_PLUGIN" ctest --test-dir build/py --output-on-failure
echo "== Python tests"
# Verify-only check mode, on for the whole run: every eager cache hit
# rebuilds its program and fails loudly if the cache key missed a fact.
export TORCH_TPU_VALIDATE_CACHE=1
# Verify-only too: every program compiled for work without float64/complex128
# tensors must hold no f64 (a TPU has none); one that does fails its test.
export TORCH_TPU_CHECK_TPU_TYPES=1
# The op-family files in groups of 7 per pytest process, then the rest: a
# crash in one group cannot hide the others, and 6 processes start in ~25 s
# where one per file (42) took ~3 min. (A single process over everything once
# died late in the run: cached XLA executables exhausted the process's memory
# maps; the eager program cache is bounded since, see program_cache.h.)
status=0
mapfile -t op_files < <(ls tests/ops/test_*.py)
for ((i = 0; i < ${#op_files[@]}; i += 7)); do
  python -m pytest -q "${op_files[@]:i:7}" "$@" || status=1
done
python -m pytest -q --durations=15 tests --ignore=tests/ops "$@" || status=1
# Fused eager mode changes how ops run (windows of ops as one program), so a
# slice of the op-family and model tests runs again under it; every result is
# still compared with the CPU. The model slice is the main job's test (a tiny
# Qwen3 trained and generating); tests/test_fused_eager.py (in the run above)
# holds fused decoding and training against strict mode. The whole of
# tests/hf passes under fused mode too (test_causal_lm.py alone takes ~4 min in it):
#   TORCH_TPU_EAGER_MODE=fused python -m pytest -q tests/hf -k "not does_not_recompile"
echo "== Fused eager mode slice"
TORCH_TPU_EAGER_MODE=fused python -m pytest -q tests/ops/test_elementwise.py tests/ops/test_shape.py \
  tests/ops/test_indexing.py tests/ops/test_reduction.py tests/ops/test_matmul.py tests/ops/test_softmax.py \
  tests/ops/test_attention.py tests/ops/test_ragged_dot.py tests/hf/test_main_job.py "$@" || status=1
exit $status
