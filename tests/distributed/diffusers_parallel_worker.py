"""One rank of test_diffusers_parallel.py: Diffusers' own parallelism
(`ModelMixin.enable_parallelism`, `from_pretrained(..., parallel_config=)`)
on the tiny Flux and SD3 pipelines, 4 ranks, each on its tpu:0.

Rank 0 runs the Flux pipeline without parallelism on tpu (the reference, in
this process) and broadcasts its latents; then every rank runs the same
pipeline with its transformer parallelised four ways and compares:

  tp            TensorParallelConfig(tp_degree=4) through enable_parallelism
  tp_load       the same, sharded while reading the checkpoint (from_pretrained parallel_config=)
  ulysses       ContextParallelConfig(ulysses_degree=4) (all-to-all over heads)
  ring          ContextParallelConfig(ring_degree=4): expected to raise, the
                native attention backend (the one that runs on tpu) has no LSE
  sd3_tp/sd3_cp SD3Transformer2DModel: diffusers 0.42.1 gives it no `_tp_plan`
                and no `_cp_plan`; expected to raise those errors

Each case prints one line per rank, `CASE <name> rank <r>: OK ...`,
`... RAISED <type>: <message> @ <file>:<line>` (where the error was raised) or
`... FAIL ...` with the traceback; the ranks print `WORKER OK rank r` only
when every case did what it should. Usage: diffusers_parallel_worker.py FOLDER
(a folder shared by the ranks; rank 0 writes the pipeline there)."""
import datetime
import os
import sys
import time
import traceback
from pathlib import Path

import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diffusers"))

import tiny_pipes as pipes  # noqa: E402  (tests/diffusers: load, run, tolerances)
from diffusers import (  # noqa: E402
    ContextParallelConfig,
    FluxPipeline,
    FluxTransformer2DModel,
    TensorParallelConfig,
)
from torch.distributed.tensor import DTensor, Shard  # noqa: E402

from torch_tpu.examples import tiny_pipelines  # noqa: E402
from launch import say  # noqa: E402  (one write per line: ranks share the output pipe)

SIZE = 64  # an 8x8 latent: 16 image tokens; with T5_TOKENS=16 text tokens, both split 4 ways
STEPS = 2
HEADS, HEAD_DIM = 4, 8  # divisible by the 4 ranks (the tiny_pipelines Flux has 2 heads of 16)

RING_ERROR = "Native attention does not support return_lse=True"
SD3_TP_ERROR = "`_tp_plan` must be set on the model class to use tensor parallelism. " \
               "'SD3Transformer2DModel' does not define one."
SD3_CP_ERROR = "`cp_plan` must be provided either as an argument or set in the model's `_cp_plan` attribute."


def build_flux4(folder: str) -> str:
    """tiny_pipelines' Flux pipeline with a 4-head transformer (inner dim 4 x 8 = 32 as before; the rope
    axes sum to the head dim), written with save_pretrained (safetensors, which the TP load needs)."""
    components = tiny_pipelines.build_flux_components()
    torch.manual_seed(0)
    components["transformer"] = FluxTransformer2DModel(
        patch_size=1, in_channels=16, num_layers=1, num_single_layers=2, attention_head_dim=HEAD_DIM,
        num_attention_heads=HEADS, joint_attention_dim=32, pooled_projection_dim=32, axes_dims_rope=[2, 2, 4])
    FluxPipeline(**components).save_pretrained(folder)
    return folder


def where(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    path = frame.filename.split("site-packages/")[-1]
    return f"{path}:{frame.lineno} in {frame.name}"


class Cases:
    def __init__(self, rank):
        self.rank = rank
        self.ok = True

    def _line(self, name, text):
        say(f"CASE {name} rank {self.rank}: {text}")

    def matches(self, name, fn, expect):
        """fn() -> latents on tpu, equal to `expect` (CPU)."""
        start = time.perf_counter()
        try:
            got = fn()
            assert got.device.type == "tpu" and not isinstance(got, DTensor), (got.device, type(got))
            got = got.cpu()
            diff = (got - expect).abs().max().item()
            torch.testing.assert_close(got, expect, rtol=pipes.RTOL, atol=pipes.ATOL)
            self._line(name, f"OK max_abs_diff={diff:.3g} ({time.perf_counter() - start:.1f}s)")
        except Exception as e:  # noqa: BLE001  (reported, the other cases still run)
            self.ok = False
            self._line(name, f"FAIL {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} @ {where(e)}")
            traceback.print_exc()

    def raises(self, name, fn, exc_type, message):
        """fn() must raise exc_type with `message` in its text."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            text = " ".join(str(e).split())
            self._line(name, f"RAISED {type(e).__name__}: {text} @ {where(e)}")
            if not (isinstance(e, exc_type) and message in text):
                self.ok = False
                traceback.print_exc()
            return
        self.ok = False
        self._line(name, f"FAIL did not raise {exc_type.__name__}: {message}")


def load_transformer(folder, **kwargs):
    return FluxTransformer2DModel.from_pretrained(folder, subfolder="transformer", **kwargs).to("tpu")


def run_with(pipe, transformer):
    pipe.transformer = transformer
    return pipes.run(pipe, SIZE, generator=torch.Generator().manual_seed(0), steps=STEPS)


def check_tp_sharded(transformer, world):
    """The planned Linears hold a quarter of their rows (colwise) / columns (rowwise) on this rank."""
    q = transformer.transformer_blocks[0].attn.to_q.weight
    out = transformer.single_transformer_blocks[0].proj_out.weight
    assert isinstance(q, DTensor) and q.placements == (Shard(0),), q
    assert q.to_local().shape == (HEADS * HEAD_DIM // world, HEADS * HEAD_DIM), q.to_local().shape
    assert q.to_local().device.type == "tpu"
    assert isinstance(out, DTensor) and out.placements == (Shard(1),), out
    assert out.to_local().shape[1] == out.shape[1] // world, (out.to_local().shape, out.shape)


def tp(pipe, folder, world):
    transformer = load_transformer(folder)
    transformer.enable_parallelism(config=TensorParallelConfig(tp_degree=world))
    check_tp_sharded(transformer, world)
    return run_with(pipe, transformer)


def tp_load(pipe, folder, world):
    transformer = load_transformer(folder, parallel_config=TensorParallelConfig(tp_degree=world))
    check_tp_sharded(transformer, world)
    return run_with(pipe, transformer)


def context_parallel(pipe, folder, **degrees):
    transformer = load_transformer(folder)
    transformer.enable_parallelism(config=ContextParallelConfig(**degrees))
    processor = transformer.transformer_blocks[0].attn.processor
    assert processor._parallel_config is not None and processor._parallel_config.context_parallel_config
    return run_with(pipe, transformer)


def sd3_parallel(config):
    transformer = tiny_pipelines.build_sd3_components()["transformer"].to("tpu")
    assert transformer.config.num_attention_heads % 4 == 0
    transformer.enable_parallelism(config=config)


def main():
    folder = os.path.join(sys.argv[1], "flux-4heads")
    dist.init_process_group("tpu_dist", timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 4
    torch.tpu.set_device(int(os.environ["LOCAL_RANK"]))
    if rank == 0:
        build_flux4(folder)
    dist.barrier()

    pipe = pipes.load(folder, "tpu")
    # The reference: the same pipeline, no parallelism, on tpu, in rank 0's process; every rank gets it.
    latents = torch.empty(1, SIZE // 16 * SIZE // 16, 16, device="tpu")
    if rank == 0:
        start = time.perf_counter()
        latents = run_with(pipe, pipe.transformer).contiguous()
        say(f"reference latents {tuple(latents.shape)} in {time.perf_counter() - start:.1f}s")
    dist.broadcast(latents, src=0)
    expect = latents.cpu()
    assert torch.isfinite(expect).all() and expect.std() > 0.1, expect  # a real result to compare against

    cases = Cases(rank)
    cases.matches("tp", lambda: tp(pipe, folder, world), expect)
    cases.matches("tp_load", lambda: tp_load(pipe, folder, world), expect)
    cases.matches("ulysses", lambda: context_parallel(pipe, folder, ulysses_degree=world), expect)
    cases.raises("ring", lambda: context_parallel(pipe, folder, ring_degree=world), ValueError, RING_ERROR)
    cases.raises("sd3_tp", lambda: sd3_parallel(TensorParallelConfig(tp_degree=world)), ValueError, SD3_TP_ERROR)
    cases.raises("sd3_cp", lambda: sd3_parallel(ContextParallelConfig(ulysses_degree=world)), ValueError,
                 SD3_CP_ERROR)

    dist.barrier()
    if cases.ok:
        say(f"WORKER OK rank {rank}")
    dist.destroy_process_group()
    sys.exit(0 if cases.ok else 1)


if __name__ == "__main__":
    main()
