#!/usr/bin/env bash
# The test command: sets up (scripts/setup.sh), then runs the C++ unit tests
# of the torch-free layers (ctest) and the fast pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
TORCH_TPU_PJRT_PLUGIN="$(python -c 'import os, xla_plugins.xla_cpu_pjrt as p; print(os.path.join(os.path.dirname(p.__file__), "xla_cpu_pjrt.so"))')"
echo "== C++ unit tests (plugin: $TORCH_TPU_PJRT_PLUGIN)"
TORCH_TPU_PJRT_PLUGIN="$TORCH_TPU_PJRT_PLUGIN" ctest --test-dir build/py --output-on-failure
echo "== Python tests"
python -m pytest -q --durations=15 tests "$@"
