"""Ports and addresses of the local stack: free-port checks, ready files, runner targets."""

from __future__ import annotations

import ipaddress
import json
import socket
from pathlib import Path

__all__ = ["free_port", "is_address", "nats_urls", "port_free", "runner_target", "url_host"]


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now.

    SO_REUSEADDR as the servers set it (gRPC, http.server): a TIME_WAIT connection left by an
    earlier run does not hold the port, a listening socket does.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str) -> int:
    """A port on `host` that is free now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def url_host(host: str) -> str:
    """`host` as it goes into a URL: a wildcard as loopback, IPv6 in brackets."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def is_address(text: str) -> bool:
    """A complete `host:port` (a ready file read while being written is not one)."""
    host, _, port = text.rpartition(":")
    return bool(host) and port.isdigit() and 0 < int(port) <= 65535


def runner_target(addresses: list[str]) -> str:
    """The router's runner target: the one address, or every replica as an `ipv4:` list."""
    if len(addresses) == 1:
        return addresses[0]
    hosts = []
    for address in addresses:
        host, _, port = address.rpartition(":")
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return addresses[0]  # names or IPv6: no address-list target; use the first replica
        hosts.append(f"{host}:{port}")
    return "ipv4:" + ",".join(hosts)


def nats_urls(path: Path) -> list[str]:
    """The client URLs in a nats-server ports file ([] until it is written completely)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []  # not written completely yet
    urls = data.get("nats") if isinstance(data, dict) else None
    return [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else []
