"""The main job: a Hugging Face causal LM generating on `tpu`.

    python -m torch_tpu.examples.generate [--model PATH] [--max-new-tokens N]

Without --model it builds (once, cached) a small Qwen3-architecture checkpoint
with random weights, so the text is meaningless; the point is the path: the
model is loaded with from_pretrained(device_map="tpu") and generates with
static-cache greedy decoding, eager and then compiled (torch.compile with the
"tpu" backend, which generate picks by itself on tpu), and on the CPU for
comparison. Tokens/s are measured on a second call, after the first call
compiled what it needed; the first call's time is printed too.
"""
import argparse
import time

import torch

import torch_tpu


def timed_generate(model, inputs, new_tokens, compiled):
    kw = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
              cache_implementation="static", disable_compile=not compiled)
    t0 = time.perf_counter()
    out = model.generate(**inputs, **kw)
    out.cpu()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = model.generate(**inputs, **kw)
    out.cpu()  # waits for the device
    steady = time.perf_counter() - t0
    return out, first, new_tokens * out.shape[0] / steady


def main(argv=None):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from .tiny_checkpoint import build

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="a local checkpoint folder (default: the cached tiny Qwen3)")
    p.add_argument("--prompt", default="Every op is lowered to StableHLO")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--skip-cpu", action="store_true", help="don't measure the CPU")
    args = p.parse_args(argv)
    dtype = getattr(torch, args.dtype)
    path = args.model or build()
    print(f"model: {path}")
    tokenizer = AutoTokenizer.from_pretrained(path)
    inputs = tokenizer([args.prompt], return_tensors="pt")

    model = AutoModelForCausalLM.from_pretrained(path, device_map="tpu", dtype=dtype).eval()
    tpu_inputs = {k: v.to("tpu") for k, v in inputs.items()}
    rows = []
    torch_tpu.reset_metrics()
    out, first, speed = timed_generate(model, tpu_inputs, args.max_new_tokens, compiled=False)
    eager = torch_tpu.metrics()
    rows.append(("tpu eager", first, speed))
    text = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:].cpu(), skip_special_tokens=True)
    torch_tpu.reset_metrics()
    out_c, first_c, speed_c = timed_generate(model, tpu_inputs, args.max_new_tokens, compiled=True)
    compiled = torch_tpu.metrics()
    rows.append(("tpu compiled", first_c, speed_c))
    same = torch.equal(out.cpu(), out_c.cpu())
    if not args.skip_cpu:
        cpu_model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
        out_cpu, first_cpu, speed_cpu = timed_generate(cpu_model, dict(inputs), args.max_new_tokens, compiled=False)
        rows.append(("cpu eager", first_cpu, speed_cpu))
        same_cpu = torch.equal(out.cpu(), out_cpu)

    print(f"prompt: {args.prompt!r}")
    print(f"generated ({args.max_new_tokens} tokens, greedy): {text!r}")
    print(f"{'':14}{'first call s':>14}{'tokens/s':>12}")
    for name, first_s, tps in rows:
        print(f"{name:14}{first_s:14.2f}{tps:12.1f}")
    print(f"tpu eager and compiled tokens identical: {same}")
    if not args.skip_cpu:
        print(f"tpu and cpu tokens identical: {same_cpu}")
    for name, m in (("eager", eager), ("compiled", compiled)):
        print(f"metrics ({name} generate x2): compiles {m['compiles']}, cache hits {m['cache_hits']}, "
              f"graph compiles {m.get('graph_compiles', 0)}, graph cache hits {m.get('graph_cache_hits', 0)}, "
              f"fallbacks {m['fallbacks']}")


if __name__ == "__main__":
    main()
