import os
import sys

import pytest
import torch

import torch_tpu._dynamo

torch_tpu._dynamo.register()  # a no-op where the package's entry point registers it

sys.path.insert(0, os.path.dirname(__file__))

import diffusers  # noqa: E402,F401  (scripts/setup.sh installs the pinned diffusers)


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    """Pipeline tests prove that nothing fell back to the CPU; each starts with no Dynamo cache."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(scope="session")
def folders(tmp_path_factory):
    """kind -> folder of a tiny random-weight pipeline (built once per session, loaded with from_pretrained)."""
    from torch_tpu.examples import tiny_pipelines

    root = tmp_path_factory.mktemp("pipelines")
    return {kind: tiny_pipelines.build(kind, str(root / kind)) for kind in tiny_pipelines.KINDS}
