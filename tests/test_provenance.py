"""No file in the tree comes from another project (DESIGN.md §3)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["csrc", "torch_tpu", "tests", "bench", "scripts", ".ci"]
FOREIGN_MARKERS = re.compile(
    r"Copyright .*(OpenXLA|Google|Meta Platforms|Facebook|NVIDIA|TensorFlow Authors|XLA Authors)"
    r"|Licensed under the Apache License|SPDX-License-Identifier",
    re.IGNORECASE)


def source_files():
    for d in SOURCE_DIRS:
        base = ROOT / d
        if base.exists():
            yield from (p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_no_foreign_license_headers():
    offenders = [str(p.relative_to(ROOT)) for p in source_files()
                 if FOREIGN_MARKERS.search(p.read_text(errors="ignore"))
                 and p.name != "test_provenance.py"]
    assert offenders == []


def test_pjrt_header_is_our_own():
    names = {p.name for p in source_files()}
    assert "pjrt_c_api.h" not in names
    includes = re.compile(r'#include\s+[<"](xla/|pjrt_c_api\.h|stablehlo/|mlir/)')
    offenders = [str(p.relative_to(ROOT)) for p in source_files()
                 if p.suffix in {".h", ".cpp"} and includes.search(p.read_text())]
    assert offenders == []
