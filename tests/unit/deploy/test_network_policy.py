"""The NetworkPolicies let through exactly Riverbeam's service graph, and nothing from outside
but calls to the router.

A small evaluator applies the policies of each view of the manifests (see conftest.py) the way
the NetworkPolicy API defines them: a pod selected by no policy of a direction is open in that
direction; otherwise traffic passes if a rule of a selecting policy allows the port and the peer.
ipBlock peers match addresses outside the cluster only, as the API recommends using them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conftest import Manifests

Obj = dict[str, Any]
PORTS = {"router": 50051, "runner": 50052, "sandbox": 50053, "store": 50054}
METRICS_PORT = 9090


@dataclass(frozen=True)
class Endpoint:
    """A pod (its namespace and labels), or with no namespace an address outside the cluster."""

    namespace: str | None
    labels: Mapping[str, str] = field(default_factory=dict)
    ip: str | None = None


def _peer_matches(
    manifests: Manifests, peer: Obj, endpoint: Endpoint, policy_namespace: str
) -> bool:
    if "ipBlock" in peer:
        # ipBlock is meant for addresses outside the cluster; pods never match it here.
        if endpoint.ip is None:
            return False
        address = ipaddress.ip_address(endpoint.ip)
        block = peer["ipBlock"]
        if address not in ipaddress.ip_network(block["cidr"]):
            return False
        return not any(address in ipaddress.ip_network(e) for e in block.get("except", []))
    if endpoint.namespace is None:
        return False
    if "namespaceSelector" in peer:
        namespace_labels = {"kubernetes.io/metadata.name": endpoint.namespace}
        if not manifests.selects(peer["namespaceSelector"], namespace_labels):
            return False
    elif endpoint.namespace != policy_namespace:
        return False
    return manifests.selects(peer.get("podSelector"), endpoint.labels)


def _port_matches(rule: Obj, port: int, protocol: str) -> bool:
    if not rule.get("ports"):
        return True
    for entry in rule["ports"]:
        if entry.get("protocol", "TCP") != protocol:
            continue
        if "port" not in entry:
            return True
        assert isinstance(entry["port"], int), "policies here use port numbers, not names"
        if entry["port"] <= port <= entry.get("endPort", entry["port"]):
            return True
    return False


def _direction_allows(
    manifests: Manifests, direction: str, local: Endpoint, remote: Endpoint, port: int, proto: str
) -> bool:
    """Whether the policies selecting ``local`` let traffic to/from ``remote`` through."""
    if local.namespace != manifests.namespace:
        return True  # another namespace: not governed by these policies
    key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    selecting = []
    for policy in manifests.of_kind("NetworkPolicy"):
        namespace = policy["metadata"].get("namespace", manifests.namespace)
        types = policy["spec"].get("policyTypes") or (
            ["Ingress", "Egress"] if "egress" in policy["spec"] else ["Ingress"]
        )
        if (
            namespace == local.namespace
            and direction in types
            and manifests.selects(policy["spec"]["podSelector"], local.labels)
        ):
            selecting.append((namespace, policy))
    if not selecting:
        return True
    return any(
        _port_matches(rule, port, proto)
        and (
            not rule.get(peers_key)
            or any(_peer_matches(manifests, peer, remote, namespace) for peer in rule[peers_key])
        )
        for namespace, policy in selecting
        for rule in policy["spec"].get(key) or []
    )


def _allowed(manifests: Manifests, src: Endpoint, dst: Endpoint, port: int, proto: str) -> bool:
    return _direction_allows(manifests, "Egress", src, dst, port, proto) and _direction_allows(
        manifests, "Ingress", dst, src, port, proto
    )


def _endpoints(manifests: Manifests) -> dict[str, Endpoint]:
    endpoints = {
        "internet": Endpoint(None, ip="192.0.2.10"),
        "private-address": Endpoint(None, ip="10.1.2.3"),
        "other-namespace": Endpoint("elsewhere", {"app": "client"}),
        "monitoring": Endpoint("monitoring", {"app": "prometheus"}),
        "dns": Endpoint("kube-system", {"k8s-app": "kube-dns"}),
        # Production runs NATS from its Helm chart in its own namespace.
        "nats": Endpoint("nats", {"app.kubernetes.io/name": "nats"}),
    }
    for workload in manifests.workloads():
        labels = manifests.pod_labels(workload)
        name = labels.get("app.kubernetes.io/component") if labels.get(
            "app.kubernetes.io/name"
        ) == "riverbeam" else labels["app.kubernetes.io/name"]  # fmt: skip
        endpoints[name] = Endpoint(manifests.namespace, labels)
    return endpoints


_SERVICES = tuple(PORTS)
# (from, to, port, protocol, allowed)
_REACHABILITY: list[tuple[str, str, int, str, bool]] = [
    ("internet", "router", 50051, "TCP", True),
    ("other-namespace", "router", 50051, "TCP", True),
    ("router", "runner", 50052, "TCP", True),
    ("router", "store", 50054, "TCP", True),
    ("router", "nats", 4222, "TCP", True),
    ("runner", "store", 50054, "TCP", True),
    ("runner", "sandbox", 50053, "TCP", True),
    ("runner", "nats", 4222, "TCP", True),
    ("runner", "internet", 443, "TCP", True),
    ("store", "postgres", 5432, "TCP", True),
    # the console: a front door that reaches only the router and NATS
    ("internet", "console", 8080, "TCP", True),
    ("other-namespace", "console", 8080, "TCP", True),
    ("console", "router", 50051, "TCP", True),
    ("console", "nats", 4222, "TCP", True),
    ("monitoring", "console", METRICS_PORT, "TCP", True),
    ("console", "dns", 53, "UDP", True),
    ("internet", "console", METRICS_PORT, "TCP", False),
    ("other-namespace", "console", METRICS_PORT, "TCP", False),
    *[("console", target, port, "TCP", False) for target, port in (
        ("runner", 50052), ("store", 50054), ("sandbox", 50053), ("postgres", 5432),
        ("internet", 443), ("internet", 80), ("private-address", 443),
    )],
    *[(s, "console", 8080, "TCP", False) for s in ("runner", "sandbox", "store")],
    *[("monitoring", s, METRICS_PORT, "TCP", True) for s in _SERVICES],
    *[(s, "dns", 53, "UDP", True) for s in _SERVICES],
    # nothing but the router is reachable from outside the namespace
    *[(caller, s, PORTS[s], "TCP", False)
      for caller in ("internet", "other-namespace") for s in _SERVICES if s != "router"],
    *[(caller, target, port, "TCP", False)
      for caller in ("internet", "other-namespace")
      for target, port in (("nats", 4222), ("postgres", 5432))],
    *[("other-namespace", s, METRICS_PORT, "TCP", False) for s in _SERVICES],
    # each service reaches only what it needs
    ("router", "sandbox", 50053, "TCP", False),
    ("router", "internet", 443, "TCP", False),
    ("router", "postgres", 5432, "TCP", False),
    ("runner", "postgres", 5432, "TCP", False),
    ("runner", "private-address", 443, "TCP", False),
    ("runner", "internet", 80, "TCP", False),
    ("store", "runner", 50052, "TCP", False),
    ("store", "sandbox", 50053, "TCP", False),
    ("store", "nats", 4222, "TCP", False),
    ("store", "internet", 443, "TCP", False),
    *[("sandbox", target, port, "TCP", False) for target, port in (
        ("router", 50051), ("runner", 50052), ("store", 50054), ("nats", 4222),
        ("postgres", 5432), ("internet", 443), ("internet", 22), ("private-address", 443),
    )],
]  # fmt: skip


def test_default_deny_closes_both_directions(manifests: Manifests) -> None:
    default_deny = [
        p
        for p in manifests.of_kind("NetworkPolicy")
        if p["spec"]["podSelector"] == {}
        and {"Ingress", "Egress"} <= set(p["spec"].get("policyTypes", []))
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    assert default_deny, "no default-deny NetworkPolicy selecting every pod"


def test_network_policies_allow_exactly_the_service_graph(manifests: Manifests) -> None:
    endpoints = _endpoints(manifests)
    wrong = []
    for source, target, port, proto, expected in _REACHABILITY:
        if source not in endpoints or target not in endpoints:
            continue  # e.g. postgres outside the dev overlay
        src, dst = endpoints[source], endpoints[target]
        if manifests.namespace not in (src.namespace, dst.namespace):
            continue  # e.g. the internet to NATS in its own namespace: not ours to decide
        if _allowed(manifests, src, dst, port, proto) != expected:
            wrong.append(
                f"{source} -> {target}:{port}/{proto} should be {'open' if expected else 'closed'}"
            )
    assert not wrong, "\n".join(wrong)


def test_sandbox_reaches_only_dns_and_listed_addresses(manifests: Manifests) -> None:
    """Its only egress besides DNS is to ipBlocks an overlay lists: the git origin."""
    sandbox = _endpoints(manifests)["sandbox"]
    for policy in manifests.of_kind("NetworkPolicy"):
        if not manifests.selects(policy["spec"]["podSelector"], sandbox.labels):
            continue
        for rule in policy["spec"].get("egress") or []:
            peers = rule.get("to")
            assert peers, f"{policy['metadata']['name']}: a sandbox egress rule with no `to`"
            if {p.get("port") for p in rule.get("ports", [])} == {53}:
                continue  # DNS
            for peer in peers:
                assert set(peer) == {"ipBlock"}, f"sandbox egress to {peer}"
                assert ipaddress.ip_network(peer["ipBlock"]["cidr"]).prefixlen > 0, peer
