#!/usr/bin/env bash
# The main job on a fresh machine: set up (scripts/setup.sh, incremental when
# run again), then a Hugging Face model generating on tpu, eager and compiled,
# against the CPU. Extra arguments go to the example (e.g. --model PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m torch_tpu.examples.generate "$@"
