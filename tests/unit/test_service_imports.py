"""What each service process loads before it serves anything (issue 16: idle RSS).

Each probe runs in a fresh interpreter and starts the way `riverbeam serve <service>` does
(the container image's entry point): the console script, with `serve` swapped for the probe,
which loads the service's settings and its app module; the store and the sandbox also enter
their build (the ServiceApp a server would serve), the runner wires its agents. The probe
reports sys.modules, and each service must not have loaded the libraries it only needs on a
later call: no memory thresholds, the modules themselves are counted. It also reports which
of our pydantic models have been built (a schema and validator each): none is built before
a call that validates or dumps one.
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
    import services.cli._serve as serving
    from services.cli import main

    service, overrides, import_only = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "import"
    started = []

    def probe_serve(name, listen, ready_file, _overrides):
        started.append((name, listen))

    serving.serve = probe_serve
    sys.argv = ["riverbeam", "serve", service, "--listen", "127.0.0.1:0"]
    main()
    assert started == [(serving.ServiceName(service), "127.0.0.1:0")], started
    name = started[0][0]
    settings = serving.settings_for(name, "127.0.0.1:0", overrides)
    build = serving.builder_for(name, settings)

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

    if import_only:
        pass
    elif name.value in ("store", "sandbox"):
        asyncio.run(enter())
    elif name.value == "runner":
        asyncio.run(wire())

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    from pydantic import BaseModel

    built = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in set(subclasses(BaseModel))
        if cls.__module__.startswith("riverbeam.") and cls.__dict__.get("__pydantic_complete__")
    )
    print(json.dumps({"modules": sorted(sys.modules), "built": built}))
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
    "aiohttp",  # nats-py's, for ws:// URLs only: the entry point hides it (where installed)
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
        "riverbeam.stream",  # the store speaks no NATS
        "riverbeam.auth",
        "riverbeam.gateway",
        "riverbeam.routing",
        "riverbeam.telemetry._genai",  # the agent spans are the runner's
        "google.protobuf.json_format",  # with the first Struct field or reference conversion
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
        "riverbeam.types",  # the sandbox's messages are its own protobuf ones
        "riverbeam.stream",
        "riverbeam.auth",
        "riverbeam.telemetry._genai",
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
        "riverbeam.auth._tokens",  # auth mode dev: no tokens file to read
        "riverbeam.stream._memory",  # its frames come from JetStream
        "riverbeam.stream._publisher",  # the runner publishes them
        "riverbeam.runtime._jetstream",
        "riverbeam.telemetry._genai",
    ),
    "runner": (
        *_NOWHERE,
        "jsonschema",  # with its first tool call: its sandbox tools' schemas are our own
        "pygit2",  # the runner's sandbox tools call the sandbox service
        "riverbeam.sandbox._gitdir",
        "riverbeam.sandbox._tree",
        "riverbeam.sandbox._workspaces",  # the workspace manager is the sandbox service's
        "riverbeam.sandbox._root",
        "riverbeam.sandbox._settings",
        "riverbeam.agents._config",  # riverbeam.yaml's machinery: no RIVERBEAM_CONFIG here
        "riverbeam.agents._mcp",
        "riverbeam.runtime._config_agents",
        "riverbeam.store._memory",  # its store is the store service
        "riverbeam.agents._openai",  # no BEAM_API_KEY: the built-in agents use EchoClient
        # The built-in skill agents are tool-loop agents: the loop, and with it the agent
        # layer's modules and routing's model list, comes with the first run of one.
        "riverbeam.agents._run",
        "riverbeam.agents._chat",
        "riverbeam.agents._compaction",
        "riverbeam.agents._guardrails",
        "riverbeam.agents._handoff",
        "riverbeam.agents._layer_config",
        "riverbeam.agents._output",
        "riverbeam.agents._policies",
        "riverbeam.routing",
        # Their token counters (a vocabulary where one is installed) come with a first run too.
        "riverbeam.agents._tokens",
        "riverbeam.agents._vocab_tokens",
    ),
}

# Importing each app (as `riverbeam serve` does before building it) loads no store
# implementation: build picks the in-memory or the PostgreSQL one.
_NOT_IMPORTED: dict[str, tuple[str, ...]] = {
    "store": ("riverbeam.store._memory", "riverbeam.store._pg", "asyncpg"),
    "runner": ("riverbeam.store._memory", "riverbeam.store._pg", "asyncpg"),
}

# Models no service builds at start-up unless configured to use them: the agent layer's and
# the tokens file's. (The wire models are built at import: deferring them saved 0.5-0.9 MiB
# that traffic did not bring back, but cost a service's first call ~100 ms.)
_NOT_BUILT = (
    "riverbeam.agents._guardrails.PiiDetector",
    "riverbeam.agents._policies.ApproveTools",
    "riverbeam.agents._layer_config.AgentLayerConfig",
    "riverbeam.auth._tokens._Entry",
)


def _probe(service: str, overrides: dict[str, object], mode: str = "build") -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RIVERBEAM_", "OTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "libs"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, service, json.dumps(overrides), mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _unwanted(loaded: list[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in loaded
        for prefix in banned
        if name == prefix or name.startswith(prefix + ".")
    )


@pytest.mark.parametrize("service", sorted(_NOT_LOADED))
def test_a_service_starts_without_what_it_uses_later(service: str, tmp_path: Path) -> None:
    overrides: dict[str, object] = {}
    if service == "sandbox":
        overrides = {"workspace_base": str(tmp_path / "workspaces")}
    report = _probe(service, overrides)
    assert f"services.{service}.app" in report["modules"]  # the probe did load the service
    assert _unwanted(report["modules"], _NOT_LOADED[service]) == []
    assert sorted(set(report["built"]) & set(_NOT_BUILT)) == []


@pytest.mark.parametrize("service", sorted(_NOT_IMPORTED))
def test_a_service_app_imports_no_store_implementation(service: str) -> None:
    report = _probe(service, {}, mode="import")
    assert f"services.{service}.app" in report["modules"]
    assert _unwanted(report["modules"], _NOT_IMPORTED[service]) == []


def test_the_probe_sees_a_built_model() -> None:
    # Settings are validated from the environment when a service starts: the probe reports
    # a model built, so an empty report above is not a probe that reports nothing.
    report = _probe("store", {}, mode="import")
    assert "riverbeam.core.settings.StoreSettings" in report["built"]
