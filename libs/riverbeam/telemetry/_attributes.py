"""Span attribute names: OpenTelemetry semantic conventions (RPC, GenAI, error) and our own."""

from __future__ import annotations

from typing import Final

# RPC (gRPC) conventions.
RPC_SYSTEM: Final = "rpc.system"
RPC_SERVICE: Final = "rpc.service"
RPC_METHOD: Final = "rpc.method"
RPC_GRPC_STATUS_CODE: Final = "rpc.grpc.status_code"

# General.
ERROR_TYPE: Final = "error.type"

# GenAI conventions (status: development).
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
# The name gen_ai.provider.name replaced; many backends still read only this one.
GEN_AI_SYSTEM: Final = "gen_ai.system"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"

# Riverbeam.
RIVERBEAM_ERROR_CODE: Final = "riverbeam.error.code"
RIVERBEAM_RUN_ID: Final = "riverbeam.run_id"
RIVERBEAM_SESSION_ID: Final = "riverbeam.session_id"
RIVERBEAM_REQUEST_ID: Final = "riverbeam.request_id"
