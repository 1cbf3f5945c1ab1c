"""Mixture-of-experts decoding: one batch-64 decode step (one new token per
sequence, static cache) of a small Qwen3-MoE (64 experts, top-8, random
weights, float32), with each experts implementation, measured in one run:

    tpu "eager"           Transformers' loop over the experts hit (found on the host)
    tpu grouped_mm        Transformers' default (on tpu: every expert's product for every row)
    tpu tpu_ragged        torch_tpu's ragged_dot experts (torch_tpu/integrations/transformers_experts.py)
    tpu tpu_ragged fused  the same in fused eager mode (torch.tpu.set_eager_mode("fused"))
    tpu tpu_ragged comp.  the same step under torch.compile(backend="tpu")
    ... [E,in,out] comp.  the same, the expert weights stored [E, in, out] (is_transposed)
    cpu <impl>            PyTorch CPU eager with "eager", "batched_mm" and "grouped_mm", at
                          torch's thread count and at 1 thread (the best of all is the peer)
    ... no experts        the step with the experts computing nothing: what the rest costs

    python bench/moe.py [--repeats N] [--layers L]

Prints the median milliseconds per step (round-robin repeats, so load changes
hit every contender alike), the ratios the goals name (tpu_ragged >= 10x the
tpu "eager" experts; faster than PyTorch CPU's best), and the load average at
the start and the end: figures only count at load < 1.
"""
import argparse
import contextlib
import os
import statistics
import tempfile
import time

import torch

import torch_tpu

BATCH, PROMPT = 64, 16


def config(layers):
    import transformers as tf
    return tf.Qwen3MoeConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=layers,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                             max_position_embeddings=64, num_experts=64, num_experts_per_tok=8,
                             moe_intermediate_size=128, decoder_sparse_step=1, pad_token_id=0,
                             bos_token_id=1, eos_token_id=2)


class DecodeStep:
    """A model on `device` with a static cache holding a PROMPT-token prefill;
    each call decodes one token per sequence at the same position (the same work every time)."""

    def __init__(self, folder, device, impl, compiled=False, threads=None, experts_in_out=False, eager_mode=None):
        import transformers as tf
        self.device, self.threads, self.eager_mode = device, threads, eager_mode
        self.model = tf.AutoModelForCausalLM.from_pretrained(folder, device_map=device, dtype=torch.float32,
                                                             experts_implementation=impl).eval()
        if experts_in_out:
            # The expert weights stored [E, in, out] (Transformers' is_transposed layout), the one in which
            # XLA's CPU dot reads each expert's block without transposing it (bench/ragged_dot_forms.py).
            for m in self.model.modules():
                if hasattr(m, "is_transposed") and hasattr(m, "down_proj") and not m.is_transposed:
                    for name in ("gate_up_proj", "down_proj"):
                        w = getattr(m, name)
                        setattr(m, name, torch.nn.Parameter(w.detach().transpose(1, 2).contiguous()))
                    m.is_transposed = True
        self.cache = tf.StaticCache(config=self.model.config, max_cache_len=PROMPT + 8)
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(3, 1024, (BATCH, PROMPT + 1), generator=g).to(device)
        with torch.no_grad():
            self.model(ids[:, :PROMPT], past_key_values=self.cache,
                       cache_position=torch.arange(PROMPT, device=device))
        self.token = ids[:, PROMPT:]
        self.position = torch.tensor([PROMPT], device=device)
        self.forward = self.model.forward
        if compiled:
            self.forward = torch.compile(self.model.forward, backend="tpu", fullgraph=True)

    def __call__(self):
        for layer in self.cache.layers:  # back to the prefill's end: the same position every call
            layer.cumulative_length.fill_(PROMPT)
        threads = torch.get_num_threads()
        if self.threads:
            torch.set_num_threads(self.threads)
        try:
            with torch.no_grad(), (torch.tpu.set_eager_mode(self.eager_mode) if self.eager_mode
                                   else contextlib.nullcontext()):
                return self.forward(self.token, past_key_values=self.cache, cache_position=self.position).logits
        finally:
            torch.set_num_threads(threads)

    def sync(self):
        if self.device == "tpu":
            torch.tpu.synchronize()


def median_ms(steps, repeats, iters):
    """Median ms per step of each {name: DecodeStep}, round-robin over repeats."""
    for step in steps.values():
        for _ in range(2):
            step()
        step.sync()
    samples = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            n = iters.get(name, 1)
            t0 = time.perf_counter()
            for _ in range(n):
                step()
            step.sync()
            samples[name].append((time.perf_counter() - t0) / n * 1e3)
    return {name: statistics.median(v) for name, v in samples.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    import transformers as tf

    load_start = os.getloadavg()
    from transformers.integrations.moe import ExpertsInterface
    ExpertsInterface.register("bench_none", lambda self, hidden, index, weights: hidden * 0)
    cfg = config(args.layers)
    folder = tempfile.mkdtemp(prefix="bench_moe_")
    torch.manual_seed(0)
    tf.AutoModelForCausalLM.from_config(cfg).save_pretrained(folder)
    experts = cfg.num_experts * 3 * cfg.hidden_size * cfg.moe_intermediate_size * cfg.num_hidden_layers
    print(f"torch {torch.__version__}, transformers {tf.__version__}, torch_tpu {torch_tpu.__version__}; "
          f"{os.cpu_count()} CPUs; load average at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    print(f"Qwen3-MoE: {cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}, {cfg.num_experts} experts "
          f"(top-{cfg.num_experts_per_tok}, intermediate {cfg.moe_intermediate_size}; {experts / 1e6:.1f}M expert "
          f"parameters); batch {BATCH} decode step at position {PROMPT}, static cache, float32")

    steps = {
        "tpu eager experts": DecodeStep(folder, "tpu", "eager"),
        "tpu grouped_mm": DecodeStep(folder, "tpu", "grouped_mm"),
        "tpu tpu_ragged": DecodeStep(folder, "tpu", "tpu_ragged"),
        "tpu tpu_ragged fused": DecodeStep(folder, "tpu", "tpu_ragged", eager_mode="fused"),
        "tpu tpu_ragged compiled": DecodeStep(folder, "tpu", "tpu_ragged", compiled=True),
        "tpu tpu_ragged [E,in,out] comp.": DecodeStep(folder, "tpu", "tpu_ragged", compiled=True, experts_in_out=True),
    }
    steps["tpu no experts"] = DecodeStep(folder, "tpu", "bench_none")
    steps["tpu no experts compiled"] = DecodeStep(folder, "tpu", "bench_none", compiled=True)
    # PyTorch CPU with each implementation, at its default thread count and
    # at one thread (on a shared machine the default's threads can stall each other).
    for impl in ("eager", "batched_mm", "grouped_mm"):
        label = "eager experts" if impl == "eager" else impl
        steps[f"cpu {label}"] = DecodeStep(folder, "cpu", impl)
        if torch.get_num_threads() > 1:
            steps[f"cpu {label} 1 thread"] = DecodeStep(folder, "cpu", impl, threads=1)
    steps["cpu no experts"] = DecodeStep(folder, "cpu", "bench_none")
    if torch.get_num_threads() > 1:
        steps["cpu no experts 1 thread"] = DecodeStep(folder, "cpu", "bench_none", threads=1)
    # Every contender computes the same logits (tpu_ragged against the CPU's grouped_mm).
    ref = steps["cpu grouped_mm"]().float()
    for name, step in steps.items():
        out = step().cpu().float()  # also the first (compiling) call of each
        if "no experts" not in name:
            err = (out - ref).abs().max().item()
            assert err < 1e-3, f"{name}: logits differ from cpu grouped_mm by {err}"
    torch_tpu.reset_metrics()
    # Several calls per sample for the fast ones, so one sample is >= ~30 ms.
    iters = {"tpu tpu_ragged compiled": 3, "tpu tpu_ragged [E,in,out] comp.": 3, "cpu grouped_mm": 3, "cpu grouped_mm 1 thread": 3,
             "tpu no experts compiled": 5, "cpu no experts": 5, "cpu no experts 1 thread": 5}
    ms = median_ms(steps, args.repeats, iters)
    m = torch_tpu.metrics()
    load_end = os.getloadavg()

    print(f"\n{'decode step':30s} {'median ms':>10s}")
    for name, v in ms.items():
        print(f"{name:30s} {v:10.2f}")
    cpu_best = min((n for n in ms if n.startswith("cpu") and "no experts" not in n), key=ms.get)
    cpu_base = "cpu no experts" + (" 1 thread" if cpu_best.endswith("1 thread") else "")
    ragged, compiled, eager = ms["tpu tpu_ragged"], ms["tpu tpu_ragged compiled"], ms["tpu eager experts"]
    print(f"\nPyTorch CPU's best: {cpu_best} ({ms[cpu_best]:.2f} ms)")
    print(f"tpu eager experts / tpu tpu_ragged          = {eager / ragged:6.2f}x   (goal >= 10x)")
    print(f"tpu eager experts / tpu tpu_ragged compiled = {eager / compiled:6.2f}x")
    in_out = ms["tpu tpu_ragged [E,in,out] comp."]
    print(f"tpu eager experts / the same, experts [E, in, out] = {eager / in_out:6.2f}x")
    print(f"tpu grouped_mm / tpu tpu_ragged             = {ms['tpu grouped_mm'] / ragged:6.2f}x")
    print(f"tpu tpu_ragged / {cpu_best:26s} = {ragged / ms[cpu_best]:6.2f}   (goal < 1)")
    print(f"tpu tpu_ragged compiled / {cpu_best:17s} = {compiled / ms[cpu_best]:6.2f}   (goal < 1)")
    print(f"tpu tpu_ragged fused / {cpu_best:20s} = {ms['tpu tpu_ragged fused'] / ms[cpu_best]:6.2f}   (goal < 1)")
    print("the experts' share (step - no experts): " + ", ".join(
        f"{name} {ms[name] - ms[base]:.2f} ms" for name, base in (
            ("tpu tpu_ragged", "tpu no experts"), ("tpu tpu_ragged compiled", "tpu no experts compiled"),
            (cpu_best, cpu_base))))
    print(f"metrics during the timed steps: compiles {m['compiles']}, graph compiles {m['graph_compiles']}, "
          f"fallbacks {sum(m['fallbacks_by_op'].values()) if 'fallbacks_by_op' in m else '-'}")
    print(f"load average at end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}"
          + ("" if max(load_start[0], load_end[0]) < 1 else "   (>= 1: the machine was shared; figures are noisy)"))


if __name__ == "__main__":
    main()
