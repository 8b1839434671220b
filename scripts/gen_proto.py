"""Regenerate libs/riverbeam/v1 from protos/ (python, .pyi and gRPC stubs).

Usage: python scripts/gen_proto.py [OUT_DIR]   (default: libs)
"""

from __future__ import annotations

import sys
from pathlib import Path

import grpc_tools
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"


def generate(out_dir: Path) -> None:
    target = out_dir / "riverbeam" / "v1"
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*_pb2*.py*"):
        stale.unlink()
    files = sorted(
        str(p.relative_to(PROTOS)) for p in (PROTOS / "riverbeam" / "v1").glob("*.proto")
    )
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{PROTOS}",
        f"-I{well_known}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *files,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    init = target / "__init__.py"
    init.write_text(
        '"""Generated protobuf and gRPC code for riverbeam.v1. Do not edit; run `make proto`."""\n'
    )


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "libs")
