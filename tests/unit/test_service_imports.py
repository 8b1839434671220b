"""What each service process loads before it serves anything (issue 16: idle RSS).

Each probe runs in a fresh interpreter, the way `riverbeam serve <service>` starts: the serve
module, the service's settings and its app module; the store and the sandbox also enter their
build (the ServiceApp a server would serve), the runner wires its agents. The probe reports
sys.modules, and each service must not have loaded the libraries it only needs on a later
call: no memory thresholds, the modules themselves are counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = textwrap.dedent(
    """
    import asyncio, json, sys
    from services.cli._serve import ServiceName, builder_for, settings_for

    name = ServiceName(sys.argv[1])
    overrides = json.loads(sys.argv[2])
    settings = settings_for(name, "127.0.0.1:0", overrides)
    build = builder_for(name, settings)

    async def enter() -> None:
        async with build():
            pass

    async def wire() -> None:
        from riverbeam.runtime import MemorySinks, RiverBeam, wire_agents
        from riverbeam.store import StoreClient

        # A store service, as `riverbeam up` gives the runner (the channel connects on a call).
        store = StoreClient("127.0.0.1:1")
        beam = RiverBeam(store=store, sinks=MemorySinks())
        for close in await wire_agents(beam, settings, env={}):
            await close()
        await store.aclose()

    if name.value in ("store", "sandbox"):
        asyncio.run(enter())
    elif name.value == "runner":
        asyncio.run(wire())
    print(json.dumps(sorted(sys.modules)))
    """
)

# Loaded by no service at start-up: tracing is off, nobody has asked for reflection yet.
_NOWHERE = (
    "opentelemetry.sdk",
    "grpc_reflection.v1alpha._base",
    "google.protobuf.descriptor_pb2",
    "typer",
    "rich",
    "httpx",  # with the first model request
    "yaml",  # with the first file read
)

_NOT_LOADED: dict[str, tuple[str, ...]] = {
    "store": (
        *_NOWHERE,
        "jsonschema",
        "pygit2",
        "nats",
        "asyncpg",  # a store in memory
        "riverbeam.agents",
        "riverbeam.runtime",
        "riverbeam.sandbox",
    ),
    "sandbox": (
        *_NOWHERE,
        "jsonschema",
        "pygit2",  # until the first workspace call
        "riverbeam.sandbox._gitdir",
        "riverbeam.sandbox._tree",
        "riverbeam.sandbox._preview",
        "nats",
        "riverbeam.agents",
        "riverbeam.store",
    ),
    "router": (
        *_NOWHERE,
        "jsonschema",  # with the first request that has a response schema
        "pygit2",
        "riverbeam.sandbox",
        "riverbeam.agents",  # with the first request that has a response schema
        "riverbeam.runtime._pipeline",
        "riverbeam.runtime._checkpointing",
        "riverbeam.agents._guardrails",
        "riverbeam.agents._registry",
    ),
    "runner": (
        *_NOWHERE,
        "jsonschema",  # with its first tool call: its sandbox tools' schemas are our own
        "pygit2",  # the runner's sandbox tools call the sandbox service
        "riverbeam.sandbox._gitdir",
        "riverbeam.sandbox._tree",
        "riverbeam.agents._config",  # riverbeam.yaml's machinery: no RIVERBEAM_CONFIG here
        "riverbeam.agents._mcp",
        "riverbeam.runtime._config_agents",
        "riverbeam.store._memory",  # its store is the store service
    ),
}


def _loaded(service: str, overrides: dict[str, object]) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RIVERBEAM_", "OTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "libs"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, service, json.dumps(overrides)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return set(modules)


@pytest.mark.parametrize("service", sorted(_NOT_LOADED))
def test_a_service_starts_without_what_it_uses_later(service: str, tmp_path: Path) -> None:
    overrides: dict[str, object] = {}
    if service == "sandbox":
        overrides = {"workspace_base": str(tmp_path / "workspaces")}
    loaded = _loaded(service, overrides)
    assert f"services.{service}.app" in loaded  # the probe did load the service
    unwanted = sorted(
        name
        for name in loaded
        for banned in _NOT_LOADED[service]
        if name == banned or name.startswith(banned + ".")
    )
    assert unwanted == []
