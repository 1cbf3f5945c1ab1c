#!/usr/bin/env bash
# The main job on a fresh machine: set up (scripts/setup.sh, incremental when
# run again), then train a small Qwen3 on tpu from the shipped corpus (about
# a minute, cached after the first run), load it back with from_pretrained
# and generate on tpu, eager and compiled, against the CPU. Extra arguments go
# to the example (--model PATH, --steps N, --no-train, --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m torch_tpu.examples.generate "$@"
