#!/usr/bin/env bash
# The test command: sets up (scripts/setup.sh), then runs the C++ unit tests
# of the torch-free layers (ctest) and the fast pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== setup done at ${SECONDS} s"
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
# Test processes run two at a time (TORCH_TPU_TEST_JOBS): one pytest process
# keeps ~1.5 of this machine's 2 cores busy (Python dispatch is serial, XLA
# compiles and runs on threads), so a second one fills the gaps; each process's
# output is printed whole when it ends, in the order the jobs were listed. The
# op-family files go in groups of 7 per process: a crash in one group cannot
# hide the others, and 8 processes start in ~30 s where one per file (52) took
# ~3 min. (A single process over everything once died late in the run: cached
# XLA executables exhausted the process's memory maps; program caches are
# bounded since, by count and by the process's map count: see map_pressure.h.)
# The multi-process tests (tests/distributed: 4 ranks each, bounded by
# timeouts) run alone afterwards, so other tests never slow their ranks.
# The long tier of exhaustive parametrized products (tests/ops/tiers.py) is
# left out: scripts/test_long.sh runs it.
set -- -m "not long" "$@"
logs="$(mktemp -d -t torch_tpu_test_logs.XXXXXX)"
trap 'rm -rf "$TORCH_TPU_COMPILE_CACHE" "$logs"' EXIT
names=()
job() {  # job NAME COMMAND...: runs in the background, at most TORCH_TPU_TEST_JOBS at once
  local n=${#names[@]}
  names+=("$1")
  shift
  while [ "$(jobs -rp | wc -l)" -ge "${TORCH_TPU_TEST_JOBS:-2}" ]; do wait -n || true; done
  ( set +e; start=$SECONDS; "$@" > "$logs/$n.log" 2>&1; echo $? > "$logs/$n.rc"; echo $((SECONDS - start)) > "$logs/$n.s" ) &
}
status=0
finish_jobs() {  # waits for every job, prints each one's output, fails if any failed
  wait || true
  local n
  for n in "${!names[@]}"; do
    echo "== ${names[n]} ($(cat "$logs/$n.s" 2>/dev/null || echo ?) s)"  # wall time: where CI's minutes go
    cat "$logs/$n.log" || true
    [ "$(cat "$logs/$n.rc" 2>/dev/null)" = 0 ] || { echo "== ${names[n]} FAILED"; status=1; }
  done
  names=()
}
# Longest first, so the two lanes end together (the fused slice aside, below).
job "models (tests/hf, tests/diffusers, tests/hf_kernels, tests/compile)" \
  python -m pytest -q --durations=10 tests/hf tests/diffusers tests/hf_kernels tests/compile "$@"
job "the rest (tests/*.py, tests/fuzz, tests/reliability)" \
  python -m pytest -q --durations=10 tests --ignore=tests/ops --ignore=tests/distributed --ignore=tests/hf \
  --ignore=tests/diffusers --ignore=tests/hf_kernels --ignore=tests/compile "$@"
mapfile -t op_files < <(ls tests/ops/test_*.py)
for ((i = 0; i < ${#op_files[@]}; i += 7)); do
  job "op families ${op_files[i]##*/} ..." python -m pytest -q "${op_files[@]:i:7}" "$@"
done
# Fused eager mode changes how ops run (windows of ops as one program), so a
# slice of the op-family and model tests runs again under it; every result is
# still compared with the CPU. The model slice is the main job's test (a tiny
# Qwen3 trained and generating); tests/test_fused_eager.py (in the run above)
# holds fused decoding and training against strict mode. The whole of
# tests/hf passes under fused mode too (test_causal_lm.py alone takes ~4 min in it):
#   TORCH_TPU_EAGER_MODE=fused python -m pytest -q tests/hf -k "not does_not_recompile"
# It runs last: a window of one op is that op's strict program (eager/fused/window_state.h),
# which the op-family jobs above have compiled into the shared compile cache.
job "fused eager mode slice" env TORCH_TPU_EAGER_MODE=fused python -m pytest -q tests/ops/test_elementwise.py \
  tests/ops/test_shape.py tests/ops/test_indexing.py tests/ops/test_reduction.py tests/ops/test_matmul.py \
  tests/ops/test_softmax.py tests/ops/test_attention.py tests/ops/test_ragged_dot.py tests/hf/test_main_job.py "$@"
finish_jobs
echo "== pytest lanes done at ${SECONDS} s; tests/distributed (alone)"
python -m pytest -q --durations=10 tests/distributed "$@" || status=1
exit $status
