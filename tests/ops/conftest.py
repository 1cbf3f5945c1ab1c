import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    """Op tests prove native lowering: a CPU fallback is a failure here."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")
