"""deploy/monitoring: a ServiceMonitor that scrapes every service, and a Grafana dashboard whose
queries name only metrics the code defines."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from tests.unit.deploy.conftest import K8S, REPO, KustomizeTree
from tests.unit.telemetry.test_metrics_documented import defined

MONITORING = REPO / "deploy" / "monitoring"
_SUFFIXES = ("_bucket", "_count", "_sum")


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((MONITORING / name).read_text()) if d]


def _riverbeam_pods() -> list[dict[str, Any]]:
    objects = KustomizeTree.load(K8S).resource_objects()
    return [
        o
        for o in objects
        if o["kind"] in ("Deployment", "StatefulSet")
        and o["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/name") == "riverbeam"
    ]


def test_kustomization_names_every_file() -> None:
    kustomization = yaml.safe_load((MONITORING / "kustomization.yaml").read_text())
    named = set(kustomization["resources"]) | {
        f for g in kustomization["configMapGenerator"] for f in g["files"]
    }
    on_disk = {p.name for p in MONITORING.iterdir()} - {"kustomization.yaml"}
    assert named == on_disk


def test_the_service_monitor_scrapes_each_pods_metrics_port() -> None:
    [service] = _docs("metrics-service.yaml")
    [monitor] = _docs("servicemonitor.yaml")
    assert (
        monitor["apiVersion"] == "monitoring.coreos.com/v1" and monitor["kind"] == "ServiceMonitor"
    )
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    [endpoint] = monitor["spec"]["endpoints"]
    [port] = service["spec"]["ports"]
    assert endpoint["port"] == port["name"] and endpoint["path"] == "/metrics"
    assert service["spec"]["clusterIP"] == "None"  # every pod an endpoint
    pods = _riverbeam_pods()
    assert {p["metadata"]["name"] for p in pods} == {
        "console",
        "router",
        "runner",
        "sandbox",
        "store",
    }
    for pod in pods:
        pod_labels = pod["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= pod_labels.items(), pod["metadata"]["name"]
        ports = {
            p["name"]: p["containerPort"]
            for c in pod["spec"]["template"]["spec"]["containers"]
            for p in c["ports"]
        }
        assert ports[port["targetPort"]] == port["port"]


def _exprs(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


def test_the_dashboard_is_well_formed() -> None:
    dashboard = json.loads((MONITORING / "riverbeam-dashboard.json").read_text())
    assert dashboard["uid"] and dashboard["title"] and isinstance(dashboard["schemaVersion"], int)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]) and panel["gridPos"]["w"] <= 24
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs))
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    for expr in _exprs(dashboard):
        for used in re.findall(r"\$(\w+)", expr):
            assert used in variables or used.startswith("__"), used


def test_the_dashboard_queries_only_metrics_the_code_defines() -> None:
    dashboard = json.loads((MONITORING / "riverbeam-dashboard.json").read_text())
    known = defined()
    histograms = {n for n, (kind, _) in known.items() if kind == "histogram"}
    used: set[str] = set()
    for expr in _exprs(dashboard):
        for name in re.findall(r"\briverbeam_[a-z_]+", expr):
            base = next((name.removesuffix(s) for s in _SUFFIXES if name.endswith(s)), name)
            if base != name:
                assert base in histograms, name
            else:
                assert name in known, name
            used.add(base)
            labels = set(re.findall(r"(\w+)\s*[!=]~?\s*\"", expr)) | {
                lbl
                for group in re.findall(r"by \(([^)]*)\)", expr)
                for lbl in group.replace(" ", "").split(",")
            }
            allowed = set(known[base][1]) | {"le", "component", "job", "instance", "pod"}
            assert labels <= allowed, (expr, labels - allowed)
    # The panels cover what this dashboard was drawn for (a metric added later may wait for one).
    assert {
        "riverbeam_rpc_requests_total",
        "riverbeam_rpc_latency_seconds",
        "riverbeam_rpc_stream_duration_seconds",
        "riverbeam_model_latency_seconds",
        "riverbeam_model_tokens_total",
        "riverbeam_model_cost_total",
    } <= used
