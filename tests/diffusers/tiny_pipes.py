"""Shared steps of the pipeline tests: load a tiny pipeline, run it, draw its initial noise."""
import numpy as np
import PIL.Image
import torch
from diffusers import DiffusionPipeline

import torch_tpu

PROMPT = "a photo of a red cat"
STEPS = 4
T5_TOKENS = 16  # max_sequence_length: the T5 prompt length (the pipelines default to 256/512)


def load(folder, device, dtype=torch.float32):
    pipe = DiffusionPipeline.from_pretrained(folder, dtype=dtype).to(device)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def run(pipe, size, generator=None, latents=None, output_type="latent", steps=STEPS):
    return pipe(PROMPT, num_inference_steps=steps, height=size, width=size, generator=generator, latents=latents,
                output_type=output_type, max_sequence_length=T5_TOKENS).images


def initial_noise(pipe, size, generator):
    """The noise the pipeline draws from `generator` (its own prepare_latents, as its __call__ does)."""
    channels = pipe.transformer.config.in_channels
    if type(pipe).__name__ == "FluxPipeline":
        channels //= 4  # Flux packs 2x2 latent patches into the channels
        latents, _ = pipe.prepare_latents(1, channels, size, size, torch.float32, pipe.device, generator)
        return latents
    return pipe.prepare_latents(1, channels, size, size, torch.float32, pipe.device, generator)


def compile_denoiser(pipe):
    pipe.transformer = torch.compile(pipe.transformer, backend="tpu")
    return pipe


_cpu_results = {}


def cpu_latents(folder, size, seed=None, noise=None):
    """The CPU pipeline's output latents from a CPU generator seeded `seed`, or from the given initial noise."""
    key = (folder, size, seed, None if noise is None else noise.numpy().tobytes())
    if key not in _cpu_results:
        pipe = load(folder, "cpu")
        generator = None if seed is None else torch.Generator().manual_seed(seed)
        _cpu_results[key] = run(pipe, size, generator=generator, latents=noise)
    return _cpu_results[key]


# Latents are O(1); float32 sums in a different order (XLA's dot and conv vs
# oneDNN's) differ by a few ulps per op, and 4 denoising steps of a random
# network carry that a little: 1e-5 absolute is ~100 ulps at 1.0.
ATOL = 1e-5
RTOL = 1e-4


def check_matches_cpu(folder, generator_device, compiled):
    """tpu latents == CPU latents after STEPS steps at 64x64, with a fixed seed.

    A CPU generator (what most user code passes) makes the noise on the CPU in
    both runs, so the comparison is direct. A tpu generator draws a different
    stream than the CPU's (different RNG), so the CPU run gets the tpu draw as
    `latents=`: the tpu pipeline itself still draws from its generator (its
    own prepare_latents path), and initial_noise() takes the same draw from a
    generator with the same seed (checked: the tpu stream is reproducible)."""
    pipe = load(folder, "tpu")
    if compiled:
        compile_denoiser(pipe)
    runs = torch_tpu.metrics()["graph_runs"]
    if generator_device == "cpu":
        got = run(pipe, 64, generator=torch.Generator().manual_seed(0))
        expect = cpu_latents(folder, 64, seed=0)
    else:
        noise = initial_noise(pipe, 64, torch.Generator(device="tpu").manual_seed(0)).cpu()
        assert torch.equal(initial_noise(pipe, 64, torch.Generator(device="tpu").manual_seed(0)).cpu(), noise)
        got = run(pipe, 64, generator=torch.Generator(device="tpu").manual_seed(0))
        expect = cpu_latents(folder, 64, noise=noise)
    assert got.device.type == "tpu" and got.dtype == torch.float32
    # Compiled: every denoising step ran as a tpu graph program (at least one per step).
    assert torch_tpu.metrics()["graph_runs"] - runs >= (STEPS if compiled else 0)
    torch.testing.assert_close(got.cpu(), expect, rtol=RTOL, atol=ATOL)


def _graph_compiles():
    return torch_tpu.metrics()["graph_compiles"]


def check_compiles_once_per_size(folder):
    """First call at 64x64 compiles the denoiser's graph(s); a second 64x64 call compiles nothing;
    96x96 compiles the same number of graphs once more, and a second 96x96 call nothing.

    At 96x96 Dynamo retraces the denoiser with symbolic sizes (automatic
    dynamic shapes); the tpu backend specializes such a graph per concrete
    input signature (torch_tpu/_dynamo/backend.py: _Specialized), so each
    size gets its own static program(s). Flux compiles two per size: its first
    step's latents are a view of the 6-d packing copy's storage, and the
    program key includes the storage's base shape (DESIGN.md), so the first
    step and the later ones get separate programs."""
    pipe = compile_denoiser(load(folder, "tpu"))
    counts = [_graph_compiles()]
    for size in (64, 64, 96, 96):
        got = run(pipe, size, generator=torch.Generator().manual_seed(0)).cpu()
        counts.append(_graph_compiles())
        # The compiled pipeline with a CPU generator equals the CPU's at both sizes.
        torch.testing.assert_close(got, cpu_latents(folder, size, seed=0), rtol=RTOL, atol=ATOL)
    new = [b - a for a, b in zip(counts, counts[1:])]
    assert new[0] > 0 and new[1:] == [0, new[0], 0], new


def check_bfloat16_image(folder):
    """A bfloat16 pipeline (all components) runs end to end on tpu, VAE decode included, to a PIL image."""
    pipe = load(folder, "tpu", dtype=torch.bfloat16)
    assert pipe.transformer.dtype == torch.bfloat16 and pipe.vae.dtype == torch.bfloat16
    image = run(pipe, 64, generator=torch.Generator(device="tpu").manual_seed(0), output_type="pil")[0]
    assert isinstance(image, PIL.Image.Image) and image.size == (64, 64) and image.mode == "RGB"
    pixels = np.asarray(image)
    assert pixels.std() > 0  # not a blank image (NaNs would come out as a constant)
