#!/usr/bin/env bash
# Sets up the peers that bench/peers.py measures torch_tpu against:
#   * JAX (jax.jit on JAX's own XLA CPU backend), installed next to torch_tpu in
#     the interpreter that runs bench/peers.py ($PYTHON, default .venv), so both
#     run in one process on the same inputs. jax 0.10.2 is the newest release
#     for Python 3.11 (0.12 needs Python >= 3.12). torch's version is checked
#     before and after: the install must not change it.
#   * PyTorch/XLA: torch-xla 2.9.0 with its matching torch 2.9.0 in its own venv
#     .venv-peers/xla (PJRT_DEVICE=CPU), driven by bench/peers_xla_worker.py as a
#     subprocess. On x86_64 PyPI's torch 2.9.0 is a CUDA build (several GB).
#   * On request only, a newer XLA CPU PJRT plugin (newer-xla): the one
#     lammps-jax-pjrt-cpu 0.11.2 ships, built from jaxlib 0.11.2's XLA (the
#     xla_cpu_pjrt wheel's XLA is from 2025-11), in .venv-peers/newer-xla. Not a
#     peer of its own: run any bench/ script on it with
#     TORCH_TPU_PJRT_PLUGIN=.venv-peers/newer-xla/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so
#     to see which gaps the plugin's build decides (its jax@plugin column then
#     runs JAX on that plugin too).
# A peer that fails to install is reported with its command and message in
# .venv-peers/<peer>.error, which bench/peers.py prints into its table.
#
#   bash bench/setup_peers.sh            # both peers
#   bash bench/setup_peers.sh jax        # one of them (jax | xla | newer-xla)
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
BASE_PYTHON=${BASE_PYTHON:-python3}
PEERS=${*:-jax xla}
mkdir -p .venv-peers
# Nothing under .venv-peers/ belongs in git (several GB of wheels).
[ -f .venv-peers/.gitignore ] || echo '*' > .venv-peers/.gitignore
if [ ! -x "$PYTHON" ]; then
  echo "no $PYTHON: run scripts/setup.sh first (or set PYTHON to the interpreter with torch_tpu)" >&2
  exit 2
fi

# Runs "$@"; on failure writes the command and the tail of its output to
# .venv-peers/$1.error (the peer's name is the first argument).
attempt() {
  local peer=$1; shift
  local log=.venv-peers/$peer.log
  echo "+ $*" | tee -a "$log"
  if "$@" >>"$log" 2>&1; then return 0; fi
  { echo "command: $*"; echo "message:"; grep -v '^WARNING: Location' "$log" | tail -n 15; } > ".venv-peers/$peer.error"
  echo "$peer: FAILED, see .venv-peers/$peer.error" >&2
  return 1
}

setup_jax() {
  rm -f .venv-peers/jax.error .venv-peers/jax.log
  local before after
  before=$("$PYTHON" -c 'import torch; print(torch.__version__)')
  attempt jax "$PYTHON" -m pip install -q "jax==0.10.2" "torch==${before%%+*}" || return 1
  after=$("$PYTHON" -c 'import torch; print(torch.__version__)')
  if [ "$before" != "$after" ]; then
    echo "command: $PYTHON -m pip install jax==0.10.2; message: torch changed from $before to $after" > .venv-peers/jax.error
    return 1
  fi
  attempt jax "$PYTHON" -c 'import jax, jax.numpy as jnp; print("jax", jax.__version__, jnp.ones(2).sum())' || return 1
  echo "jax ready in $PYTHON"
}

setup_xla() {
  rm -f .venv-peers/xla.error .venv-peers/xla.log
  local py=.venv-peers/xla/bin/python
  [ -x "$py" ] || attempt xla "$BASE_PYTHON" -m venv .venv-peers/xla || return 1
  attempt xla "$py" -m pip install -q "torch==2.9.0" "torch-xla==2.9.0" numpy \
    "transformers==5.23.0" || return 1
  # The smoke test the worker depends on: a lazy add, one sync, the metrics.
  attempt xla env PJRT_DEVICE=CPU "$py" -c '
import torch, torch_xla, torch_xla.debug.metrics as met
x = torch.ones(4, device=torch_xla.device()) + 1
torch_xla.sync()
print("torch", torch.__version__, "torch_xla", torch_xla.__version__, x.cpu().tolist(), met.metric_names()[:3])
' || return 1
  echo "torch_xla ready in $py"
}

setup_newer_xla() {
  rm -f .venv-peers/newer-xla.error .venv-peers/newer-xla.log
  # --no-deps: the wheel is a bare plugin library; its jax pin is for LAMMPS.
  attempt newer-xla "$PYTHON" -m pip install -q --no-deps --upgrade --target .venv-peers/newer-xla \
    "lammps-jax-pjrt-cpu==0.11.2" || return 1
  local so=.venv-peers/newer-xla/lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so
  attempt newer-xla env TORCH_TPU_PJRT_PLUGIN="$so" "$PYTHON" -c '
import torch, torch_tpu
x = torch.arange(4.0, device="tpu")
print(torch_tpu._C._runtime_info()["plugin_path"], (x * 2).cpu().tolist())
' || return 1
  echo "newer XLA CPU plugin ready: TORCH_TPU_PJRT_PLUGIN=$so"
}

status=0
for p in $PEERS; do
  case $p in
    jax) setup_jax || status=1 ;;
    xla) setup_xla || status=1 ;;
    newer-xla) setup_newer_xla || status=1 ;;
    *) echo "unknown peer $p (jax | xla | newer-xla)" >&2; status=2 ;;
  esac
done
exit $status
