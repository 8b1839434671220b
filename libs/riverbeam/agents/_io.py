"""What an agent receives: its input (the request) and its context (history, model, memory)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from riverbeam.types import (
    ActionResponseEnvelope,
    ContentPart,
    InvokeAuthContext,
    MemoryEntry,
    Message,
    ModelConfig,
    TokenUsage,
    TurnConfig,
)

if TYPE_CHECKING:
    from riverbeam.agents._child_runs import ChildRunHost
    from riverbeam.agents._handoff import HandoffRequest
    from riverbeam.agents._layer_config import AgentLayerConfig
    from riverbeam.agents._ledger import ToolLedger

Checkpoint = Callable[[dict[str, Any]], Awaitable[None]]
"""`await checkpoint(agent_state)`: save the run's progress (see AgentContext.checkpoint)."""

__all__ = ["AgentContext", "AgentInput", "MemoryWriter", "ResumedAction", "UsageMeter"]


@dataclass(frozen=True, slots=True)
class ResumedAction:
    """One answered pending action, as the pipeline hands it to the agent on resume.

    tool, args and tool_call_id are the ones stored with the pending action: the agent runs
    those, never anything from the response payload. response is the client's answer; only a
    response whose status is "submitted" approves the call.
    """

    action_id: str
    tool: str
    args: dict[str, Any]
    tool_call_id: str | None
    response: ActionResponseEnvelope
    # The stored action's kind: "confirmation", or "outcome_unknown" (durable runs: a call
    # whose runner died while it ran; the response's payload says retry, skip or done).
    kind: str = "confirmation"

    @property
    def approved(self) -> bool:
        return self.response.status == "submitted"


@dataclass(slots=True)
class AgentInput:
    """The request an agent runs for."""

    content: list[ContentPart]
    session_id: str
    run_id: str
    agent_name: str
    interaction_id: str | None = None
    request_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    auth_context: InvokeAuthContext | None = None
    actions: list[ResumedAction] = field(default_factory=list)
    # Set by the pipeline, never by the caller: the caller may approve its own
    # confirm_required tools, so metadata.confirm is honoured.
    confirm_allowed: bool = False
    # The agent layer's per-request options (each only narrows what the agent allows).
    response_schema: dict[str, Any] | None = None
    time_limit_s: float | None = None
    token_budget: int | None = None
    turn_config: TurnConfig | None = None
    # The session's stored configuration, applied before turn_config.
    session_config: TurnConfig | None = None
    # The input guardrails' outcome when the pipeline ran them before storing the turn
    # (agents/_input_guard.py GuardedInput); None: the agent runs them itself.
    guarded_input: Any = None

    @property
    def text(self) -> str:
        return "".join(p.text or "" for p in self.content if p.type == "text")

    @property
    def confirmed(self) -> bool:
        """metadata.confirm, honoured only when the pipeline marked the caller as allowed."""
        return self.confirm_allowed and self.metadata.get("confirm") is True


class MemoryWriter(Protocol):
    """Where the remember tool writes. The store implements it."""

    async def remember(
        self,
        *,
        scope_name: str,
        scope_id: str,
        content: str,
        metadata: dict[str, Any] | None = None,
        org_id: str | None = None,
    ) -> MemoryEntry: ...


@dataclass(slots=True)
class UsageMeter:
    """Token usage accumulated during a run, readable at any time (a cancelled run reports it)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    # The model that answered the latest call (what a failed or cancelled run reports).
    model: str | None = None

    def add(self, usage: TokenUsage | None) -> None:
        if usage is not None:
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens

    def snapshot(self) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.prompt_tokens + self.completion_tokens,
        )


@dataclass(slots=True)
class AgentContext:
    """What the pipeline gives an agent besides the request."""

    history: list[Message] = field(default_factory=list)
    memory: list[MemoryEntry] = field(default_factory=list)
    model_config_resolved: ModelConfig | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_writer: MemoryWriter | None = None
    # Memory scopes (name, id) this request may read and write.
    memory_scopes: list[tuple[str, str]] = field(default_factory=list)
    usage: UsageMeter = field(default_factory=UsageMeter)
    # The deployment's agent-layer defaults (an AgentLayerConfig), when it has any.
    agent_layer: AgentLayerConfig | None = None
    # The history before the pipeline trimmed it to the model's budget, for agents that
    # compact it themselves (RigAgentRunner does); None when the pipeline has no such view.
    full_history: list[Message] | None = None
    # The run's tool-execution ledger (docs/durability.md); None: the agent keeps its own.
    tool_ledger: ToolLedger | None = None
    # Durable runs (docs/durability.md). `checkpoint(state)` saves the agent's progress after
    # a completed step (the pipeline adds what it knows and writes it to the store, fenced by
    # the run's epoch); None when the run is not checkpointed. `recovered` is the agent state
    # of the last checkpoint when this run continues one that lost its runner.
    checkpoint: Checkpoint | None = None
    recovered: dict[str, Any] | None = None
    # Where agents this run calls (agent as tool, crews, handoff) are recorded as child runs
    # and their frames published; None outside the pipeline (see _child_runs.py).
    child_runs: ChildRunHost | None = None
    # Set by a transfer_to_<agent> tool: the run stops after the tool round and that agent
    # answers instead (see _handoff.py).
    handoff: HandoffRequest | None = None
