import pytest
import torch

import torch_tpu  # noqa: F401  (autoload does this too; explicit keeps tests independent of it)

@pytest.fixture(autouse=True)
def _synchronized():
    """Surfaces asynchronous errors inside the test that caused them."""
    yield
    torch.tpu.synchronize()
