"""The tiny Flux pipeline on tpu (issue #7): latents equal the CPU's, eager
and compiled, with tpu and CPU generators; the compiled denoiser compiles once
per image size (and matches the CPU at each); bfloat16 runs end to end to an image."""
import pytest
import torch

import tiny_pipes as pipes
import torch_tpu

KIND = "flux"


# Compiled with a CPU generator: test_compiled_denoiser_compiles_once_per_size (at 64x64 and 96x96).
@pytest.mark.parametrize("compiled,generator", [(False, "cpu"), (False, "tpu"), (True, "tpu")],
                         ids=["eager-cpu_generator", "eager-tpu_generator", "compiled-tpu_generator"])
def test_latents_match_cpu(folders, compiled, generator):
    pipes.check_matches_cpu(folders[KIND], generator, compiled)


def test_compiled_denoiser_compiles_once_per_size(folders):
    pipes.check_compiles_once_per_size(folders[KIND])


def test_bfloat16_makes_an_image(folders):
    pipes.check_bfloat16_image(folders[KIND])


def test_diffusers_compile_repeated_blocks(folders):
    """Diffusers' own compile helper with the tpu backend: each transformer block
    compiled as its own graph (shared by the blocks of one class), run on every step."""
    pipe = pipes.load(folders[KIND], "tpu")
    pipe.transformer.compile_repeated_blocks(backend="tpu")
    runs = torch_tpu.metrics()["graph_runs"]
    got = pipes.run(pipe, 64, generator=torch.Generator().manual_seed(0))
    blocks = len(pipe.transformer.transformer_blocks) + len(pipe.transformer.single_transformer_blocks)
    assert torch_tpu.metrics()["graph_runs"] - runs == blocks * pipes.STEPS
    torch.testing.assert_close(got.cpu(), pipes.cpu_latents(folders[KIND], 64, seed=0), rtol=pipes.RTOL,
                               atol=pipes.ATOL)
