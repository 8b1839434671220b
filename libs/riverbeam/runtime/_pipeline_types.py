"""What the pipeline is given and what prepare() hands to execute().

Grant (what the router established about the caller), PipelineOptions (a replica's settings)
and PreparedRun (a begun run, ready to execute).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from riverbeam.core.fencing import Fence
from riverbeam.core.ids import new_id
from riverbeam.store._begin_reply import lease_epoch_of
from riverbeam.types import ModelConfig

if TYPE_CHECKING:  # annotations only: the router imports Grant without the agent layer
    from riverbeam.agents import Agent
    from riverbeam.agents._io import ResumedAction
    from riverbeam.agents._layer_config import AgentLayerConfig
    from riverbeam.agents._ledger import ToolLedger
    from riverbeam.runtime._checkpointing import Recovery
    from riverbeam.store import BeginRunResult
    from riverbeam.types import AgentMetadata, InvokeRequest

__all__ = ["BusySessionPolicy", "Grant", "PipelineOptions", "PreparedRun"]


BusySessionPolicy = Literal["reject", "queue", "interrupt"]
"""What a new message to a session with a running run does: BEM-030, wait, or cancel that run."""


DEFAULT_MODEL = ModelConfig(name="riverbeam-default", provider="custom")
"""The model the router resolves when no model list is configured (and our own default)."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What the router established about the caller.

    `require_owner`: the run may only join a session owned by this user id (or start a new
    one); the store checks it atomically with the session's creation (BEM-025 otherwise).
    """

    may_confirm: bool = False
    subject: str | None = None
    require_owner: str | None = None
    require_org: str | None = None
    # Not a backend or admin: its session_config narrows the stored one, never replaces it.
    session_config_narrows_only: bool = False


@dataclass(frozen=True, slots=True)
class PipelineOptions:
    runner_id: str = field(default_factory=lambda: f"runner-{new_id()[:8]}")
    lease_ttl_s: float = 15.0
    busy_session_policy: BusySessionPolicy = "reject"
    queue_timeout_s: float = 60.0
    max_history_messages: int = 200
    max_memory_entries: int = 50
    # How long the finish step is retried while the store is unreachable (the run keeps
    # renewing its lease meanwhile); then the run is left to the reaper.
    finish_retry_s: float = 60.0
    # The deployment's agent-layer defaults (guardrails, tool policies, run limits).
    agent_layer: AgentLayerConfig | None = None
    # How long a pending action stays answerable when its agent does not say; None: forever.
    approval_ttl_s: float | None = None
    # Durable runs: checkpoint each completed step of the agents that support it (the
    # RigAgentRunner does), so a replica can continue a run whose runner died. The runner
    # service turns it on with RIVERBEAM_RECOVERY_POLICY=recover (its default); a process
    # with nobody to take its runs over has no use for checkpoints.
    checkpoints: bool = False


@dataclass(slots=True)
class PreparedRun:
    request: InvokeRequest
    request_id: str
    interaction_id: str
    run_id: str
    agent: Agent
    model: ModelConfig
    grant: Grant
    begun: BeginRunResult
    resumed: list[ResumedAction]
    # The agent's metadata as read when the run was prepared (an agent builds it afresh on
    # every call): the finish step's approval TTL comes from it.
    metadata: AgentMetadata
    # The input guardrails' outcome, computed before the turn was stored (GuardedInput).
    guarded_input: Any = None
    # The run's tool-execution ledger; its unwritten entries go with the finish step.
    ledger: ToolLedger | None = None
    # Set when this replica continues the run from another runner's checkpoint.
    recovery: Recovery | None = None
    # The lease epoch this replica holds the run at (its fencing token): the begun run's,
    # read once (a run is read at it four times or more; `begun` is never replaced).
    epoch: int = field(init=False)

    def __post_init__(self) -> None:
        # Read without converting a lent step's run, which the pipeline reads nothing else of.
        self.epoch = lease_epoch_of(self.begun) or 1

    @property
    def ids(self) -> dict[str, str]:
        """The correlation ids every frame and result of this run carries."""
        return {
            "agent_name": self.request.agent_name,
            "session_id": self.request.session_id,
            "interaction_id": self.interaction_id,
            "run_id": self.run_id,
            "request_id": self.request_id,
        }

    @property
    def is_resume(self) -> bool:
        return bool(self.resumed)

    @property
    def fence(self) -> Fence:
        return Fence(self.run_id, self.epoch)
