"""buf generate makes the TypeScript stubs (a local protoc-gen-es from npm), and tsc compiles
the client package against them.

The stubs are checked in under clients/typescript/src/gen: regenerating them must give the same
files (run `python scripts/gen_ts.py` after changing protos/).
"""

from __future__ import annotations

import base64
import filecmp
import importlib.util
import re
import subprocess
from pathlib import Path

import yaml
from google.protobuf import descriptor_pb2

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


LANGUAGE_OPTIONS = (
    "go_package",
    "java_package",
    "java_multiple_files",
    "java_outer_classname",
    "csharp_namespace",
    "objc_class_prefix",
    "php_namespace",
    "ruby_package",
    "swift_prefix",
)


def _embedded_descriptor(stub: Path) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto protoc-gen-es embeds in a stub (base64 in `fileDesc("...")`)."""
    found = re.search(r'fileDesc\("([^"]+)"', stub.read_text())
    assert found is not None, stub
    data = found.group(1) + "=" * (-len(found.group(1)) % 4)
    return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(data))


def test_the_contract_leaves_language_options_to_managed_mode() -> None:
    # A file option set in a .proto is part of the contract: changing it breaks generated code
    # (buf breaking refuses it). buf.gen.yaml's managed mode sets them at generation time.
    for proto in sorted((ROOT / "protos" / "riverbeam" / "v1").glob("*.proto")):
        text = proto.read_text()
        for option in LANGUAGE_OPTIONS:
            assert f"option {option} = " not in text, (proto.name, option)
    managed = yaml.safe_load((ROOT / "buf.gen.yaml").read_text())["managed"]
    assert managed["enabled"] is True


def test_generated_stubs_carry_the_usual_language_options() -> None:
    # The checked-in stubs are what buf generate makes with the managed mode (the next test
    # regenerates them and compares): their embedded descriptors show the options applied.
    stubs = sorted((TS_DIR / "src" / "gen" / "riverbeam" / "v1").glob("*_pb.ts"))
    assert len(stubs) == len(list((ROOT / "protos" / "riverbeam" / "v1").glob("*.proto")))
    for stub in stubs:
        descriptor = _embedded_descriptor(stub)
        options = descriptor.options
        stem = Path(descriptor.name).stem
        camel = "".join(part.title() for part in stem.split("_"))
        assert options.go_package == (
            "github.com/riverbeam/riverbeam/gen/go/riverbeam/v1;riverbeamv1"
        ), stub.name
        assert options.java_package == "dev.riverbeam.v1", stub.name
        assert options.java_multiple_files, stub.name
        assert options.java_outer_classname == f"{camel}Proto", stub.name
        assert options.csharp_namespace == "Riverbeam.V1", stub.name
        assert options.objc_class_prefix == "RXX", stub.name
        assert options.php_namespace == "Riverbeam\\V1", stub.name
        assert options.ruby_package == "Riverbeam::V1", stub.name
        assert options.swift_prefix == "RB", stub.name


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
