"""Service settings: RIVERBEAM_* environment variables (and CLI flags) via pydantic-settings.

Nothing reads the environment at import time: build a settings object explicitly
(`RunnerSettings()` reads the environment when called) and pass it in.
"""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = [
    "MIN_RETENTION_IDLE_DAYS",
    "CommonSettings",
    "ConsoleSettings",
    "RouterSettings",
    "RunnerSettings",
    "SandboxSettings",
    "StoreSettings",
]

DEFAULT_HOME = Path.home() / ".riverbeam"
# The shortest retention window (RIVERBEAM_RETENTION_IDLE_DAYS): one hour.
MIN_RETENTION_IDLE_DAYS = 1 / 24


class CommonSettings(BaseSettings):
    """Settings every service has."""

    model_config = SettingsConfigDict(env_prefix="RIVERBEAM_", extra="ignore", defer_build=True)

    listen: str = "127.0.0.1:0"
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = "text"
    # Prometheus metrics on this port at /metrics; None turns them off.
    metrics_port: int | None = None
    # Where metrics listen; default: the host of `listen` (so 127.0.0.1 stays local).
    metrics_host: str | None = None
    shutdown_grace_s: float = Field(default=30.0, ge=0)
    # Close client connections after this long so they re-resolve DNS (new replicas get
    # traffic). None keeps connections forever.
    max_connection_age_s: float | None = Field(default=300.0, gt=0)
    # How long calls and streams still open on an aged connection may run before it is cut;
    # None (the default): to their end (only new calls move to a new connection). A runner's
    # call lasts as long as its run, often minutes.
    max_connection_age_grace_s: float | None = Field(default=None, gt=0)
    # OpenTelemetry: on when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
    otel_enabled: bool = False
    # auto: uvloop when it is installed; asyncio: the standard loop; uvloop: required.
    event_loop: Literal["auto", "asyncio", "uvloop"] = "auto"


class StoreSettings(CommonSettings):
    listen: str = "127.0.0.1:50054"
    # postgresql://... ; None keeps everything in memory (development).
    database_url: str | None = None
    db_schema: str = "ref_beam"
    db_pool_min: int = 1
    db_pool_max: int = 10
    # Delete sessions (with everything under them) idle longer than this many days; None keeps
    # everything. Checked every retention_interval_s. At least one hour: a router's stream
    # grant (riverbeam.gateway._grants, 60 s) must never outlive the session it was made for.
    retention_idle_days: float | None = Field(default=None, ge=MIN_RETENTION_IDLE_DAYS)
    retention_interval_s: float = Field(default=3600.0, gt=0)


class SandboxSettings(CommonSettings):
    listen: str = "127.0.0.1:50053"
    workspace_base: Path = DEFAULT_HOME / "workspaces"
    protected_refs: list[str] = Field(default_factory=lambda: ["main", "master"])
    # Origin URLs a workspace may push to must start with one of these; empty allows local
    # paths under origin_base only.
    allowed_origin_prefixes: list[str] = Field(default_factory=list)
    origin_base: Path | None = None
    allow_request_workspace: bool = False
    git_author_name: str = "Riverbeam Agent"
    git_author_email: str = "agent@riverbeam.invalid"
    max_read_bytes: int = 256 * 1024
    max_diff_bytes: int = 256 * 1024
    # An approval preview (the diff a held git_push or write_file would make) is cut here.
    max_preview_bytes: int = Field(default=64 * 1024, gt=0)
    max_write_bytes: int = 4 * 1024 * 1024
    # A new workspace's origin is hostile input: its files and its fetch are bounded.
    max_blob_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    max_fetch_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    # Retention: workspaces made on first use and idle this long are deleted (0: never),
    # looked for every sweep interval.
    workspace_max_idle_s: float = Field(default=7 * 24 * 3600, ge=0)
    workspace_sweep_interval_s: float = Field(default=3600.0, gt=0)


def _runner_id() -> str:
    return f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"


class RunnerSettings(CommonSettings):
    listen: str = "127.0.0.1:50052"
    store_url: str | None = "127.0.0.1:50054"
    sandbox_url: str | None = "127.0.0.1:50053"
    nats_url: str = "nats://127.0.0.1:4222"
    stream_name: str = "RIVERBEAM_STREAM"
    stream_max_age_s: float = 24 * 3600
    # module:function that registers the deployment's agents (besides the built-in ones).
    agents: str | None = None
    # riverbeam.yaml: agents, their tools, MCP servers, the workspace.
    config: Path | None = None
    # The router's model list, to check the models agents in the config file name.
    models_file: Path | None = None
    # Which workspace a run's sandbox tools use: one per session (the default), one per
    # (organisation, user), or the one `workspace` for every run ("shared": an explicit opt-in).
    workspace_policy: Literal["session", "user", "shared"] = "session"
    # The shared workspace (policy "shared" only).
    workspace: str = "default"
    # The origin new workspaces are cloned from and push to (must be allowed by the sandbox).
    workspace_origin: str | None = None
    runner_id: str = Field(default_factory=_runner_id)
    lease_ttl_s: float = Field(default=15.0, gt=0)
    reap_interval_s: float = Field(default=5.0, gt=0)
    # Durable runs (docs/durability.md): a run whose runner stopped is continued by the
    # replica whose reaper takes it over, from its last checkpoint (`recover`), or failed
    # with BEM-034 (`fail`, the behaviour before checkpoints). A run taken over more often
    # than max_takeovers is failed (BEM-267).
    recovery_policy: Literal["recover", "fail"] = "recover"
    max_takeovers: int = Field(default=3, ge=0)
    # One run at a time per session: reject a second invoke (BEM-030), queue it, or interrupt
    # (cancel) the running run and start the new one.
    busy_session_policy: Literal["reject", "queue", "interrupt"] = "reject"
    queue_timeout_s: float = 60.0
    max_history_messages: int = 200
    # How long a run's finish step is retried while the store is unreachable (the run keeps
    # its lease meanwhile); after that the run is left to the reaper (BEM-036).
    finish_retry_s: float = Field(default=60.0, ge=0)
    # begin-run and finish-run steps travel on this many long-lived RunSteps streams to the
    # store (steps queued meanwhile share a message); 0: one unary call per step.
    store_step_lanes: int = Field(default=2, ge=0, le=16)
    # The frames stream's size bound in bytes (oldest frames go first), besides its max age.
    stream_max_bytes: int | None = Field(default=1024**3, gt=0)
    # The agent layer's deployment defaults: JSON text, or the path of a JSON/YAML file
    # (guardrails, tool_policies, time_limit_s, token_budget, max_rounds; docs/agents.md).
    agent_layer: str | None = None
    # How long an approval stays answerable when its agent sets no approval_ttl_s; None
    # (the default): it never expires.
    approval_ttl_s: float | None = Field(default=None, gt=0)


class RouterSettings(CommonSettings):
    listen: str = "127.0.0.1:50051"
    runner_url: str = "127.0.0.1:50052"
    # How calls spread over the runner target's addresses: each in turn, or the first that
    # answers (the others only as failover).
    runner_balancing: Literal["round_robin", "pick_first"] = "round_robin"
    # RunInvoke calls travel as messages on this many long-lived RunInvokes streams to the
    # runner (each stream goes to one replica at a time); 0: one unary call per invoke.
    runner_invoke_lanes: int = Field(default=4, ge=0, le=64)
    store_url: str = "127.0.0.1:50054"
    nats_url: str = "nats://127.0.0.1:4222"
    stream_name: str = "RIVERBEAM_STREAM"
    # The router also creates the stream (when missing): the same bounds as the runner's.
    stream_max_age_s: float = 24 * 3600
    stream_max_bytes: int | None = Field(default=1024**3, gt=0)
    tokens_file: Path | None = None
    # Unauthenticated calls allowed; said loudly at start-up. Only for local development.
    dev_mode: bool = False
    models_file: Path | None = None
    max_content_bytes: int = 1024 * 1024
    max_metadata_bytes: int = 64 * 1024
    # A unary invoke whose runner died mid-call waits this long (within the caller's
    # deadline) for another replica to continue the run to its end, then answers with it
    # (BEM-270 if it is still running). It should exceed the runners' lease TTL + reap
    # interval (15 s + 5 s by default) plus the time a run takes. 0: BEM-034 at once.
    router_recovery_wait_s: float = Field(default=120.0, ge=0)


class ConsoleSettings(CommonSettings):
    """The console: HTTP/JSON API, SSE frames, `/chat` and the web console (a router client)."""

    listen: str = "127.0.0.1:8080"
    router_url: str = "127.0.0.1:50051"
    # Origins allowed to call the HTTP API from a browser (CORS); empty turns CORS off.
    cors_origins: list[str] = Field(default_factory=list)
    # Largest request body accepted (HTTP 413, BEM-401, above it).
    max_request_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    # The agent `POST /chat` runs when the request names none.
    chat_agent: str = "assistant"
    # Seconds between SSE keep-alive comments on an idle frame stream.
    sse_ping_s: float = Field(default=15.0, gt=0)
    # Serve the web console at / (the HTTP API and /docs are served either way).
    web_console: bool = True
