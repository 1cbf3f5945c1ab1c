"""A draw as a standalone Python script: literal inputs, the call on the CPU
and on tpu, both results (or exceptions) printed."""
from .args import Alias
from .tensors import TensorSpec, literal


def _expr(v):
    if isinstance(v, TensorSpec):
        src, view = literal(v)
        dev = "" if v.device == "cpu" else ".to(dev)"
        return src + dev + (f".as_strided({view[0]}, {view[1]}, {view[2]})" if view else "")
    if isinstance(v, Alias):
        return f"a_{v.name}"
    if isinstance(v, list):
        return "[" + ", ".join(_expr(e) for e in v) + "]"
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def repro(call):
    lines = ["import torch", "from math import inf, nan", "", "", "def run(dev):"]
    names = []
    for name, v, kw in call.args:
        lines.append(f"    a_{name} = {_expr(v)}")
        names.append(f"{name}=a_{name}" if kw else f"a_{name}")
    lines.append(f"    return {call.qualname}({', '.join(names)})")
    lines += ["", "", "res = {}", 'for dev in ("cpu", "tpu"):', "    try:",
              "        r = run(dev)",
              "        res[dev] = [t.cpu() if isinstance(t, torch.Tensor) else t",
              "                    for t in (r if isinstance(r, (tuple, list)) else [r])]",
              "    except Exception as e:",
              '        res[dev] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else \'\'}"',
              '    print(dev, res[dev])',
              'if not isinstance(res["cpu"], str) and not isinstance(res["tpu"], str):',
              '    for i, (a, b) in enumerate(zip(res["tpu"], res["cpu"])):',
              "        try:",
              "            torch.testing.assert_close(a, b, equal_nan=True)",
              "        except AssertionError as e:",
              '            print(f"out[{i}] differs:", e)']
    return "\n".join(lines) + "\n"
