"""Running one tool call: argument validation, a time limit, and errors the model can read."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from riverbeam.agents._child_hold import ChildHeld
from riverbeam.agents._tool import ContextualTool, Tool, ToolCallContext, ToolSpec
from riverbeam.core.errors import ErrorCode, RiverbeamError

__all__ = ["BoundTool", "ToolOutcome", "error_result", "jsonable"]

log = logging.getLogger(__name__)

_MAX_SCHEMA_ERRORS = 5


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data (pydantic models dumped, anything else unknown as str)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    try:
        return json.loads(json.dumps(value, default=_fallback_json, ensure_ascii=False))
    except (TypeError, ValueError):
        return str(value)


def _fallback_json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def error_result(error: RiverbeamError) -> dict[str, Any]:
    """The tool result that tells the model a call failed: {"error": {"code", "message", ...}}."""
    body: dict[str, Any] = {"code": error.bem, "message": error.message}
    if error.details:
        body["details"] = dict(error.details)
    return {"error": body}


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one call produced.

    Attributes:
        result: What the model is shown: the tool's output, or error_result(error).
        error: The failure, if the call failed.
        latency_ms: How long the call took.
    """

    result: Any
    error: RiverbeamError | None
    latency_ms: float


class BoundTool:
    """A tool with its spec read once and its parameter schema compiled.

    A tool whose schema is one of Riverbeam's own (`schema_checked = True` on the tool: the
    sandbox's, each checked by a test) has it compiled at its first call, so a runner that has
    them but calls none does not load jsonschema (~3.5 MiB). Any other schema is checked here.

    Raises:
        RiverbeamError: BEM-094 for a bad tool name; BEM-002 when the parameters are not a
            valid JSON Schema.
    """

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.spec: ToolSpec = tool.spec()
        self._validator: Any = None
        if not getattr(tool, "schema_checked", False):
            self._validator = self._compiled()

    def _compiled(self) -> Any:
        # Imported here: a process that runs no tool does not load jsonschema.
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
        from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

        try:
            Draft202012Validator.check_schema(self.spec.parameters)
        except SchemaError as exc:
            raise RiverbeamError(
                ErrorCode.INVALID_ARGUMENT,
                f"tool {self.spec.name!r} has an invalid parameter schema: {exc.message}",
                tool=self.spec.name,
            ) from None
        return Draft202012Validator(self.spec.parameters)

    @property
    def name(self) -> str:
        return self.spec.name

    def check_args(
        self, args: Mapping[str, Any], *, args_error: str | None = None
    ) -> RiverbeamError | None:
        """BEM-090 when the arguments do not match the schema ("path: message; ..."), else None."""
        if args_error is not None:
            return RiverbeamError(
                ErrorCode.INVALID_TOOL_ARGS, f"{self.name}: {args_error}", tool=self.name
            )
        if self._validator is None:
            self._validator = self._compiled()
        errors = sorted(
            self._validator.iter_errors(dict(args)), key=lambda e: list(e.absolute_path)
        )
        if not errors:
            return None
        problems = [
            f"{'/'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}"
            for e in errors[:_MAX_SCHEMA_ERRORS]
        ]
        return RiverbeamError(
            ErrorCode.INVALID_TOOL_ARGS, f"{self.name}: {'; '.join(problems)}", tool=self.name
        )

    async def run(
        self,
        args: dict[str, Any],
        call: ToolCallContext,
        *,
        default_timeout_s: float | None,
        args_error: str | None = None,
    ) -> ToolOutcome:
        """Validate and invoke, within the tool's time limit. Only cancellation and ChildHeld
        (a called agent paused for approval) escape.

        A ContextualTool gets invoke_in_context(args, call); any other tool invoke(args, input).
        """
        started = time.monotonic()
        invalid = self.check_args(args, args_error=args_error)
        if invalid is not None:
            return ToolOutcome(error_result(invalid), invalid, 0.0)
        limit = self.spec.timeout_s if self.spec.timeout_s is not None else default_timeout_s
        try:
            async with asyncio.timeout(limit) as deadline:
                try:
                    if isinstance(self.tool, ContextualTool):
                        output = await self.tool.invoke_in_context(args, call)
                    else:
                        output = await self.tool.invoke(args, call.input)
                except TimeoutError:
                    if deadline.expired():
                        raise
                    raise RiverbeamError(
                        ErrorCode.TOOL_FAILED,
                        f"{self.name} failed: it timed out on its own",
                        tool=self.name,
                    ) from None
        except TimeoutError:
            error = RiverbeamError(
                ErrorCode.TOOL_TIMEOUT,
                f"{self.name} did not finish within {limit:g}s",
                tool=self.name,
                timeout_s=limit,
            )
        except RiverbeamError as exc:
            error = exc.with_details({"tool": self.name}) if "tool" not in exc.details else exc
        except ChildHeld:
            raise  # a called agent paused for approval: the caller's run pauses (_child_hold.py)
        except Exception as exc:
            log.exception("tool %s failed", self.name)
            error = RiverbeamError(
                ErrorCode.TOOL_FAILED,
                f"{self.name} failed: {type(exc).__name__}: {exc}",
                tool=self.name,
            )
        else:
            return ToolOutcome(jsonable(output), None, (time.monotonic() - started) * 1000)
        return ToolOutcome(error_result(error), error, (time.monotonic() - started) * 1000)
