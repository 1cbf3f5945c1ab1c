"""Runtime configuration and counters: show_config(), metrics()."""
from . import _C

# torch.compile graphs loaded from the compile cache's folder, entries written,
# entries found bad (removed): counted by torch_tpu/_dynamo/graph_code.py, kept
# here so that metrics() needs no Dynamo.
graph_disk = {"graph_disk_hits": 0, "graph_disk_writes": 0, "graph_disk_errors": 0}


def reset_graph_disk() -> None:
    graph_disk.update(dict.fromkeys(graph_disk, 0))


def metrics() -> dict:
    """Counters: compiles, cache hits, executions, transfers, CPU fallbacks,
    and torch.compile's graph compiles, hits and fallbacks (graph_*)."""
    m = dict(_C.metrics())
    m.update(_C._graph_metrics())
    m.update(graph_disk)
    return m


def reset_metrics() -> None:
    _C.reset_metrics()
    _C._reset_graph_metrics()
    reset_graph_disk()


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
