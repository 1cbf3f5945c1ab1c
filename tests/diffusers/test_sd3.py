"""The tiny Stable Diffusion 3 pipeline on tpu (issue #7): latents equal the CPU's, eager
and compiled, with tpu and CPU generators; the compiled denoiser compiles once
per image size (and matches the CPU at each); bfloat16 runs end to end to an image."""
import pytest

import tiny_pipes as pipes

KIND = "sd3"


# Compiled with a CPU generator: test_compiled_denoiser_compiles_once_per_size (at 64x64 and 96x96).
@pytest.mark.parametrize("compiled,generator", [(False, "cpu"), (False, "tpu"), (True, "tpu")],
                         ids=["eager-cpu_generator", "eager-tpu_generator", "compiled-tpu_generator"])
def test_latents_match_cpu(folders, compiled, generator):
    pipes.check_matches_cpu(folders[KIND], generator, compiled)


def test_compiled_denoiser_compiles_once_per_size(folders):
    pipes.check_compiles_once_per_size(folders[KIND])


def test_bfloat16_makes_an_image(folders):
    pipes.check_bfloat16_image(folders[KIND])
