"""Text to image with a Diffusers pipeline on `tpu`.

    python -m torch_tpu.examples.diffuse [--out PATH] [--steps N] [--size PX]

Builds (once, cached) a small Stable Diffusion 3 pipeline with random weights
(torch_tpu.examples.tiny_pipelines), so the image is noise; the point is the
path: DiffusionPipeline.from_pretrained(folder).to("tpu"), a tpu generator,
the denoiser run eagerly and then under torch.compile(backend="tpu"), the
VAE decode, and a PNG. Prints seconds per image: tpu eager, tpu compiled (the
first call, which compiles, and a later call) and the CPU.
"""
import argparse
import time

import torch

import torch_tpu

PROMPT = "an astronaut on the moon"  # <= 32 CLIP tokens: the tiny tokenizer has one per letter


def timed(pipe, args, generator_device, output_type="pil"):
    generator = torch.Generator(device=generator_device).manual_seed(args.seed)
    t0 = time.perf_counter()
    images = pipe(PROMPT, num_inference_steps=args.steps, height=args.size, width=args.size, generator=generator,
                  output_type=output_type, max_sequence_length=args.max_sequence_length).images
    # PIL output is on the host already; latents are read back so the time covers the device work.
    if isinstance(images, torch.Tensor):
        images.cpu()
    return images, time.perf_counter() - t0


def main(argv=None):
    from diffusers import DiffusionPipeline

    from .tiny_pipelines import build

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="a local SD3 pipeline folder (default: the cached tiny one)")
    p.add_argument("--out", default="diffuse.png", help="where to write the PNG (default: %(default)s)")
    p.add_argument("--steps", type=int, default=8, help="inference steps (default: %(default)s)")
    p.add_argument("--size", type=int, default=128, help="image height and width in pixels, a multiple of 16 "
                   "(default: %(default)s)")
    p.add_argument("--max-sequence-length", type=int, default=32, help="T5 prompt tokens (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-cpu", action="store_true", help="don't measure the CPU")
    args = p.parse_args(argv)
    path = args.model or build("sd3")
    print(f"pipeline: {path}")

    pipe = DiffusionPipeline.from_pretrained(path).to("tpu")
    pipe.set_progress_bar_config(disable=True)
    rows = []
    torch_tpu.reset_metrics()
    _, eager_first = timed(pipe, args, "tpu")  # compiles each op's program once
    images, eager = timed(pipe, args, "tpu")
    images[0].save(args.out)
    eager_m = torch_tpu.metrics()
    rows.append(("tpu eager, first call", eager_first))
    rows.append(("tpu eager, later call", eager))

    pipe.transformer = torch.compile(pipe.transformer, backend="tpu")
    torch_tpu.reset_metrics()
    _, first = timed(pipe, args, "tpu")
    compiled_graphs = torch_tpu.metrics().get("graph_compiles", 0)
    _, later = timed(pipe, args, "tpu")
    m = torch_tpu.metrics()
    rows.append(("tpu compiled, first call", first))
    rows.append(("tpu compiled, later call", later))
    if not args.skip_cpu:
        cpu = DiffusionPipeline.from_pretrained(path)
        cpu.set_progress_bar_config(disable=True)
        timed(cpu, args, "cpu")  # warm-up (oneDNN primitive creation), as the tpu's first call is not counted
        _, secs = timed(cpu, args, "cpu")
        rows.append(("cpu eager", secs))

    print(f"wrote {args.out} ({args.size}x{args.size}, {args.steps} steps)")
    for name, secs in rows:
        print(f"{name:<26}{secs:8.3f} s/image")
    print(f"eager: op compiles {eager_m['compiles']}, fallbacks {eager_m['fallbacks']}")
    print(f"compiled: graph compiles {compiled_graphs} on the first call, "
          f"{m.get('graph_compiles', 0) - compiled_graphs} on the later call; "
          f"fallbacks {m.get('fallbacks', 0)}")


if __name__ == "__main__":
    main()
