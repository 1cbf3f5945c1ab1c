import atexit
import os
import shutil
import tempfile

# Tests neither read nor fill the user's compile cache (~/.cache/torch_tpu/xla):
# a plain pytest run starts from an empty folder of its own. scripts/test.sh
# chooses one fresh folder for all its pytest processes.
if "TORCH_TPU_COMPILE_CACHE" not in os.environ:
    os.environ["TORCH_TPU_COMPILE_CACHE"] = tempfile.mkdtemp(prefix="torch_tpu_test_xla_")
    atexit.register(shutil.rmtree, os.environ["TORCH_TPU_COMPILE_CACHE"], True)

import pytest
import torch

import torch_tpu  # noqa: F401  (autoload does this too; explicit keeps tests independent of it)

@pytest.fixture(autouse=True)
def _synchronized():
    """Surfaces asynchronous errors inside the test that caused them."""
    yield
    torch.tpu.synchronize()
