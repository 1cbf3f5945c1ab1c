"""Runtime configuration and counters: show_config(), metrics()."""
import sys

from . import _C


def metrics() -> dict:
    """Counters: compiles, cache hits, executions, transfers, CPU fallbacks,
    and torch.compile's graph compiles, hits and fallbacks (graph_*)."""
    m = dict(_C.metrics())
    m.update(_C._graph_metrics())
    # Graphs kept across processes (AOTAutograd's cache); counted once the
    # backend is loaded, which this does not force.
    graph_code = sys.modules.get("torch_tpu._dynamo.graph_code")
    m.update(graph_code.stats if graph_code else {"graph_disk_hits": 0, "graph_disk_writes": 0,
                                                     "graph_disk_errors": 0})
    return m


def reset_metrics() -> None:
    _C.reset_metrics()
    _C._reset_graph_metrics()
    graph_code = sys.modules.get("torch_tpu._dynamo.graph_code")
    if graph_code:
        graph_code.stats.update(dict.fromkeys(graph_code.stats, 0))


def config_text() -> str:
    """Plugin path, platform, PJRT API version and devices."""
    info = _C._runtime_info()
    major, minor = info["pjrt_api_version"]
    lines = [
        f"PJRT plugin:   {info['plugin_path']}",
        f"platform:      {info['platform_name']} ({info['platform_version']})",
        f"PJRT C API:    {major}.{minor} (torch_tpu needs 0.{_C.PJRT_MIN_API_MINOR} or newer)",
        f"devices:       {len(info['devices'])}",
    ]
    for i, d in enumerate(info["devices"]):
        lines.append(f"  tpu:{i}  {d['kind']}  {d['description']}")
    return "\n".join(lines)


def show_config() -> None:
    """Prints config_text()."""
    print(config_text())
