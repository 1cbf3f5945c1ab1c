#!/usr/bin/env bash
# The long tier (tests/ops/tiers.py): the rest of the exhaustive parametrized
# products (every dtype x driver x shape) that the CI suite, scripts/test.sh,
# leaves out (2491 cases). Sets up like scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export TORCH_TPU_VALIDATE_CACHE=1 TORCH_TPU_CHECK_TPU_TYPES=1
python -m pytest -q -m long tests/ops "$@"
