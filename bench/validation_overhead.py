"""What TORCH_TPU_VALIDATE_CACHE=1 (on for the whole CI run) costs a decode
loop: greedy generation of 24 tokens with a tiny random Qwen3 in eager mode,
once with the mode off and once on, each in its own process (the mode is read
once per process). Every cache hit under validation rebuilds its program
(meta kernel, lowering, program text) and compares it with the cached one.

    python bench/validation_overhead.py
"""
import os
import subprocess
import sys

CHILD = r"""
import time, torch, transformers, torch_tpu
torch.manual_seed(0)
cfg = transformers.Qwen3Config(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=64)
model = transformers.Qwen3ForCausalLM(cfg).eval().to("tpu")
ids = torch.randint(0, 128, (2, 6)).to("tpu")
kw = dict(max_new_tokens=24, min_new_tokens=24, do_sample=False)
model.generate(ids, **kw)  # warm-up: compiles
times = []
for _ in range(5):
    t = time.perf_counter()
    model.generate(ids, **kw)
    torch.tpu.synchronize()
    times.append(time.perf_counter() - t)
m = torch_tpu.metrics()
print(f"{sorted(times)[2] * 1000:.0f} {m['cache_validations']}")
"""


def main():
    print(f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = {}
    for validate in ("0", "1"):
        env = dict(os.environ, TORCH_TPU_VALIDATE_CACHE=validate)
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
        ms, validations = out.stdout.split()[-2:]
        results[validate] = float(ms)
        print(f"TORCH_TPU_VALIDATE_CACHE={validate}: {float(ms):7.0f} ms per generate of 24 tokens "
              f"(median of 5; {validations} hits validated)")
    print(f"validation costs {results['1'] / results['0']:.2f}x")
    print(f"load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
