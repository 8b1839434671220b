"""Fixtures over deploy/k8s: the kustomize tree, and the manifests raw or rendered.

``manifests`` is parametrised over the views the checks run on:

- ``files``: the objects in the YAML files the kustomizations list as resources, as written;
- ``base``, ``overlays/dev``, ``overlays/prod``: what ``kustomize build`` renders for that
  directory, when a ``kustomize`` or ``kubectl`` binary is on PATH (skipped otherwise; the raw
  files are still checked).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
K8S = REPO / "deploy" / "k8s"
NAMESPACE = "riverbeam"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
VIEWS = ("files", "base", "overlays/dev", "overlays/prod")

Obj = dict[str, Any]


def _yaml_documents(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


@dataclass(frozen=True)
class KustomizeTree:
    """The kustomization files under deploy/k8s and every file they name."""

    root: Path
    kustomizations: Mapping[Path, Obj]
    # file -> "resource", "patch" or "generator input"
    roles: Mapping[Path, str]

    @classmethod
    def load(cls, root: Path) -> KustomizeTree:
        kustomizations = {
            path.parent: _yaml_documents(path)[0]
            for path in sorted(root.rglob("kustomization.yaml"))
        }
        roles: dict[Path, str] = {}
        for directory, kustomization in kustomizations.items():
            for entry in kustomization.get("resources", []):
                path = (directory / entry).resolve()
                if not path.is_dir():
                    roles[path] = "resource"
            for patch in kustomization.get("patches", []):
                roles[(directory / patch["path"]).resolve()] = "patch"
            generators = [
                *kustomization.get("secretGenerator", []),
                *kustomization.get("configMapGenerator", []),
            ]
            for generator in generators:
                for source in generator.get("files", []):
                    roles[(directory / source.split("=", 1)[-1]).resolve()] = "generator input"
        return cls(root, kustomizations, roles)

    def documents(self, path: Path) -> list[Any]:
        return _yaml_documents(path)

    def resource_objects(self) -> tuple[Obj, ...]:
        files = sorted(path for path, role in self.roles.items() if role == "resource")
        return tuple(doc for path in files for doc in _yaml_documents(path))

    def generated_secrets(self, directory: Path | None = None) -> set[str]:
        """Secrets a secretGenerator makes: in one directory's kustomization, or in any."""
        kustomizations = (
            list(self.kustomizations.values())
            if directory is None
            else [self.kustomizations.get(directory, {})]
        )
        return {g["name"] for k in kustomizations for g in k.get("secretGenerator", [])}


@dataclass(frozen=True)
class Manifests:
    """One view of the manifests, with the lookups the checks share."""

    view: str
    objects: tuple[Obj, ...]
    generated_secrets: frozenset[str]
    namespace: str = NAMESPACE

    @property
    def rendered(self) -> bool:
        return self.view != "files"

    def of_kind(self, *kinds: str) -> list[Obj]:
        return [obj for obj in self.objects if obj["kind"] in kinds]

    def named(self, kind: str, name: str) -> Obj | None:
        return next((o for o in self.of_kind(kind) if o["metadata"]["name"] == name), None)

    def workloads(self) -> list[Obj]:
        return self.of_kind(*WORKLOAD_KINDS)

    def riverbeam_workloads(self) -> dict[str, Obj]:
        """Riverbeam's own workloads by component (router, runner, sandbox, store)."""
        return {
            labels["app.kubernetes.io/component"]: obj
            for obj in self.workloads()
            if (labels := self.pod_labels(obj)).get("app.kubernetes.io/name") == "riverbeam"
        }

    def env(self, container: Obj) -> dict[str, str]:
        """A container's plain environment: envFrom ConfigMaps, then env values (which win)."""
        env: dict[str, str] = {}
        for source in container.get("envFrom", []):
            if ref := source.get("configMapRef"):
                config = self.named("ConfigMap", ref["name"])
                env.update((config or {}).get("data", {}))
        env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
        return env

    @staticmethod
    def pod_spec(workload: Obj) -> Obj:
        spec: Obj = workload["spec"]["template"]["spec"]
        return spec

    @staticmethod
    def pod_labels(workload: Obj) -> dict[str, str]:
        labels: dict[str, str] = workload["spec"]["template"]["metadata"].get("labels", {})
        return labels

    @staticmethod
    def containers(workload: Obj) -> list[Obj]:
        spec = Manifests.pod_spec(workload)
        return [*spec.get("initContainers", []), *spec["containers"]]

    @staticmethod
    def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
        """Whether a LabelSelector matches labels; an empty selector matches everything."""
        selector = selector or {}
        if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
            return False
        for expression in selector.get("matchExpressions", []):
            key, values = expression["key"], expression.get("values") or []
            matches = {
                "In": key in labels and labels[key] in values,
                "NotIn": key not in labels or labels[key] not in values,
                "Exists": key in labels,
                "DoesNotExist": key not in labels,
            }[expression["operator"]]
            if not matches:
                return False
        return True


def _kustomize_command() -> list[str] | None:
    if exe := shutil.which("kustomize"):
        return [exe, "build"]
    if exe := shutil.which("kubectl"):
        return [exe, "kustomize"]
    return None


@functools.cache
def _render(directory: Path) -> tuple[Obj, ...]:
    command = _kustomize_command()
    assert command is not None
    proc = subprocess.run(
        [*command, str(directory)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"kustomize build {directory} failed:\n{proc.stderr}"
    return tuple(doc for doc in yaml.safe_load_all(proc.stdout) if doc is not None)


@pytest.fixture(scope="session")
def kustomize_tree() -> KustomizeTree:
    return KustomizeTree.load(K8S)


@pytest.fixture(scope="module", params=VIEWS)
def manifests(request: pytest.FixtureRequest, kustomize_tree: KustomizeTree) -> Manifests:
    view: str = request.param
    if view == "files":
        return Manifests(
            view, kustomize_tree.resource_objects(), frozenset(kustomize_tree.generated_secrets())
        )
    if _kustomize_command() is None:
        pytest.skip(
            "no kustomize or kubectl on PATH: overlays not rendered (raw files still checked)"
        )
    directory = K8S / view
    return Manifests(
        view, _render(directory), frozenset(kustomize_tree.generated_secrets(directory))
    )
