"""The main job: train a small Qwen3 on `tpu`, then generate with it on `tpu`
(eager and compiled) and on the CPU.

Without --model it builds a Qwen3-architecture model and a BPE tokenizer from
the text this package ships (nothing is downloaded), trains it on `tpu` until
it knows that text by heart, and caches it ($TORCH_TPU_CACHE, default
~/.cache/torch_tpu; delete the folder to train again). It then loads the
checkpoint with from_pretrained(path, device_map="tpu") and decodes greedily
with a static cache: eager, compiled (generate compiles its decoding step with
the "tpu" backend by itself) and on the CPU. Tokens/s come from a second call;
the first call's time includes compiling.
"""
import argparse
import time

import torch

import torch_tpu


def printable(text: str) -> str:
    """Escapes what a terminal would interpret (control characters, e.g. from
    an untrained model); line breaks stay, indented under the label."""
    return "".join(c if c.isprintable() or c == "\n" else c.encode("unicode_escape").decode() for c in text) \
        .replace("\n", "\n" + " " * 11)


def timed_generate(model, inputs, new_tokens, compiled):
    kw = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
              cache_implementation="static", disable_compile=not compiled)
    t0 = time.perf_counter()
    out = model.generate(**inputs, **kw)
    out.cpu()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = model.generate(**inputs, **kw)
    out = out.cpu()  # waits for the device
    steady = time.perf_counter() - t0
    return out, first, new_tokens * out.shape[0] / steady


def checkpoint(args) -> tuple[str, bool]:
    """The folder to load and whether it is the model trained on the corpus."""
    from . import tiny_checkpoint, train_tiny

    if args.model:
        return args.model, False
    if args.no_train:
        return tiny_checkpoint.build(), False
    folder = tiny_checkpoint.default_folder(args.steps)
    if tiny_checkpoint.is_built(folder):
        log = train_tiny.read_log(folder)
        if log:
            print(f"trained checkpoint, cached ({log['steps']} steps on {log['device']} in {log['seconds']:.0f} s, "
                  f"loss {log['losses'][0]:.3f} -> {log['losses'][-1]:.3f}); delete the folder to train again")
    else:
        print(f"training (once; cached in {folder})")
        tiny_checkpoint.build_trained(folder, steps=args.steps)
    return folder, True


def main(argv=None):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from . import train_tiny

    hf_logging.disable_progress_bar()  # weight loading/saving bars would interleave with ours

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="any local checkpoint folder (no training)")
    p.add_argument("--steps", type=int, default=train_tiny.DEFAULT_STEPS,
                   help="training steps (default %(default)s; cached per step count)")
    p.add_argument("--no-train", action="store_true", help="random weights instead (meaningless text)")
    p.add_argument("--prompt", default="Every op is lowered to StableHLO")
    p.add_argument("--max-new-tokens", type=int, default=40)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--skip-cpu", action="store_true", help="don't measure the CPU")
    args = p.parse_args(argv)
    dtype = getattr(torch, args.dtype)
    path, trained_here = checkpoint(args)
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
    text = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    torch_tpu.reset_metrics()
    out_c, first_c, speed_c = timed_generate(model, tpu_inputs, args.max_new_tokens, compiled=True)
    compiled = torch_tpu.metrics()
    rows.append(("tpu compiled", first_c, speed_c))
    same = torch.equal(out, out_c)
    tokens = {"tpu eager": out, "tpu compiled": out_c}
    if not args.skip_cpu:
        cpu_model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
        out_cpu, first_cpu, speed_cpu = timed_generate(cpu_model, dict(inputs), args.max_new_tokens, compiled=False)
        rows.append(("cpu eager", first_cpu, speed_cpu))
        same_cpu = torch.equal(out, out_cpu)
        tokens["cpu eager"] = out_cpu

    print(f"prompt:    {printable(args.prompt)}")
    print(f"generated: {printable(text)}")
    print(f"           ({args.max_new_tokens} tokens, greedy, tpu eager)")
    if trained_here:
        overlap = train_tiny.longest_corpus_overlap(args.prompt + text)
        print(f"longest stretch of prompt + generated text found verbatim in the training text: "
              f"{len(overlap)} of {len(args.prompt + text)} characters")
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
    # What a later run of the job loads instead of compiling (the compile cache's folder).
    both = {k: eager[k] + compiled[k] for k in ("disk_cache_hits", "disk_cache_misses", "graph_disk_hits")}
    print(f"from the disk cache: programs loaded {both['disk_cache_hits']} (compiled {both['disk_cache_misses']}), "
          f"torch.compile graphs loaded {both['graph_disk_hits']}")
    return dict(path=path, text=text, tokens=tokens)  # for tests


if __name__ == "__main__":
    main()
