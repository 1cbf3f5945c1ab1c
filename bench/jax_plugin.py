"""The XLA CPU PJRT plugin the tpu device runs on (xla_cpu_pjrt), as a JAX device, for benchmarks that time
jax.jit on the very same plugin."""
import os


def plugin_device(jax):
    """The xla_cpu_pjrt plugin as a JAX device (None where JAX cannot load it)."""
    try:
        import xla_plugins.xla_cpu_pjrt as plugin
        from jax._src import xla_bridge
        xla_bridge.register_plugin("xla_cpu_pjrt", library_path=os.path.join(os.path.dirname(plugin.__file__),
                                                                          "xla_cpu_pjrt.so"))
        return jax.devices("xla_cpu_pjrt")[0]
    except Exception as e:  # an older or newer JAX may refuse the plugin: say so, measure the rest
        print(f"jax@plugin not measured: {type(e).__name__}: {e}")
        return None
