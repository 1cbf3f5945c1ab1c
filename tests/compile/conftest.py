import os
import sys

import pytest
import torch

import torch_tpu._dynamo

torch_tpu._dynamo.register()  # a no-op where the package's entry point registers it

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _fresh_dynamo(monkeypatch):
    """Compiled graphs must lower natively; each test starts with no Dynamo cache."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
