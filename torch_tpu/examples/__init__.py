"""Runnable examples: `python -m torch_tpu.examples.generate`."""
