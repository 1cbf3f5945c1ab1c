"""The bench/peers.py workloads written in JAX, run under jax.jit on JAX's own
XLA CPU backend (or, under jax.default_device, on the xla_cpu_pjrt plugin), with
the torch models' weights (the "XLA limit" peer).

Each builder takes numpy inputs / a torch state_dict and returns
(run, sync, output): run() does one unit of work (as the torch workloads do),
sync() waits for it, output() gives the last result as numpy for the check
against PyTorch CPU. Compilations are counted with jax.monitoring.
"""
import numpy as np

import jax
import jax.numpy as jnp

if not jax.config.jax_platforms:  # bench/peers.py may have added the xla_cpu_pjrt plugin
    jax.config.update("jax_platforms", "cpu")

_compiles = [0]


def _on_duration(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration":
        _compiles[0] += 1


jax.monitoring.register_event_duration_secs_listener(_on_duration)


def compiles() -> int:
    """XLA compilations JAX has made in this process (backend compiles)."""
    return _compiles[0]


def _holder():
    last = [None]

    def sync():
        jax.block_until_ready(last[0])

    return last, sync


# --- (a), (b) single ops -----------------------------------------------------

def binary(op, a, b):
    f = jax.jit(op)
    ja, jb = jax.block_until_ready((jnp.asarray(a), jnp.asarray(b)))
    last, sync = _holder()

    def run():
        last[0] = f(ja, jb)

    return run, sync, lambda: np.asarray(last[0])


# --- (c), (d) Qwen3 ----------------------------------------------------------

class Qwen3:
    """Qwen3ForCausalLM's forward (RMSNorm, q/k norm on the head dim, RoPE,
    grouped-query attention, SiLU MLP, tied head), from its config and
    state_dict; attention over a static KV cache for decoding."""

    def __init__(self, config, state_dict):
        c = config
        self.layers, self.heads, self.kv_heads = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads
        self.head_dim, self.eps = c.head_dim, c.rms_norm_eps
        theta = c.rope_parameters["rope_theta"]
        self.inv_freq = 1.0 / (theta ** (np.arange(0, self.head_dim, 2, dtype=np.float32) / self.head_dim))
        p = {k: jnp.asarray(v.detach().float().numpy()) for k, v in state_dict.items()}
        if "lm_head.weight" not in p:  # tied to the embedding
            p["lm_head.weight"] = p["model.embed_tokens.weight"]
        self.params = jax.block_until_ready(p)  # on the device before any timing

    def rms(self, x, w):
        return w * (x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + self.eps))

    def rope(self, x, positions):  # x: (b, h, t, d); positions: (t,)
        freqs = positions.astype(jnp.float32)[:, None] * self.inv_freq[None, :]
        emb = jnp.concatenate([freqs, freqs], axis=-1)
        cos, sin = jnp.cos(emb), jnp.sin(emb)
        half = self.head_dim // 2
        rotated = jnp.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        return x * cos + rotated * sin

    def forward(self, p, ids, positions, cache=None):
        """Logits for ids (b, t) at positions (t,). With cache (a list of (k, v)
        of shape (b, kv_heads, max_len, head_dim)), writes k/v at positions and
        attends over the whole cache (masked by position); returns the cache too."""
        b, t = ids.shape
        x = p["model.embed_tokens.weight"][ids]
        rep = self.heads // self.kv_heads
        new_cache = []
        for i in range(self.layers):
            pre = f"model.layers.{i}."
            h = self.rms(x, p[pre + "input_layernorm.weight"])

            def proj(name, n):
                y = (h @ p[pre + f"self_attn.{name}_proj.weight"].T).reshape(b, t, n, self.head_dim)
                return y

            q = self.rms(proj("q", self.heads), p[pre + "self_attn.q_norm.weight"]).transpose(0, 2, 1, 3)
            k = self.rms(proj("k", self.kv_heads), p[pre + "self_attn.k_norm.weight"]).transpose(0, 2, 1, 3)
            v = proj("v", self.kv_heads).transpose(0, 2, 1, 3)
            q, k = self.rope(q, positions), self.rope(k, positions)
            if cache is None:
                keys, values = k, v
                mask = positions[None, :] <= positions[:, None]
            else:
                ck, cv = cache[i]
                keys = jax.lax.dynamic_update_slice(ck, k, (0, 0, positions[0], 0))
                values = jax.lax.dynamic_update_slice(cv, v, (0, 0, positions[0], 0))
                new_cache.append((keys, values))
                mask = jnp.arange(keys.shape[2])[None, :] <= positions[:, None]
            keys, values = jnp.repeat(keys, rep, axis=1), jnp.repeat(values, rep, axis=1)
            s = (q @ keys.transpose(0, 1, 3, 2)) * self.head_dim ** -0.5
            s = jnp.where(mask, s, -jnp.inf)
            a = jax.nn.softmax(s, axis=-1) @ values
            x = x + a.transpose(0, 2, 1, 3).reshape(b, t, -1) @ p[pre + "self_attn.o_proj.weight"].T
            h = self.rms(x, p[pre + "post_attention_layernorm.weight"])
            g = jax.nn.silu(h @ p[pre + "mlp.gate_proj.weight"].T) * (h @ p[pre + "mlp.up_proj.weight"].T)
            x = x + g @ p[pre + "mlp.down_proj.weight"].T
        logits = self.rms(x, p["model.norm.weight"]) @ p["lm_head.weight"].T
        return logits, new_cache


def qwen3_forward(model, ids):
    f = jax.jit(lambda p, ids: model.forward(p, ids, jnp.arange(ids.shape[1]))[0])
    jids = jax.block_until_ready(jnp.asarray(ids))
    last, sync = _holder()

    def run():
        last[0] = f(model.params, jids)

    return run, sync, lambda: np.asarray(last[0])


def qwen3_decode(model, prompt, new_tokens):
    """Greedy decoding as the torch loop does it: a jitted prefill, then one
    jitted step per token (token and position stay on the device), the static
    cache donated to each step so it is updated in place."""
    b, t = prompt.shape
    max_len = t + new_tokens
    shape = (b, model.kv_heads, max_len, model.head_dim)
    cache = [(jnp.zeros(shape, jnp.float32), jnp.zeros(shape, jnp.float32)) for _ in range(model.layers)]

    def prefill(p, ids, cache):
        logits, cache = model.forward(p, ids, jnp.arange(ids.shape[1]), cache)
        return jnp.argmax(logits[:, -1], axis=-1)[:, None], jnp.array([ids.shape[1]]), cache

    def step(p, token, position, cache):
        logits, cache = model.forward(p, token, position, cache)
        return jnp.argmax(logits[:, -1], axis=-1)[:, None], position + 1, cache

    prefill, step = jax.jit(prefill, donate_argnums=2), jax.jit(step, donate_argnums=3)
    jprompt = jnp.asarray(prompt)
    state = {"cache": cache}
    last, sync = _holder()

    def run():
        token, position, c = prefill(model.params, jprompt, state["cache"])
        tokens = [token]
        for _ in range(new_tokens - 1):
            token, position, c = step(model.params, token, position, c)
            tokens.append(token)
        state["cache"] = c
        last[0] = jnp.concatenate(tokens, axis=1)

    return run, sync, lambda: np.asarray(last[0])


# --- (e) a training step of tests/compile/models.py Block ----------------------

def block_train_step(module, tokens, targets, lr, betas, eps, weight_decay):
    """Forward, cross-entropy, backward and an AdamW update (torch.optim.AdamW's
    formula) in one jitted function, parameters and state donated."""
    heads = module.heads
    e1, e3 = module.norm1.eps, module.norm_out.eps
    params = jax.block_until_ready({k: jnp.asarray(v.detach().numpy()) for k, v in module.state_dict().items()})

    def rms(x, w, e):
        e = jnp.finfo(x.dtype).eps if e is None else e
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + e) * w

    def loss_fn(p, tokens, targets):
        x = p["emb.weight"][tokens]
        b, t, d = x.shape
        qkv = (rms(x, p["norm1.weight"], e1) @ p["qkv.weight"].T).reshape(b, t, 3, heads, d // heads)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        s = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(d // heads)
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
        a = jax.nn.softmax(s, axis=-1) @ v
        x = x + a.transpose(0, 2, 1, 3).reshape(b, t, d) @ p["proj.weight"].T
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        h = (x - mu) * jax.lax.rsqrt(var + module.norm2.eps) * p["norm2.weight"] + p["norm2.bias"]
        g = jax.nn.silu(h @ p["gate.weight"].T + p["gate.bias"]) * (h @ p["up.weight"].T + p["up.bias"])
        x = x + g @ p["down.weight"].T + p["down.bias"]
        logits = (rms(x, p["norm_out.weight"], e3) @ p["head.weight"].T).reshape(b * t, -1)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets.reshape(-1, 1), axis=1))

    b1, b2 = betas

    def step(p, m, v, n, tokens, targets):
        loss, g = jax.value_and_grad(loss_fn)(p, tokens, targets)
        n = n + 1
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1 ** n, 1 - b2 ** n

        def update(p, m, v):
            p = p * (1 - lr * weight_decay)
            return p - (lr / c1) * m / (jnp.sqrt(v) / jnp.sqrt(c2) + eps)

        return jax.tree.map(update, p, m, v), m, v, n, loss

    f = jax.jit(step, donate_argnums=(0, 1, 2))
    zeros = lambda: jax.tree.map(jnp.zeros_like, params)  # noqa: E731
    state = {"p": params, "m": zeros(), "v": zeros(), "n": jnp.float32(0)}
    jt, jy = jnp.asarray(tokens), jnp.asarray(targets)
    last, sync = _holder()

    def run():
        state["p"], state["m"], state["v"], state["n"], last[0] = f(
            state["p"], state["m"], state["v"], state["n"], jt, jy)

    return run, sync, lambda: np.asarray(last[0])
