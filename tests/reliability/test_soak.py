"""Long runs hold steady (the short version of `python -m torch_tpu.soak`):
after warm-up, training (eager and compiled) and static-cache generation
compile nothing, hold no more tpu memory, and keep the live device buffers
within the scalar-operand cache's bound."""
import pytest

from torch_tpu import soak

# Scalar operands keep up to two generations of 128 buffers (scalar_operand_cache.cpp).
SCALAR_CACHE_BOUND = 256


def _check(samples, warm_step):
    warm = next(s for s in samples if s["step"] >= warm_step)
    last = samples[-1]
    assert last["programs"] == warm["programs"], samples      # nothing compiles in the steady state
    assert last["tpu_bytes"] == warm["tpu_bytes"], samples    # no tpu storage leaks
    assert last["live_buffers"] <= warm["live_buffers"] + SCALAR_CACHE_BOUND, samples
    assert soak.growth(samples, "rss", warm_step) < 0.05, samples  # host memory: no per-step leak


@pytest.mark.parametrize("compiled", [False, True])
def test_training_loop_holds_steady(compiled):
    _check(soak.train(300, compiled, every=30), warm_step=60)


def test_static_cache_generation_holds_steady():
    _check(soak.generate(120, every=20), warm_step=40)
