import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tiny_models  # noqa: E402  (scripts/setup.sh installs the pinned transformers)


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    """Model tests prove that nothing fell back to the CPU."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")


@pytest.fixture(scope="session")
def checkpoints(tmp_path_factory):
    """arch -> folder of a tiny random-weight checkpoint (built once per session)."""
    root = tmp_path_factory.mktemp("checkpoints")
    return {arch: tiny_models.build(arch, root / arch) for arch in tiny_models.ALL}
