"""A Hugging Face Hub-style kernel package for the tpu device, loaded offline
with the `kernels` library (kernels==0.17.2) and used by Transformers models.

The package, tpu_rmsnorm_kernel/, has the layout kernels expects of a Hub
kernel repository: build/<variant>/metadata.json and the Python package
build/<variant>/<name with - as _>/ (here the noarch variant `torch-tpu`,
chosen because torch_tpu sets torch.backends.tpu). Its layers.RMSNorm runs a
JAX function as a torch op (torch_tpu._internal.pallas.jax_op).

Shown here, with no hub access (HF_HUB_OFFLINE=1, and the hub client's
download and listing calls made to fail):
1. get_local_kernel(path) loads the tpu variant, and its RMSNorm on tpu
   tensors equals Transformers' RMSNorm on the CPU (float32, bfloat16, views);
2. kernelize(model, device="tpu", mode=Mode.INFERENCE) with a
   LocalLayerRepository mapping for the layer name "RMSNorm" replaces the
   forward of every RMSNorm of a tiny Llama / Qwen3 on tpu by the kernel's,
   and the logits do not change;
3. LOCAL_KERNELS=<repo id>=<path> makes get_kernel(<repo id>, version=...)
   (and a LayerRepository with a revision) load the same package.

Runs under TORCH_TPU_FALLBACK=error (set here): nothing may fall back.
"""
import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub reads it, where this module imports it first

import json  # noqa: E402
import shutil  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
from torch.testing import assert_close  # noqa: E402

import torch_tpu  # noqa: E402

pytest.importorskip("jax", reason="scripts/setup.sh installs jax==0.10.2; CI always has it")
kernels = pytest.importorskip("kernels", reason="scripts/setup.sh installs kernels==0.17.2")
pytest.importorskip("transformers", reason="scripts/setup.sh installs the pinned transformers")

import huggingface_hub  # noqa: E402
import transformers  # noqa: E402
from huggingface_hub import constants as hf_constants  # noqa: E402
from kernels import (  # noqa: E402
    LayerRepository,
    LocalLayerRepository,
    Mode,
    get_kernel,
    get_loaded_kernels,
    get_local_kernel,
    kernelize,
    replace_kernel_forward_from_hub,
    use_kernel_mapping,
)
from kernels.backends import TPU, _backend  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRMSNorm  # noqa: E402
from transformers.models.qwen3.modeling_qwen3 import Qwen3RMSNorm  # noqa: E402


@pytest.fixture(autouse=True)
def _no_fallback(monkeypatch):
    """TORCH_TPU_FALLBACK=error for this module's tests only (set at import it
    leaked into every later test of the same pytest process)."""
    monkeypatch.setenv("TORCH_TPU_FALLBACK", "error")

KERNEL_DIR = Path(__file__).resolve().parent / "tpu_rmsnorm_kernel"
VARIANT_DIR = KERNEL_DIR / "build" / "torch-tpu"
METADATA = json.loads((VARIANT_DIR / "metadata.json").read_text())
REPO_ID = "local-tpu-kernels/tpu-rmsnorm"  # a name for LOCAL_KERNELS; no such repository is looked up
LAYER_NAME = "RMSNorm"  # what Transformers' @use_kernel_forward_from_hub names Llama's and Qwen3's RMSNorm
NORM_CLASSES = {"llama": LlamaRMSNorm, "qwen3": Qwen3RMSNorm}
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.bfloat16: dict(rtol=1.6e-2, atol=1e-5)}


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    """No hub access: offline mode, and the hub client's download, listing and
    trust calls fail the test if anything reaches them."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.delenv("LOCAL_KERNELS", raising=False)

    def no_hub(name):
        def call(*args, **kwargs):
            raise AssertionError(f"the test reached the hub client: HfApi.{name}{args}")
        return call

    for name in ("snapshot_download", "hf_hub_download", "list_repo_tree", "list_repo_refs",
                 "get_organization_overview"):
        monkeypatch.setattr(huggingface_hub.HfApi, name, no_hub(name))


@pytest.fixture
def rmsnorm_is_kernel_layer():
    """Llama's and Qwen3's RMSNorm as kernel layers named "RMSNorm".

    Transformers 5.23 decorates them with use_kernel_forward_from_hub("RMSNorm"),
    but only when kernels is a version it accepts (0.18.2 <= v < 0.19.0); with
    kernels 0.17.2 its decorator is a no-op. Then this does what the decorator
    does (kernels.replace_kernel_forward_from_hub), and undoes it afterwards."""
    added = []
    for cls in NORM_CLASSES.values():
        if hasattr(cls, "kernel_layer_name"):
            assert cls.kernel_layer_name == LAYER_NAME
        else:
            replace_kernel_forward_from_hub(cls, LAYER_NAME)
            added.append(cls)
    yield
    for cls in added:
        del cls.kernel_layer_name
        del cls.kernel_condition


def load_kernel_module():
    return get_local_kernel(KERNEL_DIR)


def norm_pair(cls, hidden, eps, weight_dtype, seed=0):
    """(CPU reference layer, the same layer on tpu) with random weights."""
    g = torch.Generator().manual_seed(seed)
    cpu = cls(hidden, eps=eps)
    with torch.no_grad():
        cpu.weight.copy_(1 + 0.5 * torch.randn(hidden, generator=g))
    cpu = cpu.to(weight_dtype)
    tpu = cls(hidden, eps=eps).to(weight_dtype)
    tpu.load_state_dict(cpu.state_dict())
    return cpu, tpu.to("tpu")


def inputs(layout, shape, dtype, seed=1):
    """(CPU tensor, the same values as a tpu tensor of the given layout)."""
    g = torch.Generator().manual_seed(seed)
    *outer, hidden = shape
    if layout == "contiguous":
        x = torch.randn(shape, generator=g).to(dtype)
        return x, x.to("tpu")
    if layout == "strided last dim":
        wide = (3 * torch.randn(*outer, 2 * hidden, generator=g)).to(dtype)
        return wide[..., ::2], wide.to("tpu")[..., ::2]
    if layout == "transposed":
        base = (3 * torch.randn(*reversed(outer), hidden, generator=g)).to(dtype)
        perm = tuple(reversed(range(len(outer)))) + (len(outer),)
        return base.permute(perm), base.to("tpu").permute(perm)
    raise ValueError(layout)


# 1. get_local_kernel ---------------------------------------------------------------------------


def test_get_local_kernel_picks_the_tpu_variant():
    assert hasattr(torch.backends, "tpu")
    assert _backend() == TPU()  # kernels detects TorchTPU through torch.backends.tpu
    kernel = load_kernel_module()
    # kernels imports build/torch-tpu/<python name>/__init__.py under the build's id.
    assert kernel.__name__ == METADATA["id"] == kernel.OPS_PREFIX
    assert Path(kernel.__file__) == VARIANT_DIR / "tpu_rmsnorm" / "__init__.py"
    assert get_local_kernel(KERNEL_DIR) is kernel  # imported once
    (loaded,) = [k for k in get_loaded_kernels() if k.module is kernel]
    assert str(loaded.metadata.name) == "tpu-rmsnorm" and loaded.metadata.version == 1
    assert loaded.metadata.license == "Apache-2.0" and loaded.metadata.python_depends == []
    assert loaded.metadata.backend.backend_type == kernels._rust.Backend.TPU
    # The CPU backend (the only other one kernels allows here) has no variant in this package.
    with pytest.raises(FileNotFoundError, match="torch-tpu: backend \\(tpu\\) does not match system backend \\(cpu\\)"):
        get_local_kernel(KERNEL_DIR, backend="cpu")


@pytest.mark.parametrize("layout", ["contiguous", "strided last dim", "transposed"])
@pytest.mark.parametrize("x_dtype,w_dtype", [(torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16),
                                             (torch.bfloat16, torch.float32)], ids=["f32", "bf16", "bf16-f32w"])
@pytest.mark.parametrize("arch", list(NORM_CLASSES))
def test_layer_matches_transformers_rmsnorm(arch, x_dtype, w_dtype, layout):
    kernel = load_kernel_module()
    eps = 1e-6 if arch == "llama" else 1e-5
    ref, layer = norm_pair(NORM_CLASSES[arch], 48, eps, w_dtype)
    # The kernel's forward on the Transformers layer, as kernelize installs it.
    layer.forward = types.MethodType(kernel.layers.RMSNorm.forward, layer)
    x_cpu, x_tpu = inputs(layout, (3, 5, 48), x_dtype)
    assert x_tpu.is_contiguous() == (layout == "contiguous")

    calls = kernel.call_count()
    with torch.no_grad():
        expect = ref(x_cpu)
        got = layer(x_tpu)
    assert kernel.call_count() == calls + 1
    assert got.device.type == "tpu" and got.shape == expect.shape and got.dtype == expect.dtype
    assert_close(got.cpu(), expect, **TOL[x_dtype])


def test_layer_runs_its_jax_op():
    """The layer's compute is the package's jax_op: its first call compiles the
    op's program (named "jax_op <name>" in the metrics), later calls of the
    same signature reuse it."""
    kernel = load_kernel_module()
    eps = 3.25e-6  # an epsilon no other test uses: a jax_op of its own, made here
    key = f"jax_op {kernel.rms_norm_op_name(eps)}"
    assert kernel.rms_norm_op_name(eps).startswith(METADATA["id"] + "_")
    assert key not in torch_tpu.metrics()["compiles_by_op"]
    ref, layer = norm_pair(LlamaRMSNorm, 40, eps, torch.float32)
    x_cpu, x_tpu = inputs("contiguous", (2, 7, 40), torch.float32)
    calls = kernel.call_count()
    with torch.no_grad():
        for _ in range(3):
            got = kernel.layers.RMSNorm.forward(layer, x_tpu)
        expect = ref(x_cpu)
    assert kernel.call_count() == calls + 3
    assert torch_tpu.metrics()["compiles_by_op"][key] == 1
    assert hasattr(torch.ops.tpu_jax, kernel.rms_norm_op_name(eps))
    assert_close(got.cpu(), expect, **TOL[torch.float32])


# 2. kernelize ---------------------------------------------------------------------------------


def tiny_model(arch, seed=0):
    """A tiny random-weight causal LM from a config (nothing downloaded), on
    the CPU, its RMSNorm weights random too (they start at one)."""
    common = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=128,
                  pad_token_id=0, bos_token_id=1, eos_token_id=2)
    config = transformers.LlamaConfig(**common) if arch == "llama" else transformers.Qwen3Config(**common)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, NORM_CLASSES[arch]):
                m.weight.normal_(1.0, 0.2)
    return model


def norms(model):
    return [m for m in model.modules() if hasattr(type(m), "kernel_layer_name")]


@pytest.mark.parametrize("arch", list(NORM_CLASSES))
def test_kernelize_replaces_rmsnorm_forward(rmsnorm_is_kernel_layer, arch):
    kernel = load_kernel_module()
    cpu_model = tiny_model(arch)
    ids = torch.randint(3, 128, (2, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        cpu_logits = cpu_model(ids).logits
    model = cpu_model.to("tpu")
    layers = norms(model)
    # Llama: input/post-attention norms per layer and the final norm; Qwen3 adds q_norm and k_norm.
    assert len(layers) == {"llama": 2 * 2 + 1, "qwen3": 4 * 2 + 1}[arch]

    calls = kernel.call_count()
    with torch.no_grad():
        before = model(ids.to("tpu")).logits
    assert kernel.call_count() == calls  # not kernelized yet: Transformers' own forward

    mapping = {LAYER_NAME: {"tpu": LocalLayerRepository(repo_path=KERNEL_DIR, layer_name=LAYER_NAME)}}
    with use_kernel_mapping(mapping):
        assert kernelize(model, device="tpu", mode=Mode.INFERENCE) is model
    assert all(m.forward.__func__ is kernel.layers.RMSNorm.forward for m in layers)

    calls = kernel.call_count()
    with torch.no_grad():
        after = model(ids.to("tpu")).logits
    assert kernel.call_count() == calls + len(layers)  # every RMSNorm ran the jax_op, once
    assert after.device.type == "tpu"
    assert_close(after.cpu(), before.cpu(), rtol=1e-5, atol=1e-5)
    assert_close(after.cpu(), cpu_logits, rtol=1e-5, atol=1e-5)


def test_kernelize_for_training_keeps_transformers_forward(rmsnorm_is_kernel_layer):
    """The layer declares has_backward = False (the jax_op has no backward):
    kernelize in Mode.TRAINING keeps the original forward."""
    kernel = load_kernel_module()
    model = tiny_model("llama").to("tpu")
    mapping = {LAYER_NAME: {"tpu": LocalLayerRepository(repo_path=KERNEL_DIR, layer_name=LAYER_NAME)}}
    with use_kernel_mapping(mapping):
        kernelize(model, device="tpu", mode=Mode.TRAINING)
    assert all(m.forward.__func__ is LlamaRMSNorm.forward for m in norms(model))
    calls = kernel.call_count()
    model(torch.randint(3, 128, (1, 6)).to("tpu")).logits.sum().backward()
    assert kernel.call_count() == calls
    assert model.model.norm.weight.grad is not None


# 3. LOCAL_KERNELS + get_kernel ----------------------------------------------------------------


def test_local_kernels_env_var_get_kernel(monkeypatch):
    # Without the override, the repo id is looked up in the local hub cache (offline) and isn't there.
    with pytest.raises(ValueError, match="not available in the local cache"):
        get_kernel(REPO_ID, version=1)

    # kernels 0.17.2: LOCAL_KERNELS="<repo id>=<path>[:<repo id>=<path>...]", read when a kernel is
    # loaded; the path is the repository folder (the one holding build/). get_kernel still needs a
    # version or revision, which the local override does not check.
    monkeypatch.setenv("LOCAL_KERNELS", f"{REPO_ID}={KERNEL_DIR}")
    kernel = get_kernel(REPO_ID, version=1)
    assert kernel is load_kernel_module()  # the same variant path: the same module

    ref, layer = norm_pair(LlamaRMSNorm, 32, 1e-6, torch.float32)
    x_cpu, x_tpu = inputs("contiguous", (4, 32), torch.float32)
    with torch.no_grad():
        got = kernel.layers.RMSNorm.forward(layer, x_tpu)
        assert_close(got.cpu(), ref(x_cpu), **TOL[torch.float32])


def test_local_kernels_env_var_layer_repository(monkeypatch, rmsnorm_is_kernel_layer):
    """A LayerRepository by repo id resolves through LOCAL_KERNELS too, given a
    revision: with version=N, kernels 0.17.2 first resolves the version from
    the hub cache (offline) and fails before it consults LOCAL_KERNELS."""
    monkeypatch.setenv("LOCAL_KERNELS", f"{REPO_ID}={KERNEL_DIR}")
    kernel = load_kernel_module()
    with pytest.raises(ValueError, match="not available in the local cache"):
        LayerRepository(REPO_ID, layer_name=LAYER_NAME, version=1).load()

    ref, layer = norm_pair(LlamaRMSNorm, 32, 1e-6, torch.float32)
    mapping = {LAYER_NAME: {"tpu": LayerRepository(REPO_ID, layer_name=LAYER_NAME, revision="main")}}
    with use_kernel_mapping(mapping):
        kernelize(layer, device="tpu", mode=Mode.INFERENCE)
    assert layer.forward.__func__ is kernel.layers.RMSNorm.forward
    x_cpu, x_tpu = inputs("transposed", (4, 3, 32), torch.float32)
    calls = kernel.call_count()
    with torch.no_grad():
        got = layer(x_tpu)
        assert_close(got.cpu(), ref(x_cpu), **TOL[torch.float32])
    assert kernel.call_count() == calls + 1


def test_python_depends_must_be_from_kernels_list(tmp_path):
    """Why metadata.json lists no python-depends: kernels 0.17.2 accepts only
    names from its own list (einops, helion, tvm-ffi; none for tpu), so a
    kernel cannot declare jax there (torch_tpu's [jax] extra provides it)."""
    copy = tmp_path / "tpu_rmsnorm_kernel"
    shutil.copytree(KERNEL_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    meta = copy / "build" / "torch-tpu" / "metadata.json"
    data = json.loads(meta.read_text())
    data["python-depends"] = ["jax"]
    data["id"] = "_tpu_rmsnorm_tpu_jaxdep"
    meta.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="unsupported kernel dependency: jax"):
        get_local_kernel(copy)
