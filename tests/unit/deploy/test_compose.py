"""deploy/compose/docker-compose.yaml runs what the kustomize dev overlay runs, with its settings.

Compared with the files of deploy/k8s (base + dev overlay): the same services, the same
container ports, and every variable a container gets (its `env` and the riverbeam-config
ConfigMap) with the same value, except where a compose host name replaces a cluster one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.unit.deploy.conftest import K8S, REPO, KustomizeTree

COMPOSE = REPO / "deploy" / "compose" / "docker-compose.yaml"
RIVERBEAM = ("router", "runner", "sandbox", "store", "console")
# Cluster DNS in the ConfigMap; a compose service name here.
RENAMED = {"RIVERBEAM_RUNNER_URL": "runner:50052"}
# From Secrets in Kubernetes: present in compose, values are compose's own.
FROM_SECRETS = {"store": {"RIVERBEAM_DATABASE_URL"}, "runner": {"BEAM_API_KEY"}}


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def _dev_objects() -> list[dict[str, Any]]:
    tree = KustomizeTree.load(K8S)
    return list(tree.resource_objects())


def _workloads() -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["name"]: o
        for o in _dev_objects()
        if o["kind"] in ("Deployment", "StatefulSet")
    }


def _config() -> dict[str, str]:
    [config] = [
        o
        for o in _dev_objects()
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "riverbeam-config"
    ]
    return dict(config["data"])


def _container(workload: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = workload["spec"]["template"]["spec"]["containers"][0]
    return container


def _exposed(service: dict[str, Any]) -> set[int]:
    ports = {int(p) for p in service.get("expose", [])}
    for mapping in service.get("ports", []):
        ports.add(int(str(mapping).rsplit(":", 1)[-1]))
    return ports


def test_the_same_services() -> None:
    assert set(_compose()["services"]) == set(_workloads())


def test_the_same_images_commands_and_ports() -> None:
    services = _compose()["services"]
    for name, workload in _workloads().items():
        container = _container(workload)
        service = services[name]
        ports = {p["containerPort"] for p in container.get("ports", [])}
        assert _exposed(service) == ports, name
        if name in RIVERBEAM:
            assert service["entrypoint"] == container["command"], name
            assert service["command"] == container["args"], name
            assert service["image"].split(":")[0] == container["image"].split(":")[0] == "riverbeam"
        else:
            assert service["image"] == container["image"], name


def test_the_same_settings() -> None:
    services = _compose()["services"]
    config = _config()
    for name in RIVERBEAM:
        container = _container(_workloads()[name])
        env = {str(k): str(v) for k, v in services[name]["environment"].items()}
        expected = dict(config)
        for var in container.get("env", []):
            if "value" in var:
                expected[var["name"]] = str(var["value"])
        secret = FROM_SECRETS.get(name, set())
        assert set(env) == set(expected) | secret, name
        for key, value in expected.items():
            assert env[key] == RENAMED.get(key, value), (name, key)
        for key in secret:
            assert env[key] is not None


def test_postgres_and_nats_match_the_overlay() -> None:
    services = _compose()["services"]
    postgres = {v["name"]: v.get("value") for v in _container(_workloads()["postgres"])["env"]}
    env = services["postgres"]["environment"]
    for key, value in postgres.items():
        if value is not None:
            assert env[key] == value, key
    # The password is the dev overlay's generated Secret; the store's URL uses the same one.
    kustomization = yaml.safe_load((K8S / "overlays" / "dev" / "kustomization.yaml").read_text())
    literals = {g["name"]: g.get("literals", []) for g in kustomization["secretGenerator"]}
    assert f"password={env['POSTGRES_PASSWORD']}" in literals["postgres"]
    url = services["store"]["environment"]["RIVERBEAM_DATABASE_URL"]
    assert f"url={url}" in literals["riverbeam-database"]
    assert "--jetstream" in services["nats"]["command"]


def test_the_router_mounts_the_dev_tokens_and_the_model_list() -> None:
    router = _compose()["services"]["router"]
    mounts = {m.split(":")[1]: m.split(":")[0] for m in router["volumes"]}
    tokens = (COMPOSE.parent / mounts["/etc/riverbeam/tokens/tokens.yaml"]).resolve()
    assert tokens == (K8S / "overlays" / "dev" / "secrets" / "tokens.yaml").resolve()
    models = COMPOSE.parent / mounts["/etc/riverbeam/models/models.yaml"]
    [configmap] = [
        o
        for o in _dev_objects()
        if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "riverbeam-models"
    ]
    assert yaml.safe_load(models.read_text()) == yaml.safe_load(configmap["data"]["models.yaml"])


def test_only_the_router_grpc_port_is_published_beyond_localhost() -> None:
    for name, service in _compose()["services"].items():
        for mapping in service.get("ports", []):
            text = str(mapping)
            if not text.startswith("127.0.0.1:"):
                assert (name, text) == ("router", "50051:50051")


def test_compose_file_exists_where_the_docs_say(tmp_path: Path) -> None:
    assert "deploy/compose/docker-compose.yaml" in (REPO / "docs" / "deploy.md").read_text()
