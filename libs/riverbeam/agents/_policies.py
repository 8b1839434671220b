"""The tool-call policy chain: ordered interceptors around every tool call.

Before a call, each policy in order may return nothing (no objection), RewriteArgs (the
call goes on with new arguments), Deny (the model is shown a refusal and carries on),
DenyFatal (the run ends with BEM-210), ShortCircuit (the tool is not run; the given result
stands for it) or RequireApproval (the call waits for a person, exactly like a
confirm_required tool: the stored tool and args run once on approval). The first decision
other than a rewrite ends the chain. After a call each policy may RewriteResult. Every
decision is recorded with the call (ToolCallRecord.decisions).

Built-ins are plain data with a discriminated `kind`:

    {"kind": "confirm_required"}                       the ToolSpec flag (always in the chain)
    {"kind": "approve_tools", "tools": ["git_push"]}
    {"kind": "approve_path_outside", "tools": ["write_file"], "arg": "path",
     "prefixes": ["docs/"]}
    {"kind": "max_tool_calls", "limit": 20, "fatal": false}
    {"kind": "deny_tools", "tools": ["delete_file"], "fatal": false}
    {"kind": "redact_result", "detect": ["email", "card"]}
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, TypeAlias, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from riverbeam.agents._guardrails import PiiKind, all_pii, redact_pii
from riverbeam.agents._tool import ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = [
    "After",
    "ApprovePathOutside",
    "ApproveTools",
    "Before",
    "ConfirmRequired",
    "Deny",
    "DenyFatal",
    "DenyTools",
    "MaxToolCalls",
    "PolicyCall",
    "RedactResult",
    "RequireApproval",
    "RewriteArgs",
    "RewriteResult",
    "ShortCircuit",
    "ToolPolicy",
    "ToolPolicyConfig",
    "parse_policies",
    "with_confirm_required",
]


@dataclass(frozen=True, slots=True)
class PolicyCall:
    """What a policy sees of one call.

    Attributes:
        tool: The tool's name.
        args: The arguments (after earlier rewrites).
        spec: The tool's spec, or None for a tool the agent does not have.
        calls_before: Tool calls this run made before this one.
        confirmed: The caller approved confirm-required calls up front (metadata.confirm).
    """

    tool: str
    args: Mapping[str, Any]
    spec: ToolSpec | None
    calls_before: int
    confirmed: bool


@dataclass(frozen=True, slots=True)
class RewriteArgs:
    args: dict[str, Any]
    message: str = ""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the call; the model sees `message` as the call's result."""

    message: str


@dataclass(frozen=True, slots=True)
class DenyFatal:
    """Refuse the call and end the run (BEM-210)."""

    message: str


@dataclass(frozen=True, slots=True)
class ShortCircuit:
    """Do not run the tool; `result` is its result."""

    result: Any
    message: str = ""


@dataclass(frozen=True, slots=True)
class RequireApproval:
    """Hold the call for a person's approval."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class RewriteResult:
    result: Any
    message: str = ""


Before: TypeAlias = RewriteArgs | Deny | DenyFatal | ShortCircuit | RequireApproval
After: TypeAlias = RewriteResult


@runtime_checkable
class ToolPolicy(Protocol):
    """One interceptor of the chain."""

    @property
    def name(self) -> str: ...

    async def before(self, call: PolicyCall) -> Before | None: ...

    async def after(self, call: PolicyCall, result: Any) -> After | None: ...


class _Base(BaseModel):
    # Built on first use: a runner with no policies configured never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    label: str | None = Field(default=None, alias="name")

    @property
    def name(self) -> str:
        return self.label or str(getattr(self, "kind", "policy"))

    async def before(self, call: PolicyCall) -> Before | None:
        return None

    async def after(self, call: PolicyCall, result: Any) -> After | None:
        return None


class ConfirmRequired(_Base):
    """Approval for tools whose spec says confirm_required (unless the caller confirmed)."""

    kind: Literal["confirm_required"] = "confirm_required"

    async def before(self, call: PolicyCall) -> Before | None:
        if call.spec is not None and call.spec.confirm_required and not call.confirmed:
            return RequireApproval(f"{call.tool} is marked confirm_required")
        return None


class ApproveTools(_Base):
    """Approval for the named tools only ("approve git_push only")."""

    kind: Literal["approve_tools"] = "approve_tools"
    tools: list[str] = Field(min_length=1)

    async def before(self, call: PolicyCall) -> Before | None:
        if call.tool in self.tools and not call.confirmed:
            return RequireApproval(f"{call.tool} needs approval")
        return None


def _under(path: str, prefix: str) -> bool:
    norm = posixpath.normpath(path.lstrip("/")) if path else ""
    if norm.startswith("..") or path.startswith("/"):
        return False
    base = posixpath.normpath(prefix.strip("/"))
    return norm == base or norm.startswith(base + "/")


class ApprovePathOutside(_Base):
    """Approval when a path argument is outside every prefix ("write_file outside docs/")."""

    kind: Literal["approve_path_outside"] = "approve_path_outside"
    tools: list[str] = Field(min_length=1)
    arg: str = "path"
    prefixes: list[str] = Field(min_length=1)

    async def before(self, call: PolicyCall) -> Before | None:
        if call.tool not in self.tools or call.confirmed:
            return None
        value = call.args.get(self.arg)
        path = value if isinstance(value, str) else ""
        if any(_under(path, prefix) for prefix in self.prefixes):
            return None
        return RequireApproval(f"{self.arg} {path!r} is outside {', '.join(self.prefixes)}")


class MaxToolCalls(_Base):
    """Deny any tool call after `limit` calls in a run ("deny any tool after 20 calls")."""

    kind: Literal["max_tool_calls"] = "max_tool_calls"
    limit: int = Field(ge=0)
    fatal: bool = False

    async def before(self, call: PolicyCall) -> Before | None:
        if call.calls_before < self.limit:
            return None
        message = f"no more tool calls: this run already made {self.limit}"
        return DenyFatal(message) if self.fatal else Deny(message)


class DenyTools(_Base):
    """Deny the named tools."""

    kind: Literal["deny_tools"] = "deny_tools"
    tools: list[str] = Field(min_length=1)
    fatal: bool = False
    message: str = "this tool is not allowed here"

    async def before(self, call: PolicyCall) -> Before | None:
        if call.tool not in self.tools:
            return None
        return DenyFatal(self.message) if self.fatal else Deny(self.message)


def _redact(value: Any, kinds: Sequence[PiiKind], found: list[str]) -> Any:
    if isinstance(value, str):
        text, hits = redact_pii(value, kinds)
        found.extend(hits)
        return text
    if isinstance(value, list):
        return [_redact(v, kinds, found) for v in value]
    if isinstance(value, dict):
        return {k: _redact(v, kinds, found) for k, v in value.items()}
    return value


class RedactResult(_Base):
    """Redact PII in the result of the named tools (all tools when none are named)."""

    kind: Literal["redact_result"] = "redact_result"
    tools: list[str] = Field(default_factory=list)
    detect: list[PiiKind] = Field(default_factory=all_pii)

    async def after(self, call: PolicyCall, result: Any) -> After | None:
        if self.tools and call.tool not in self.tools:
            return None
        found: list[str] = []
        redacted = _redact(result, self.detect, found)
        if not found:
            return None
        return RewriteResult(redacted, "redacted " + ", ".join(sorted(set(found))))


ToolPolicyConfig: TypeAlias = Annotated[
    ConfirmRequired | ApproveTools | ApprovePathOutside | MaxToolCalls | DenyTools | RedactResult,
    Field(discriminator="kind"),
]
"""One tool policy as plain data (the `kind` picks the built-in)."""


@functools.cache
def _configs() -> TypeAdapter[list[ToolPolicyConfig]]:
    # Built by the first config read, not at import (issue 16: idle RSS).
    return TypeAdapter(list[ToolPolicyConfig])


def parse_policies(data: Any, *, source: str = "tool_policies") -> list[ToolPolicyConfig]:
    """Policy configs from plain data (a list of objects); BEM-211 when invalid."""
    try:
        return _configs().validate_python(data)
    except ValueError as exc:
        raise RiverbeamError(
            ErrorCode.TOOL_POLICY_INVALID, f"{source}: {exc}", source=source
        ) from None


def with_confirm_required(policies: Sequence[ToolPolicy]) -> list[ToolPolicy]:
    """The chain with ConfirmRequired first, unless it is already in it.

    The ToolSpec's confirm_required flag is always honoured: no configuration removes it.
    """
    chain = list(policies)
    if not any(isinstance(p, ConfirmRequired) for p in chain):
        chain.insert(0, ConfirmRequired())
    return chain


def decision_action(decision: Before | After) -> str:
    """The recorded name of a decision."""
    return {
        RewriteArgs: "rewrite_args",
        Deny: "deny",
        DenyFatal: "deny_fatal",
        ShortCircuit: "short_circuit",
        RequireApproval: "require_approval",
        RewriteResult: "rewrite_result",
    }[type(decision)]


def decision_message(decision: Before | After) -> str:
    """What the decision says (its message or reason)."""
    if isinstance(decision, RequireApproval):
        return decision.reason
    return decision.message
