"""Regenerate the TypeScript stubs of clients/typescript (src/gen) with buf and protoc-gen-es.

Usage: python scripts/gen_ts.py [OUT_DIR]   (default: clients/typescript/src/gen)

Runs the TypeScript plugin of buf.gen.yaml (a local plugin from clients/typescript/node_modules:
run `npm ci` there first) over protos/, and over google/rpc/status.proto and error_details.proto
(taken from googleapis-common-protos, which the Python side depends on) so the client can read
the rich status details (ErrorInfo, LocalizedMessage, Help).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml
from google.rpc import status_pb2

ROOT = Path(__file__).resolve().parent.parent
TS_DIR = ROOT / "clients" / "typescript"
DEFAULT_OUT = TS_DIR / "src" / "gen"
ES_PLUGIN = "clients/typescript/node_modules/.bin/protoc-gen-es"
GOOGLE_RPC = ("status.proto", "error_details.proto")


def buf_binary() -> str:
    beside = Path(sys.executable).parent / "buf"
    found = str(beside) if beside.exists() else shutil.which("buf")
    if found is None:
        raise SystemExit("buf not found (pip install buf-bin, or put buf on PATH)")
    return found


def ts_template(out_dir: Path, *, managed: bool = True) -> dict[str, Any]:
    """buf.gen.yaml with only its TypeScript plugin, writing to `out_dir`.

    With `managed`, buf.gen.yaml's managed mode too (the language options of our protos, which
    the stubs' embedded descriptors carry); google.rpc keeps its own options.
    """
    config = yaml.safe_load((ROOT / "buf.gen.yaml").read_text())
    [plugin] = [p for p in config["plugins"] if p.get("local") == ES_PLUGIN]
    plugin = {**plugin, "local": str(ROOT / ES_PLUGIN), "out": str(out_dir)}
    template: dict[str, Any] = {"version": config["version"], "plugins": [plugin]}
    if managed and "managed" in config:
        template["managed"] = config["managed"]
    return template


def generate(out_dir: Path) -> None:
    if not (ROOT / ES_PLUGIN).exists():
        raise SystemExit(f"{ES_PLUGIN} missing: run `npm ci` in clients/typescript")
    shutil.rmtree(out_dir, ignore_errors=True)
    template = json.dumps(ts_template(out_dir))
    buf = buf_binary()
    subprocess.run(
        [buf, "generate", str(ROOT / "protos"), "--template", template], check=True, cwd=ROOT
    )
    template = json.dumps(ts_template(out_dir, managed=False))
    with tempfile.TemporaryDirectory() as tmp:
        rpc = Path(tmp) / "google" / "rpc"
        rpc.mkdir(parents=True)
        source = Path(status_pb2.__file__).parent
        for name in GOOGLE_RPC:
            shutil.copyfile(source / name, rpc / name)
        (Path(tmp) / "buf.yaml").write_text("version: v2\n")
        subprocess.run([buf, "generate", tmp, "--template", template], check=True, cwd=ROOT)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    generate(Path(args[0]).resolve() if args else DEFAULT_OUT)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
