#!/usr/bin/env bash
# A private development environment (venv + build dir) under /tmp/dev-NAME, so
# several people can build and test the same checkout at once:
#   bash scripts/dev_env.sh NAME      # first time: venv copy + full build
#   bash scripts/dev_env.sh NAME      # later: incremental ninja build + install of _C
#   /tmp/dev-NAME/venv/bin/python -m pytest tests/...
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:?usage: dev_env.sh NAME}
DEV=/tmp/dev-$NAME
if [ ! -x "$DEV/venv/bin/python" ]; then
  [ -x .venv/bin/python ] || bash scripts/setup.sh
  mkdir -p "$DEV"
  python3 -m venv "$DEV/venv"
  "$DEV/venv/bin/python" -m pip install -q torch==2.13.0
  "$DEV/venv/bin/python" -m pip install -q "xla-cpu-pjrt==0.0.1" "scikit-build-core>=0.10" ninja cmake numpy pytest expecttest \
    "transformers==5.23.0" "accelerate==1.15.0" "diffusers==0.42.1"
  "$DEV/venv/bin/python" -m pip install -q --no-build-isolation -e . -Cbuild-dir="$DEV/build" \
    -Ccmake.define.TORCH_TPU_BUILD_TESTS=ON
else
  ninja -C "$DEV/build" >/dev/null
  SITE=$("$DEV/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # Copy then rename: overwriting the .so in place would corrupt it under
  # processes that have it mapped (a test run in progress).
  for so in "$DEV"/build/_C*.so; do
    cp "$so" "$SITE/torch_tpu/.new.$(basename "$so")" && mv -f "$SITE/torch_tpu/.new.$(basename "$so")" "$SITE/torch_tpu/$(basename "$so")"
  done
fi
echo "ready: $DEV/venv/bin/python"
