"""Model routing for the router: the model list, strategy-based model choice, and the
agent modality check. Pure logic, no network. See docs/routing.md.
"""

from riverbeam.routing._agent_modalities import check_agent_accepts
from riverbeam.routing._model_list import (
    DEFAULT_MODEL_NAME,
    ModelList,
    default_model,
    is_placeholder,
)
from riverbeam.routing._pricing import token_cost
from riverbeam.routing._router import ModelRouter, RoutingDecision, RoutingReason

__all__ = [
    "DEFAULT_MODEL_NAME",
    "ModelList",
    "ModelRouter",
    "RoutingDecision",
    "RoutingReason",
    "check_agent_accepts",
    "default_model",
    "is_placeholder",
    "token_cost",
]
