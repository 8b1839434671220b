"""RigAgentRunner: Riverbeam's own tool loop over a CompletionClient.

The run itself, and the order of the agent layer (limits, turn configuration, structured
output, guardrails, the tool-call policy chain), is in _run.py. One run goes: placeholder and
thinking frames; then model calls, each streamed as `chunk`
frames; tool calls run between them, each announced by a `tool` frame before it runs (role
ai, type action) and answered by one after (role tool, type tool_result). The run ends with a
`done` frame (the reply, or interrupted: true with action_required when a tool needs a
person's approval) or an `error` frame carrying the BEM code. Cancellation always propagates.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from riverbeam import __version__
from riverbeam.agents._completion import CompletionClient, closing_events
from riverbeam.agents._io import AgentContext, AgentInput
from riverbeam.agents._skills import Skill, skill_by_name
from riverbeam.agents._tool import Tool, ToolSpec
from riverbeam.agents._toolcall import BoundTool
from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.types import AgentMetadata, ContentPart, Modality, StreamChunk

if TYPE_CHECKING:  # the agent layer comes with the tool loop, with such an agent's first run
    from riverbeam.agents._compaction import CompactionOptions
    from riverbeam.agents._guardrails import Guardrail, GuardrailConfig
    from riverbeam.agents._input_guard import GuardedInput
    from riverbeam.agents._layer_config import AgentLayerConfig
    from riverbeam.agents._output import OutputSpec
    from riverbeam.agents._policies import ToolPolicy
    from riverbeam.agents._tokens import TokenCounter

__all__ = ["RigAgentRunner", "RigOptions", "ToolErrorPolicy"]

log = logging.getLogger(__name__)

ToolErrorPolicy = Literal["fatal", "model"]
"""What a failing tool does: end the run with an error frame, or show the model the error."""


@dataclass(frozen=True, slots=True)
class RigOptions:
    """How a RigAgentRunner behaves.

    Attributes:
        max_rounds: Tool rounds allowed per run; the model asking for one more is BEM-088.
        tool_errors: "fatal" (the seed's behaviour): a tool error ends the run with an error
            frame carrying the tool's BEM code. "model": the model gets {"error": {...}} as the
            call's result and carries on; an unknown tool (BEM-089) is then shown too. Invalid
            arguments (BEM-090) are always shown to the model, never fatal.
        tool_timeout_s: Time limit of a tool call (BEM-091) when its spec sets none; None for
            no limit.
        resume_returns_tool_output: On resume, return the approved tools' output as the
            result instead of letting the model finish its answer (the seed's behaviour).
        output: The agent's response schema (structured output with repair); a dict is read
            as an OutputSpec ({"schema": {...}, "repair_attempts": 2}).
        guardrails: Input/output/tool-result guardrails, run after the deployment's.
        policies: The tool-call policy chain, after the deployment's (confirm_required is
            always honoured, first).
        judge: The client model-judged guardrails ask (default: the agent's own).
        time_limit_s: Whole-run time limit (BEM-215).
        token_budget: Tokens the run may use over all model calls (BEM-216).
        compaction: How calls are kept within the context (default: summarise older turns,
            then trim; see CompactionOptions).
        token_counter: How prompt tokens are counted (default: the calibrated estimate).
    """

    max_rounds: int = 8
    tool_errors: ToolErrorPolicy = "fatal"
    tool_timeout_s: float | None = 60.0
    resume_returns_tool_output: bool = False
    output: OutputSpec | None = None
    guardrails: Sequence[Guardrail | GuardrailConfig] = ()
    policies: Sequence[ToolPolicy] = ()
    judge: CompletionClient | None = None
    time_limit_s: float | None = None
    token_budget: int | None = None
    compaction: CompactionOptions | None = None
    token_counter: TokenCounter | None = None

    def __post_init__(self) -> None:
        if self.max_rounds < 0:
            raise ValueError("max_rounds must be >= 0")
        object.__setattr__(self, "guardrails", tuple(self.guardrails))
        object.__setattr__(self, "policies", tuple(self.policies))
        if isinstance(self.output, dict):
            from riverbeam.agents._output import OutputSpec

            object.__setattr__(self, "output", OutputSpec.model_validate(self.output))


class RigAgentRunner:
    """The built-in tool-loop agent.

    Args:
        name: The agent's name.
        client: The model.
        tools: The tools the model may call (all of them).
        skill: Supplies the system prompt (and the description); None for neither.
        options: Loop behaviour; see RigOptions.
        description: The metadata description (defaults to the skill's).
        supported_modalities: Input modalities the agent accepts.

    Raises:
        RiverbeamError: BEM-094 for a bad tool name, BEM-002 for two tools with one name or a
            tool whose parameters are not a valid JSON Schema.
    """

    def __init__(
        self,
        name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        *,
        skill: Skill | None = None,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> None:
        self.name = name
        self.client = client
        self.skill = skill
        self.options = options or RigOptions()
        # Made on first use (see `counter`), unless the options give one.
        self._counter: TokenCounter | None = self.options.token_counter
        self._description = description
        self._modalities: list[Modality] = list(supported_modalities)
        self._tools: dict[str, BoundTool] = {}
        for tool in tools:
            bound = BoundTool(tool)
            if bound.name in self._tools:
                raise RiverbeamError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"two tools are named {bound.name!r}",
                    tool=bound.name,
                )
            self._tools[bound.name] = bound

    @classmethod
    def for_skill(
        cls,
        skill_name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        *,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> RigAgentRunner:
        """An agent named after a built-in skill, with the passed tools its allowlist names.

        An unknown skill name gets an empty system prompt and all the tools.
        """
        skill = skill_by_name(skill_name)
        chosen = list(tools) if skill is None else [t for t in tools if skill.allows(t.spec().name)]
        return cls(
            skill_name,
            client,
            chosen,
            skill=skill,
            options=options,
            description=description,
            supported_modalities=supported_modalities,
        )

    @classmethod
    def new(
        cls,
        name: str,
        client: CompletionClient,
        tools: Iterable[Tool],
        skill: Skill | str | None = None,
        *,
        options: RigOptions | None = None,
        description: str | None = None,
        supported_modalities: Sequence[Modality] = ("text",),
    ) -> RigAgentRunner:
        """An agent with all the passed tools; the skill (or skill name) supplies only the prompt."""
        resolved = skill_by_name(skill) if isinstance(skill, str) else skill
        return cls(
            name,
            client,
            tools,
            skill=resolved,
            options=options,
            description=description,
            supported_modalities=supported_modalities,
        )

    @property
    def counter(self) -> TokenCounter:
        """How this agent counts prompt tokens, shared by its runs so the calibration carries
        over: the model family's vocabulary where one is installed (_vocab_tokens.py), else
        the calibrated estimate.

        Made with the first run, not when the agent is built: an OpenAI-family vocabulary is
        12-45 MiB, which a runner that has served no run of the agent does not hold (issue 16).
        """
        counter = self._counter
        if counter is None:
            from riverbeam.agents._vocab_tokens import default_counter

            counter = self._counter = default_counter(getattr(self.client, "model", None))
        return counter

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """The specs the model is shown, in the order the tools were given."""
        return [bound.spec for bound in self._tools.values()]

    @property
    def system_prompt(self) -> str:
        return self.skill.system_prompt if self.skill else ""

    def tool(self, name: str) -> BoundTool | None:
        """The tool called `name`, if the agent has it."""
        return self._tools.get(name)

    def metadata(self) -> AgentMetadata:
        """Name, description (the skill's), modalities, tags ("rig", "skill:<name>") and version."""
        tags = ["rig"] + ([f"skill:{self.skill.name}"] if self.skill else [])
        return AgentMetadata(
            name=self.name,
            description=self._description
            or (self.skill.description if self.skill else "Tool-using agent"),
            supported_modalities=self._modalities,
            output_modalities=["text"],
            tags=tags,
            version=__version__,
            default_model=_client_default_model(self.client),
        )

    async def guard_input(
        self, content: list[ContentPart], layer: AgentLayerConfig | None
    ) -> GuardedInput | None:
        """The input guardrails (the deployment's, then the agent's) over a turn, before it is
        stored (agents/_input_guard.py); None when none applies."""
        from riverbeam.agents._guardrails import build_guardrails
        from riverbeam.agents._input_guard import guard_content

        guardrails = build_guardrails(
            [*(layer.guardrails if layer else ()), *self.options.guardrails],
            judge=self.options.judge or self.client,
        )
        return await guard_content(guardrails, content)

    async def health_check(self) -> bool:
        """Always healthy: a model outage shows up per request, as an error frame."""
        return True

    async def stream(self, input: AgentInput, context: AgentContext) -> AsyncIterator[StreamChunk]:
        """Run the loop for one request; see the module docstring for the frames."""
        # The loop (with its tool, chat, handoff, child-run and agent-layer machinery, and
        # routing's model list) is imported with the first run of a tool-loop agent, not when
        # one is built: a runner serving the built-in skill agents idles without it (issue 16,
        # ~1 MiB measured), at the cost of 50-150 ms on that first run.
        from riverbeam.agents._run import RigRun

        run = RigRun(self, input, context)
        try:
            async with closing_events(run.frames()) as frames:
                async for frame in frames:
                    yield frame
        except RiverbeamError as error:
            yield run.factory.error(error, result=run.partial(error))
        except Exception as exc:
            log.exception("agent %s failed", self.name)
            crash = RiverbeamError(
                ErrorCode.INTERNAL, f"agent {self.name} failed: {type(exc).__name__}"
            )
            yield run.factory.error(crash, result=run.partial(crash))


def _client_default_model(client: object) -> str | None:
    default = getattr(client, "default_model", None)
    return default if isinstance(default, str) else None
