"""torch_tpu._internal.pallas: the path Hugging Face Hub kernels import jax_op from."""
from ...pallas import JaxOp, jax_op  # noqa: F401
