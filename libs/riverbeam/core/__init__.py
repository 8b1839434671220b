"""Core: the error catalog, ids and settings. Depends on nothing else of ours."""

from riverbeam.core.errors import ErrorCode, ErrorSpec, RiverbeamError, by_code, catalog
from riverbeam.core.ids import AGENT_NAMESPACE, agent_id_for, new_id

__all__ = [
    "AGENT_NAMESPACE",
    "ErrorCode",
    "ErrorSpec",
    "RiverbeamError",
    "agent_id_for",
    "by_code",
    "catalog",
    "new_id",
]
