#!/usr/bin/env bash
# Sets up a fresh machine: .venv with the pinned torch, the XLA CPU PJRT
# plugin, GoogleTest, and torch_tpu built in place (ninja, incremental).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install -q --upgrade pip
# torch is pinned: a looser spec downloads a multi-GB CUDA build.
python -m pip install -q torch==2.13.0
python -m pip install -q "xla-cpu-pjrt==0.0.1" "scikit-build-core>=0.10" ninja cmake numpy pytest expecttest \
  "hypothesis==6.170.15"   # the fuzz suite (tests/fuzz, python -m torch_tpu.fuzz); pinned: draws depend on its version
# The Hugging Face stack (Transformers, Diffusers) the tests and the main job use (pinned: tested versions).
python -m pip install -q "transformers==5.23.0" "accelerate==1.15.0" "diffusers==0.42.1"
# JAX for torch_tpu.pallas.jax_op (optional for users: pip install 'torch_tpu[jax]'); torch stays pinned
# in the same command so that resolving JAX's dependencies cannot move it.
# scipy (a JAX dependency) is also the lstsq tests' gelsy reference (tests/ops/test_linalg_lstsq.py).
python -m pip install -q "jax==0.10.2" "scipy==1.17.1" torch==2.13.0
# Hugging Face Kernels: the tests load a local Hub-style kernel package for tpu.
python -m pip install -q "kernels==0.17.2" torch==2.13.0
if [ ! -f /usr/include/gtest/gtest.h ]; then
  echo "installing GoogleTest (libgtest-dev) for the C++ unit tests" >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libgtest-dev >/dev/null
fi
python -m pip install -q --no-build-isolation -e . \
  -Cbuild-dir=build/py -Ccmake.define.TORCH_TPU_BUILD_TESTS=ON
