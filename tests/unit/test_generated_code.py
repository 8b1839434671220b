"""The checked-in protobuf code is what protoc makes of protos/ today, and buf lint is clean."""

from __future__ import annotations

import filecmp
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED_IN = ROOT / "libs" / "riverbeam" / "v1"
IGNORED = {"__pycache__"}


def _gen_proto() -> ModuleType:
    path = ROOT / "scripts" / "gen_proto.py"
    spec = importlib.util.spec_from_file_location("gen_proto", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> set[str]:
    return {
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and not IGNORED & set(p.relative_to(folder).parts)
    }


def test_generated_code_is_current(tmp_path: Path) -> None:
    _gen_proto().generate(tmp_path)
    fresh = tmp_path / "riverbeam" / "v1"
    generated, checked_in = _files(fresh), _files(CHECKED_IN)
    assert generated, "protoc generated nothing"
    problems = [f"missing from libs/riverbeam/v1: {n}" for n in sorted(generated - checked_in)]
    problems += [f"not generated from protos/: {n}" for n in sorted(checked_in - generated)]
    problems += [
        f"differs: {n}"
        for n in sorted(generated & checked_in)
        if not filecmp.cmp(fresh / n, CHECKED_IN / n, shallow=False)
    ]
    assert problems == [], "libs/riverbeam/v1 is stale: run `make proto`\n" + "\n".join(problems)


def test_every_proto_has_its_generated_module() -> None:
    for proto in sorted((ROOT / "protos" / "riverbeam" / "v1").glob("*.proto")):
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py"):
            assert (CHECKED_IN / f"{proto.stem}{suffix}").is_file(), f"{proto.stem}{suffix}"


def _buf() -> str | None:
    beside_python = Path(sys.executable).parent / "buf"
    if beside_python.is_file():
        return str(beside_python)
    return shutil.which("buf")


def test_buf_lint_is_clean() -> None:
    buf = _buf()
    if buf is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("buf is not installed (pip install buf-bin); CI must run buf lint")
        pytest.skip("buf is not installed (pip install buf-bin)")
    done = subprocess.run(
        [buf, "lint"], cwd=ROOT, capture_output=True, text=True, timeout=90, check=False
    )
    findings = (done.stdout + done.stderr).strip()
    assert done.returncode == 0 and not findings, f"buf lint:\n{findings}"
