"""The Kubernetes manifests under deploy/k8s keep the invariants the services rely on.

Every check runs on each view of the manifests (the raw files, and each directory rendered by
kustomize when a binary is available; see conftest.py). Every object is validated against the
Kubernetes OpenAPI schemas that kubernetes-validate ships, offline and in strict mode, so a
misspelt field fails here rather than at ``kubectl apply``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kubernetes_validate
import yaml

from riverbeam.auth import TokenAuthenticator
from riverbeam.core.settings import (
    CommonSettings,
    ConsoleSettings,
    RouterSettings,
    RunnerSettings,
    SandboxSettings,
    StoreSettings,
)
from riverbeam.routing import ModelList

if TYPE_CHECKING:
    from conftest import KustomizeTree, Manifests

# The oldest Kubernetes minor we support; kubernetes-validate ships its schemas.
KUBERNETES_VERSION = "1.30"

# component -> (gRPC port, the full name its health service reports)
COMPONENTS: dict[str, tuple[int, str]] = {
    "router": (50051, "riverbeam.v1.RiverbeamService"),
    "runner": (50052, "riverbeam.v1.RunnerService"),
    "sandbox": (50053, "riverbeam.v1.SandboxService"),
    "store": (50054, "riverbeam.v1.StoreService"),
}
# component -> (HTTP port, readiness path, liveness path): the console speaks HTTP, not gRPC.
HTTP_COMPONENTS: dict[str, tuple[int, str, str]] = {"console": (8080, "/readyz", "/healthz")}
SETTINGS: dict[str, type[CommonSettings]] = {
    "console": ConsoleSettings,
    "router": RouterSettings,
    "runner": RunnerSettings,
    "sandbox": SandboxSettings,
    "store": StoreSettings,
}
# Settings whose defaults (localhost addresses, no database, ...) are wrong in a cluster.
REQUIRED_SETTINGS = {
    "router": {"RIVERBEAM_LISTEN", "RIVERBEAM_RUNNER_URL", "RIVERBEAM_STORE_URL",
               "RIVERBEAM_NATS_URL", "RIVERBEAM_TOKENS_FILE", "RIVERBEAM_MODELS_FILE"},
    "runner": {"RIVERBEAM_LISTEN", "RIVERBEAM_STORE_URL", "RIVERBEAM_SANDBOX_URL",
               "RIVERBEAM_NATS_URL", "BEAM_API_KEY"},
    "sandbox": {"RIVERBEAM_LISTEN", "RIVERBEAM_WORKSPACE_BASE"},
    "store": {"RIVERBEAM_LISTEN", "RIVERBEAM_DATABASE_URL"},
    "console": {"RIVERBEAM_LISTEN", "RIVERBEAM_ROUTER_URL"},
}  # fmt: skip
AUTOSCALED = ("router", "runner")
METRICS_PORT = 9090
DEFAULT_SHUTDOWN_GRACE_S = 30
# Secrets the manifests reference and an operator creates; an overlay may generate some of them.
EXTERNAL_SECRETS = frozenset({"riverbeam-tokens", "riverbeam-model", "riverbeam-database"})
# Volume types the "restricted" Pod Security Standard allows.
RESTRICTED_VOLUME_TYPES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
     "projected", "secret"}
)  # fmt: skip

Obj = dict[str, Any]


def _image_repository(image: str) -> str:
    """``registry/path/name:tag@sha256:…`` -> ``registry/path/name``."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    return image[:colon] if colon > slash else image


# --- files and schemas ---------------------------------------------------------------------------


def test_every_yaml_file_is_used_by_a_kustomization(kustomize_tree: KustomizeTree) -> None:
    root = kustomize_tree.root
    for directory, kustomization in kustomize_tree.kustomizations.items():
        for entry in kustomization.get("resources", []):
            path = directory / entry
            assert path.is_file() or (path / "kustomization.yaml").is_file(), f"{path}: missing"
    for path in kustomize_tree.roles:
        assert path.is_file(), f"a kustomization names {path.relative_to(root)}, which is missing"
    orphans = [
        str(path.relative_to(root))
        for path in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")])
        if path.name != "kustomization.yaml" and path.resolve() not in kustomize_tree.roles
    ]
    assert not orphans, f"YAML files no kustomization uses: {orphans}"


def test_objects_match_the_kubernetes_schemas(manifests: Manifests) -> None:
    errors = []
    for obj in manifests.objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{obj['kind']}/{obj['metadata']['name']}: {path}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(e.message)
    assert not errors, "\n".join(errors)


def test_objects_live_in_the_namespace(manifests: Manifests) -> None:
    """Rendered objects all carry it; the raw files leave it to kustomize or name it."""
    stray = [
        f"{o['kind']}/{o['metadata']['name']}"
        for o in manifests.objects
        if o["kind"] != "Namespace"
        and o["metadata"].get("namespace", None if manifests.rendered else manifests.namespace)
        != manifests.namespace
    ]
    assert not stray, f"objects outside the namespace {manifests.namespace}: {stray}"


def test_namespace_enforces_the_restricted_pod_security_standard(manifests: Manifests) -> None:
    namespace = manifests.named("Namespace", manifests.namespace)
    assert namespace is not None
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


# --- workloads -----------------------------------------------------------------------------------


def test_each_service_runs_as_its_own_workload(manifests: Manifests) -> None:
    workloads = manifests.riverbeam_workloads()
    assert set(workloads) == set(COMPONENTS) | set(HTTP_COMPONENTS)
    assert workloads["sandbox"]["kind"] == "StatefulSet"
    # One writer per workspace volume until the runner routes workspaces to shards.
    assert workloads["sandbox"]["spec"]["replicas"] == 1
    assert workloads["sandbox"]["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"] == [
        "ReadWriteOnce"
    ]
    for name in ("router", "runner", "store", "console"):
        assert workloads[name]["kind"] == "Deployment"


def test_containers_run_riverbeam_serve_with_the_riverbeam_image(manifests: Manifests) -> None:
    for component, workload in manifests.riverbeam_workloads().items():
        (container,) = manifests.pod_spec(workload)["containers"]
        image = container["image"]
        assert _image_repository(image).rsplit("/", 1)[-1] == "riverbeam", image
        if manifests.rendered:
            tag = image.split("@", 1)[0][len(_image_repository(image)) + 1 :]
            assert "@sha256:" in image or tag not in ("", "latest"), f"unpinned image {image}"
        assert container["command"] == ["riverbeam"]
        assert container["args"] == ["serve", component]


def test_services_listen_on_their_port_and_probe_grpc_health(manifests: Manifests) -> None:
    for component, workload in manifests.riverbeam_workloads().items():
        if component in HTTP_COMPONENTS:
            continue  # test_http_services_probe_their_health_endpoints
        port, health_name = COMPONENTS[component]
        (container,) = manifests.pod_spec(workload)["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"grpc": port, "metrics": METRICS_PORT}
        env = manifests.env(container)
        assert env["RIVERBEAM_LISTEN"].rsplit(":", 1)[-1] == str(port)
        assert env["RIVERBEAM_METRICS_PORT"] == str(METRICS_PORT)

        readiness = container["readinessProbe"]["grpc"]
        assert readiness == {"port": port, "service": health_name}, component
        liveness = container["livenessProbe"]["grpc"]
        assert liveness["port"] == port
        assert liveness.get("service", "") in ("", health_name)


def test_http_services_probe_their_health_endpoints(manifests: Manifests) -> None:
    workloads = manifests.riverbeam_workloads()
    for component, (port, ready, live) in HTTP_COMPONENTS.items():
        (container,) = manifests.pod_spec(workloads[component])["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"http": port, "metrics": METRICS_PORT}
        env = manifests.env(container)
        assert env["RIVERBEAM_LISTEN"].rsplit(":", 1)[-1] == str(port)
        assert container["readinessProbe"]["httpGet"] == {"path": ready, "port": "http"}
        assert container["livenessProbe"]["httpGet"] == {"path": live, "port": "http"}
        service = manifests.named("Service", component)
        assert service is not None
        assert [p["port"] for p in service["spec"]["ports"]] == [port]
    # The console reaches the router through its Service, on its gRPC port.
    (console,) = manifests.pod_spec(workloads["console"])["containers"]
    host, port_text = manifests.env(console)["RIVERBEAM_ROUTER_URL"].rsplit(":", 1)
    router = manifests.named("Service", host)
    assert router is not None and int(port_text) in [p["port"] for p in router["spec"]["ports"]]


def test_every_pod_is_hardened(manifests: Manifests) -> None:
    """Non-root, read-only root, no capabilities, RuntimeDefault seccomp, bounded resources."""
    for workload in manifests.workloads():
        name = f"{workload['kind']}/{workload['metadata']['name']}"
        pod = manifests.pod_spec(workload)
        pod_security = pod.get("securityContext", {})
        assert pod.get("automountServiceAccountToken") is False, name
        assert not any(pod.get(k) for k in ("hostNetwork", "hostPID", "hostIPC")), name
        for volume in pod.get("volumes", []):
            kinds = set(volume) - {"name"}
            assert kinds <= RESTRICTED_VOLUME_TYPES, f"{name}: volume {volume['name']}: {kinds}"

        for container in manifests.containers(workload):
            where = f"{name} container {container['name']}"
            security = {**pod_security, **container.get("securityContext", {})}
            assert security.get("runAsNonRoot") is True, where
            assert security.get("runAsUser", 1) != 0, where
            assert security.get("readOnlyRootFilesystem") is True, where
            assert security.get("allowPrivilegeEscalation") is False, where
            assert security.get("privileged", False) is False, where
            assert security.get("seccompProfile", {}).get("type") == "RuntimeDefault", where
            capabilities = container.get("securityContext", {}).get("capabilities", {})
            assert capabilities.get("drop") == ["ALL"], where
            assert not capabilities.get("add"), where
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(bound, {})), f"{where}: {bound}"
            assert container.get("readinessProbe") and container.get("livenessProbe"), where


def test_each_pod_has_its_own_service_account_without_a_token(manifests: Manifests) -> None:
    accounts = {}
    for workload in manifests.workloads():
        account_name = manifests.pod_spec(workload).get("serviceAccountName")
        assert account_name, f"{workload['metadata']['name']} runs as the default account"
        account = manifests.named("ServiceAccount", account_name)
        assert account is not None, f"ServiceAccount {account_name} is not defined"
        assert account.get("automountServiceAccountToken") is False, account_name
        accounts[account_name] = workload["metadata"]["name"]
    assert len(accounts) == len(manifests.workloads()), "workloads share a ServiceAccount"


def test_the_kill_comes_after_the_drain(manifests: Manifests) -> None:
    """SIGKILL comes only after any preStop pause plus the app's own drain period."""
    for component, workload in manifests.riverbeam_workloads().items():
        (container,) = manifests.pod_spec(workload)["containers"]
        env = manifests.env(container)
        grace = int(env.get("RIVERBEAM_SHUTDOWN_GRACE_S", DEFAULT_SHUTDOWN_GRACE_S))
        pre_stop = container.get("lifecycle", {}).get("preStop", {})
        # The image has no shell: a pause before SIGTERM can only be the native sleep action.
        assert set(pre_stop) <= {"sleep"}, f"{component}: preStop {pre_stop}"
        pause = pre_stop.get("sleep", {}).get("seconds", 0)
        assert manifests.pod_spec(workload)["terminationGracePeriodSeconds"] > pause + grace, (
            component
        )


def test_each_service_gets_the_settings_it_reads(manifests: Manifests) -> None:
    """Every RIVERBEAM_* variable names a setting (no typo goes unnoticed: pydantic-settings
    ignores unknown variables), and each service gets the settings it cannot run without."""
    known = {
        component: {f"RIVERBEAM_{name.upper()}" for name in cls.model_fields}
        for component, cls in SETTINGS.items()
    }
    config = manifests.named("ConfigMap", "riverbeam-config")
    assert config is not None
    for key in config["data"]:
        if key.startswith("RIVERBEAM_"):
            assert any(key in names for names in known.values()), f"riverbeam-config: {key}"

    for component, workload in manifests.riverbeam_workloads().items():
        (container,) = manifests.pod_spec(workload)["containers"]
        own = {e["name"] for e in container.get("env", [])}
        for key in own:
            if key.startswith("RIVERBEAM_"):
                assert key in known[component], f"{component}: {key} is no setting of it"
        provided = own | set(manifests.env(container))
        missing = REQUIRED_SETTINGS[component] - provided
        assert not missing, f"{component} lacks {sorted(missing)}"


def test_router_reads_a_valid_model_list(manifests: Manifests) -> None:
    config = manifests.named("ConfigMap", "riverbeam-models")
    assert config is not None
    models = ModelList.from_data(yaml.safe_load(config["data"]["models.yaml"]), source="models")
    assert len(models) >= 1

    pod = manifests.pod_spec(manifests.riverbeam_workloads()["router"])
    (container,) = pod["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["models"]["configMap"]["name"] == "riverbeam-models"
    models_file = Path(manifests.env(container)["RIVERBEAM_MODELS_FILE"])
    assert Path(mounts["models"]) / "models.yaml" == models_file


def test_dev_tokens_file_holds_digests_the_router_accepts(kustomize_tree: KustomizeTree) -> None:
    (dev_tokens,) = [p for p, role in kustomize_tree.roles.items() if role == "generator input"]
    (document,) = kustomize_tree.documents(dev_tokens)
    assert len(TokenAuthenticator.from_data(document, source=str(dev_tokens))) >= 1
    # Digests only, even for a throwaway token: the file shows the format to copy.
    assert all("token" not in entry for entry in document["tokens"])


# --- services, disruption budgets, autoscalers ---------------------------------------------------


def test_services_reach_their_pods(manifests: Manifests) -> None:
    workloads = manifests.workloads()
    for service in manifests.of_kind("Service"):
        name = service["metadata"]["name"]
        selected = [w for w in workloads if manifests.selects(
            {"matchLabels": service["spec"]["selector"]}, manifests.pod_labels(w)
        )]  # fmt: skip
        assert len(selected) == 1, f"Service {name} selects {len(selected)} workloads"
        container_ports = {
            p.get("name"): p["containerPort"]
            for c in manifests.pod_spec(selected[0])["containers"]
            for p in c.get("ports", [])
        }
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            assert target in container_ports or target in container_ports.values(), (name, target)

    for component, (port, _) in COMPONENTS.items():
        service = manifests.named("Service", component)
        assert service is not None, component
        assert [p["port"] for p in service["spec"]["ports"]] == [port]


def test_only_the_router_service_could_be_exposed(manifests: Manifests) -> None:
    """The router and the console are the front doors; only they may become more than ClusterIP."""
    for service in manifests.of_kind("Service"):
        if service["metadata"]["name"] not in ("router", "console"):
            assert service["spec"].get("type", "ClusterIP") == "ClusterIP", service["metadata"]
    assert not manifests.of_kind("Ingress"), "expose the router with an overlay, not in the base"


def test_router_balances_over_a_headless_runner_service(manifests: Manifests) -> None:
    runner = manifests.named("Service", "runner")
    assert runner is not None
    assert runner["spec"]["clusterIP"] == "None"
    config = manifests.named("ConfigMap", "riverbeam-config")
    assert config is not None
    assert config["data"]["RIVERBEAM_RUNNER_URL"] == (
        f"dns:///runner.{manifests.namespace}.svc.cluster.local:{COMPONENTS['runner'][0]}"
    )


def test_every_runner_the_autoscaler_may_add_gets_an_invoke_lane(manifests: Manifests) -> None:
    """Each invoke lane is a stream to one runner pod: fewer lanes than pods leaves pods idle."""
    config = manifests.named("ConfigMap", "riverbeam-config")
    assert config is not None
    runner = next(
        h
        for h in manifests.of_kind("HorizontalPodAutoscaler")
        if h["spec"]["scaleTargetRef"]["name"] == "runner"
    )
    lanes = int(config["data"]["RIVERBEAM_RUNNER_INVOKE_LANES"])
    assert lanes >= runner["spec"]["maxReplicas"]


def test_service_urls_name_services_and_their_ports(manifests: Manifests) -> None:
    config = manifests.named("ConfigMap", "riverbeam-config")
    assert config is not None
    for key in ("RIVERBEAM_STORE_URL", "RIVERBEAM_SANDBOX_URL", "RIVERBEAM_RUNNER_URL"):
        address = config["data"][key].removeprefix("dns:///")
        host, port = address.rsplit(":", 1)
        service = manifests.named("Service", host.split(".", 1)[0])
        assert service is not None, f"{key}: no Service {host}"
        assert int(port) in [p["port"] for p in service["spec"]["ports"]], key


def test_every_service_has_a_disruption_budget(manifests: Manifests) -> None:
    budgets = manifests.of_kind("PodDisruptionBudget")
    for component, workload in manifests.riverbeam_workloads().items():
        labels = manifests.pod_labels(workload)
        matching = [b for b in budgets if manifests.selects(b["spec"]["selector"], labels)]
        assert len(matching) == 1, f"{component}: {len(matching)} PodDisruptionBudgets"
        (budget,) = matching
        # minAvailable on a single replica would block node drains for good.
        replicas = workload["spec"].get("replicas")
        if "minAvailable" in budget["spec"] and replicas is not None:
            assert budget["spec"]["minAvailable"] < replicas, component


def test_router_and_runner_autoscale(manifests: Manifests) -> None:
    autoscalers = {h["spec"]["scaleTargetRef"]["name"]: h for h in manifests.of_kind(
        "HorizontalPodAutoscaler"
    )}  # fmt: skip
    assert set(autoscalers) == set(AUTOSCALED)
    workloads = manifests.riverbeam_workloads()
    for component in AUTOSCALED:
        autoscaler = autoscalers[component]
        assert autoscaler["apiVersion"] == "autoscaling/v2"
        assert autoscaler["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        assert 1 <= autoscaler["spec"]["minReplicas"] <= autoscaler["spec"]["maxReplicas"]
        # A replicas field would fight the autoscaler on every apply.
        assert "replicas" not in workloads[component]["spec"], component


# --- configuration and secrets -------------------------------------------------------------------


def _references(
    manifests: Manifests, workload: Obj, kind: str
) -> Iterator[tuple[str, str | None, bool]]:
    """(name, key or None, optional) of every ConfigMap or Secret a pod spec uses."""
    ref_key, volume_key, name_key = {
        "ConfigMap": ("configMapKeyRef", "configMap", "name"),
        "Secret": ("secretKeyRef", "secret", "secretName"),
    }[kind]
    env_from_key = "configMapRef" if kind == "ConfigMap" else "secretRef"
    for container in manifests.containers(workload):
        for source in container.get("envFrom", []):
            if ref := source.get(env_from_key):
                yield ref["name"], None, ref.get("optional", False)
        for env in container.get("env", []):
            if ref := env.get("valueFrom", {}).get(ref_key):
                yield ref["name"], ref["key"], ref.get("optional", False)
    for volume in manifests.pod_spec(workload).get("volumes", []):
        if source := volume.get(volume_key):
            keys = [item["key"] for item in source.get("items", [])] or [None]
            for key in keys:
                yield source[name_key], key, source.get("optional", False)


def test_config_maps_referenced_exist_with_their_keys(manifests: Manifests) -> None:
    for workload in manifests.workloads():
        for name, key, _ in _references(manifests, workload, "ConfigMap"):
            config = manifests.named("ConfigMap", name)
            assert config is not None, f"{workload['metadata']['name']}: no ConfigMap {name}"
            assert key is None or key in config.get("data", {}), f"{name} has no key {key}"


def test_secrets_are_referenced_not_committed(manifests: Manifests) -> None:
    secrets = {s["metadata"]["name"]: s for s in manifests.of_kind("Secret")}
    # Only the dev overlay generates Secrets (from throwaway values); nothing else holds one.
    without_generators = manifests.view != "overlays/dev"
    if without_generators:
        assert not secrets, f"Secret objects in {manifests.view}: {sorted(secrets)}"
    # A reference left unresolved must name a Secret the operator creates, and not one this view
    # generates (that would mean kustomize failed to rewrite the reference to the hashed name).
    if manifests.rendered:
        created_outside = EXTERNAL_SECRETS - manifests.generated_secrets
    else:
        created_outside = EXTERNAL_SECRETS | manifests.generated_secrets

    referenced = set()
    for workload in manifests.workloads():
        for name, key, optional in _references(manifests, workload, "Secret"):
            referenced.add(name)
            if name in secrets:
                assert key is None or key in secrets[name].get("data", {}), (name, key)
            else:
                assert optional or name in created_outside, (
                    f"{workload['metadata']['name']}: Secret {name}"
                )
    if without_generators:
        assert EXTERNAL_SECRETS <= referenced


def test_no_secret_is_written_in_the_repository(kustomize_tree: KustomizeTree) -> None:
    dev = kustomize_tree.root / "overlays" / "dev"
    for path, role in kustomize_tree.roles.items():
        if role == "generator input":
            assert path.is_relative_to(dev), f"{path}: only the dev overlay generates Secrets"
            continue
        for doc in kustomize_tree.documents(path):
            assert not isinstance(doc, dict) or doc.get("kind") != "Secret", f"{path}: a Secret"
    for directory, kustomization in kustomize_tree.kustomizations.items():
        if kustomization.get("secretGenerator"):
            assert directory == dev, f"{directory} generates Secrets"
