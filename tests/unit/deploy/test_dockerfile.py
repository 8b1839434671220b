"""deploy/Dockerfile builds the image the Kubernetes manifests expect.

There is no container engine in the test environment, so this reads the Dockerfile: two stages
on one pinned Python base, a non-root user, ``riverbeam serve`` as the entrypoint, and a build
context that lets in what building the wheel needs and nothing else.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "deploy" / "Dockerfile"
# BuildKit reads <Dockerfile>.dockerignore next to the Dockerfile; the context is the repo root.
DOCKERIGNORE = REPO / "deploy" / "Dockerfile.dockerignore"
K8S_BASE = REPO / "deploy" / "k8s" / "base"

SERVICE_PORTS = {50051, 50052, 50053, 50054, 8080}  # 8080: the console (HTTP)
METRICS_PORT = 9090
BASE_IMAGE = re.compile(r"^python:3\.11\.\d+-slim(-[a-z]+)?(@sha256:[0-9a-f]{64})?$")


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str


@dataclass(frozen=True)
class Stage:
    base: str
    name: str | None
    instructions: tuple[Instruction, ...]

    def all(self, keyword: str) -> list[str]:
        return [i.arguments for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> str:
        values = self.all(keyword)
        assert values, f"stage {self.name or self.base} has no {keyword}"
        return values[-1]


def _instructions(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comments (and parser directives) dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    logical: list[str] = []
    pending = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    result = []
    for line in logical:
        if line.strip():
            keyword, _, arguments = line.strip().partition(" ")
            result.append(Instruction(keyword.upper(), arguments.strip()))
    return result


def _stages() -> tuple[dict[str, str], list[Stage]]:
    """The global ARG defaults (before the first FROM) and the stages."""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    current: list[Instruction] | None = None
    base = name = None
    for instruction in _instructions(DOCKERFILE.read_text(encoding="utf-8")):
        if instruction.keyword == "FROM":
            if current is not None:
                stages.append(Stage(base or "", name, tuple(current)))
            words = instruction.arguments.split()
            base = words[0]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            current = []
        elif current is None:
            if instruction.keyword == "ARG" and "=" in instruction.arguments:
                key, value = instruction.arguments.split("=", 1)
                global_args[key] = value
        else:
            current.append(instruction)
    stages.append(Stage(base or "", name, tuple(current or ())))
    return global_args, stages


def _resolve(image: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: args[m.group(1)], image)


def test_two_stages_on_one_pinned_python_base() -> None:
    args, stages = _stages()
    assert len(stages) >= 2
    builder, runtime = stages[0], stages[-1]
    assert builder.name == "builder"
    # The venv built in the first stage links to the interpreter of the base image.
    assert builder.base == runtime.base
    assert BASE_IMAGE.match(_resolve(runtime.base, args)), _resolve(runtime.base, args)
    # The tag pins the version; a comment tells how to pin the digest too.
    assert re.search(r"^#.*@sha256:", DOCKERFILE.read_text(encoding="utf-8"), re.MULTILINE)


def test_builder_installs_a_wheel_and_the_runtime_copies_only_the_venv() -> None:
    _, stages = _stages()
    builder, runtime = stages[0], stages[-1]
    assert any("pip wheel" in run for run in builder.all("RUN"))
    # The wheel goes in with its `fast` extra: the services run on uvloop in the image.
    assert any(
        re.search(r"install .*riverbeam-\*\.whl\)?\[fast\]", run) for run in builder.all("RUN")
    )
    copies = runtime.all("COPY")
    assert copies and all(c.startswith("--from=builder ") for c in copies), copies
    # libgit2 comes inside the pygit2 wheel: nothing to install from the distribution.
    for run in runtime.all("RUN"):
        assert not re.search(r"\b(apt-get|apt|apk|pip)\b", run), run


def test_runtime_runs_as_an_unprivileged_user() -> None:
    _, stages = _stages()
    user = stages[-1].last("USER")
    uid, _, gid = user.partition(":")
    assert uid not in ("", "0", "root") and gid not in ("0", "root"), user
    assert uid == "10001"


def test_entrypoint_is_riverbeam_serve_with_router_by_default() -> None:
    _, stages = _stages()
    runtime = stages[-1]
    # Exec form: riverbeam is PID 1 and receives SIGTERM itself, so it can drain.
    assert json.loads(runtime.last("ENTRYPOINT")) == ["riverbeam", "serve"]
    assert json.loads(runtime.last("CMD")) == ["router"]
    exposed = {int(port.split("/")[0]) for line in runtime.all("EXPOSE") for port in line.split()}
    assert exposed == SERVICE_PORTS | {METRICS_PORT}


def test_pods_run_as_the_image_user() -> None:
    """The uid in the manifests is the one the image creates, so volumes are writable."""
    _, stages = _stages()
    uid = stages[-1].last("USER").partition(":")[0]
    for workload in sorted(K8S_BASE.glob("*/deployment.yaml")) + sorted(
        K8S_BASE.glob("*/statefulset.yaml")
    ):
        (obj,) = yaml.safe_load_all(workload.read_text(encoding="utf-8"))
        pod = obj["spec"]["template"]["spec"]
        assert str(pod["securityContext"]["runAsUser"]) == uid, workload
        assert str(pod["securityContext"]["fsGroup"]) == uid, workload
        assert pod["containers"][0]["command"] == json.loads(stages[-1].last("ENTRYPOINT"))[:1]


def _ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_build_context_is_an_allow_list_of_what_the_wheel_needs() -> None:
    patterns = _ignore_patterns()
    assert patterns[0] == "*", "the context should start from nothing"
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    needed = {"pyproject.toml", pyproject["project"]["readme"]}
    find = pyproject["tool"]["setuptools"]["packages"]["find"]
    needed |= {where for where in find["where"] if where != "."}
    if "." in find["where"]:
        needed |= {
            name for pattern in find["include"] if (REPO / (name := pattern.rstrip("*"))).is_dir()
        }
    assert needed <= allowed, f"missing from the build context: {sorted(needed - allowed)}"
    assert not allowed & {".git", ".venv", "tests", ".env"}


@pytest.mark.parametrize("stray", ["**/__pycache__", "**/*.egg-info"])
def test_build_context_drops_local_build_artefacts(stray: str) -> None:
    assert stray in _ignore_patterns()
