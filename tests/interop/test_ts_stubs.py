"""buf generate makes the TypeScript stubs (a local protoc-gen-es from npm), and tsc compiles
the client package against them.

The stubs are checked in under clients/typescript/src/gen: regenerating them must give the same
files (run `python scripts/gen_ts.py` after changing protos/).
"""

from __future__ import annotations

import filecmp
import importlib.util
import subprocess
from pathlib import Path

import yaml

from tests.support.ts_client import TS_DIR, node_env, prepared_ts_client

ROOT = Path(__file__).resolve().parents[2]


def _gen_ts() -> object:
    spec = importlib.util.spec_from_file_location("gen_ts", ROOT / "scripts" / "gen_ts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_buf_gen_yaml_names_go_java_and_typescript() -> None:
    config = yaml.safe_load((ROOT / "buf.gen.yaml").read_text())
    assert config["version"] == "v2"
    assert config["inputs"] == [{"directory": "protos"}]
    plugins = {p.get("local") or p.get("protoc_builtin"): p for p in config["plugins"]}
    assert {"protoc-gen-go", "protoc-gen-go-grpc", "java", "protoc-gen-grpc-java"} <= set(plugins)
    es = plugins["clients/typescript/node_modules/.bin/protoc-gen-es"]
    assert "target=ts" in es["opt"]
    assert not any("remote" in p for p in config["plugins"])  # no network at generate time


def test_protos_carry_the_usual_language_options() -> None:
    for proto in sorted((ROOT / "protos" / "riverbeam" / "v1").glob("*.proto")):
        text = proto.read_text()
        for option in ("go_package", "java_package", "java_multiple_files", "csharp_namespace"):
            assert f"option {option} = " in text, (proto.name, option)


def test_buf_generate_typescript_matches_the_checked_in_stubs_and_tsc_compiles(
    tmp_path: Path,
) -> None:
    tools = prepared_ts_client(build=False)
    out = tmp_path / "gen"
    _gen_ts().generate(out)  # type: ignore[attr-defined]
    checked_in = TS_DIR / "src" / "gen"
    assert _files(out) == _files(checked_in)
    for name in _files(out):
        assert filecmp.cmp(out / name, checked_in / name, shallow=False), name
    assert "RiverbeamService" in (out / "riverbeam" / "v1" / "riverbeam_service_pb.ts").read_text()
    done = subprocess.run(
        [tools.tsc, "-p", "tsconfig.json", "--noEmit"],
        cwd=TS_DIR,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
