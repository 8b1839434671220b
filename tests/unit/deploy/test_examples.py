"""deploy/examples: manifests to copy into an overlay (not applied by any kustomization).

Each one is validated like the rest (the Kubernetes schemas, strict), and what it points at
exists in the base: the console Ingress routes to the console Service's named port.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import kubernetes_validate
import yaml

if TYPE_CHECKING:
    from conftest import KustomizeTree

EXAMPLES = Path(__file__).resolve().parents[3] / "deploy" / "examples"
KUBERNETES_VERSION = "1.30"


def _examples() -> list[dict[str, object]]:
    docs = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        with path.open(encoding="utf-8") as f:
            docs += [d for d in yaml.safe_load_all(f) if d is not None]
    return docs


def test_examples_match_the_kubernetes_schemas() -> None:
    docs = _examples()
    assert docs, "no examples"
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_console_ingress_routes_to_the_console_service(kustomize_tree: KustomizeTree) -> None:
    services = {
        o["metadata"]["name"]: o
        for o in kustomize_tree.resource_objects()
        if o["kind"] == "Service"
    }
    (ingress,) = [d for d in _examples() if d["kind"] == "Ingress"]
    assert ingress["metadata"]["namespace"] == "riverbeam"  # type: ignore[index]
    for rule in ingress["spec"]["rules"]:  # type: ignore[index]
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            service = services[backend["name"]]
            assert backend["name"] == "console"
            assert backend["port"]["name"] in [p["name"] for p in service["spec"]["ports"]]
    annotations = ingress["metadata"]["annotations"]  # type: ignore[index]
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"  # SSE
