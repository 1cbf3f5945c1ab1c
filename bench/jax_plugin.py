"""The PJRT plugin the tpu device runs on (by default xla_cpu_pjrt; TORCH_TPU_PJRT_PLUGIN names another), as a JAX
device, for benchmarks that time jax.jit on the very same plugin."""
import torch_tpu


def plugin_device(jax):
    """The tpu device's plugin as a JAX device (None where JAX cannot load it). Asks torch_tpu which plugin
    that is without starting its runtime, so JAX may start the plugin first."""
    try:
        from jax._src import xla_bridge
        xla_bridge.register_plugin("xla_cpu_pjrt", library_path=torch_tpu._C._plugin_path())
        return jax.devices("xla_cpu_pjrt")[0]
    except Exception as e:  # an older or newer JAX may refuse the plugin: say so, measure the rest
        print(f"jax@plugin not measured: {type(e).__name__}: {e}")
        return None
