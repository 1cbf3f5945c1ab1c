"""docs/benchmarks.md holds several reports: bench/peers.py's, and sections
other benchmarks own (bench/distributed.py's), each between
<!-- section NAME --> and <!-- end section NAME -->. Writing one keeps the others."""
import os
import re

PATTERN = re.compile(r"<!-- section (\S+) -->\n.*?<!-- end section \1 -->\n", re.S)


def sections(text: str) -> dict:
    return {m.group(1): m.group(0) for m in PATTERN.finditer(text)}


def write_section(path: str, name: str, body: str) -> None:
    """Replaces (or appends) section `name` of the file at `path`."""
    block = f"<!-- section {name} -->\n{body.rstrip()}\n<!-- end section {name} -->\n"
    text = open(path).read() if os.path.exists(path) else ""
    found = sections(text)
    text = text.replace(found[name], block) if name in found else text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)


def write_keeping_sections(path: str, text: str) -> None:
    """Writes `text` as the file's main report, keeping its existing sections."""
    kept = sections(open(path).read()).values() if os.path.exists(path) else []
    with open(path, "w") as f:
        f.write(text.rstrip("\n") + "\n" + "".join("\n" + block for block in kept))
