"""OpInfo conformance sweep: PyTorch's op database run on ``tpu`` against the CPU.

``python -m torch_tpu.conformance --help``; the report is docs/conformance.md.
"""
from .runner import DEFAULT_DTYPES, RANDOM_OPS, load_op_db, run_case  # noqa: F401
