"""Model routing: every strategy, in order, and every refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing import ModelList, ModelRouter, RoutingDecision, RoutingReason
from riverbeam.types import AgentMetadata, ContentPart, ModelConfig

TEXT = [ContentPart.of_text("hello")]
IMAGE = [ContentPart.of_text("what is this?"), ContentPart(type="image_url", url="https://x/y.png")]
AUDIO = [ContentPart(type="audio", data="AAAA")]
IMAGE_AND_AUDIO = IMAGE + AUDIO
PDF = [ContentPart(type="file", data="JVBE", mime_type="application/pdf")]  # a text modality

PLAIN = AgentMetadata(name="plain")
CODER = AgentMetadata(name="coder", tags=["code", "long-context"])


def m(
    name: str, cost: float = 1.0, modalities: list[str] | None = None, caps: list[str] | None = None
) -> ModelConfig:
    return ModelConfig(
        name=name,
        provider="openai",
        cost_per_1k_tokens=cost,
        modalities=modalities or ["text"],
        capabilities=caps or [],
    )


# One list that exercises every strategy (see docs/routing.md).
FLEET = ModelList(
    [
        m("premium", cost=10.0, caps=["code", "tools", "json"]),
        m("basic-a", cost=0.5),
        m("basic-b", cost=0.5),
        m("coder", cost=2.0, caps=["code", "tools"]),
        m("cheap-tools", cost=0.2, caps=["tools"]),
        m("vision", cost=3.0, modalities=["text", "image"], caps=["vision"]),
        m("omni", cost=8.0, modalities=["text", "image", "audio"], caps=["vision", "speech"]),
    ]
)
ROUTER = ModelRouter(FLEET)


def route(
    content: list[ContentPart] = TEXT,
    metadata: dict[str, Any] | None = None,
    agent: AgentMetadata = PLAIN,
    override: str | None = None,
    router: ModelRouter = ROUTER,
) -> RoutingDecision:
    return router.resolve(content=content, metadata=metadata, agent=agent, model_override=override)


def refused(**kwargs: Any) -> RiverbeamError:
    with pytest.raises(RiverbeamError) as info:
        route(**kwargs)
    return info.value


# ---- every strategy decides once ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "model", "reason"),
    [
        ({"override": "premium"}, "premium", RoutingReason.OVERRIDE),
        ({"override": "omni", "content": IMAGE_AND_AUDIO}, "omni", RoutingReason.OVERRIDE),
        ({"content": IMAGE_AND_AUDIO}, "omni", RoutingReason.MODALITIES),
        ({"content": IMAGE}, "vision", RoutingReason.COST),
        ({"metadata": {"capabilities": ["json"]}}, "premium", RoutingReason.CAPABILITIES),
        ({"metadata": {"capabilities": ["code", "tools"]}}, "coder", RoutingReason.COST),
        ({"metadata": {"capabilities": ["tools"]}, "agent": CODER}, "coder", RoutingReason.COST),
        ({"agent": CODER}, "coder", RoutingReason.COST),
        ({"agent": AgentMetadata(name="s", tags=["speech"])}, "omni", RoutingReason.AGENT_TAGS),
        (
            {"content": IMAGE, "agent": AgentMetadata(name="s", tags=["speech"])},
            "omni",
            RoutingReason.AGENT_TAGS,
        ),
        ({}, "cheap-tools", RoutingReason.COST),
        ({"content": PDF}, "cheap-tools", RoutingReason.COST),
    ],
)
def test_strategies(kwargs: dict[str, Any], model: str, reason: RoutingReason) -> None:
    decision = route(**kwargs)
    assert (decision.model.name, decision.reason) == (model, reason)


def test_only_model() -> None:
    router = ModelRouter(ModelList.default())
    decision = route(router=router)
    assert decision.model.name == "riverbeam-default"
    assert decision.reason is RoutingReason.ONLY_MODEL
    assert decision.candidates == ("riverbeam-default",)


def test_list_order_breaks_cost_ties() -> None:
    router = ModelRouter([m("a", 1.0), m("b", 0.5), m("c", 0.5), m("d", 0.7)])
    decision = route(router=router)
    assert (decision.model.name, decision.reason) == ("b", RoutingReason.LIST_ORDER)
    assert decision.candidates == ("a", "b", "c", "d")
    flipped = ModelRouter([m("c", 0.5), m("b", 0.5)])
    assert route(router=flipped).model.name == "c"


def test_cost_reason_lists_the_models_compared() -> None:
    decision = route(content=IMAGE)
    assert decision.candidates == ("vision", "omni")


def test_agent_tags_prefer_but_do_not_filter() -> None:
    # No model has the tag: every model stays in the running, cost decides.
    decision = route(agent=AgentMetadata(name="x", tags=["poetry"]))
    assert (decision.model.name, decision.reason) == ("cheap-tools", RoutingReason.COST)


def test_agent_tags_narrow_among_capable_models() -> None:
    # capabilities=tools leaves premium, coder, cheap-tools; the "code" tag prefers premium and coder.
    decision = route(metadata={"capabilities": ["tools"]}, agent=CODER)
    assert decision.model.name == "coder"
    assert decision.candidates == ("premium", "coder")


def test_strategies_apply_in_order_modalities_before_capabilities() -> None:
    # "tools" exists, but not among the models that see images.
    err = refused(content=IMAGE, metadata={"capabilities": ["tools"]})
    assert err.code is ErrorCode.NO_MODEL_FOR_CAPABILITIES


def test_settled_early_still_checks_later_filters() -> None:
    # Only omni takes audio; it lacks "tools", so the request is refused, not routed to omni.
    err = refused(content=AUDIO, metadata={"capabilities": ["tools"]})
    assert err.code is ErrorCode.NO_MODEL_FOR_CAPABILITIES
    router = ModelRouter(ModelList.default())
    err = refused(router=router, metadata={"capabilities": ["vision"]})
    assert err.code is ErrorCode.NO_MODEL_FOR_CAPABILITIES


def test_capabilities_match_case_insensitively() -> None:
    assert route(metadata={"capabilities": [" JSON "]}).model.name == "premium"
    assert route(agent=AgentMetadata(name="x", tags=["CODE"])).model.name == "coder"


def test_empty_capabilities_do_not_filter() -> None:
    assert route(metadata={"capabilities": []}).model.name == "cheap-tools"
    assert route(metadata={"other": 1}).model.name == "cheap-tools"


def test_empty_content_routes_by_the_other_strategies() -> None:
    assert route(content=[]).model.name == "cheap-tools"


def test_decision_holds_a_copy() -> None:
    decision = route(override="premium")
    decision.model.capabilities.append("mutated")
    assert FLEET.get("premium") is not None
    assert "mutated" not in FLEET.get("premium").capabilities  # type: ignore[union-attr]


@pytest.mark.parametrize("override", ["premium", None], ids=["override", "routed"])
def test_the_copy_is_made_without_copy_deepcopy(
    monkeypatch: pytest.MonkeyPatch, override: str | None
) -> None:
    # model_copy(deep=True) ran copy.deepcopy (memo, __reduce_ex__) on every invoke; the
    # decision's copy is made by walking the model's values (riverbeam.types.deep_copy).
    deepcopies: list[str] = []
    monkeypatch.setattr(
        ModelConfig, "__deepcopy__", lambda self, memo=None: deepcopies.append(self.name)
    )
    decision = route(override=override)
    assert deepcopies == []
    listed = FLEET.get(decision.model.name)
    assert decision.model == listed and decision.model is not listed
    assert decision.model.capabilities is not listed.capabilities  # type: ignore[union-attr]
    assert decision.model.modalities is not listed.modalities  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("override", "agent"),
    [("premium", PLAIN), (None, PLAIN), (None, AgentMetadata(name="pinned", model="vision"))],
    ids=["override", "routed", "agent-model"],
)
def test_a_shared_model_decision_holds_the_configured_model(
    override: str | None, agent: AgentMetadata
) -> None:
    shared = ROUTER.resolve(
        content=TEXT, metadata=None, agent=agent, model_override=override, share_model=True
    )
    copied = ROUTER.resolve(content=TEXT, metadata=None, agent=agent, model_override=override)

    assert shared.model is FLEET.get(shared.model.name)
    assert copied.model is not shared.model
    # Only the model is shared: the same choice, for the same reason, among the same models.
    assert (shared.model, shared.reason, shared.candidates) == (
        copied.model,
        copied.reason,
        copied.candidates,
    )


def test_empty_override_routes() -> None:
    assert route(override="").reason is RoutingReason.COST


# ---- refusals -------------------------------------------------------------------------------


def test_unknown_override_is_bem_042() -> None:
    err = refused(override="gpt-9")
    assert err.code is ErrorCode.UNKNOWN_MODEL
    assert err.bem == "BEM-042"
    assert "gpt-9" in err.message
    assert err.details["field"] == "model_override"


def test_override_that_cannot_see_the_content_is_bem_041() -> None:
    err = refused(override="basic-a", content=IMAGE)
    assert err.code is ErrorCode.MODALITY_NOT_ROUTABLE
    assert "does not accept image content" in err.message


def test_override_without_required_capabilities_is_bem_043() -> None:
    err = refused(override="basic-a", metadata={"capabilities": ["code"]})
    assert err.code is ErrorCode.NO_MODEL_FOR_CAPABILITIES
    assert "['code']" in err.message


def test_override_wins_over_cost_and_tags() -> None:
    assert route(override="premium", agent=CODER).model.name == "premium"


@pytest.mark.parametrize("content", [IMAGE, AUDIO, [ContentPart(type="video", url="v")]])
def test_non_text_content_with_only_text_models_is_bem_041_at_routing(
    content: list[ContentPart],
) -> None:
    router = ModelRouter(ModelList.default())
    err = refused(router=router, content=content)
    assert err.code is ErrorCode.MODALITY_NOT_ROUTABLE
    assert err.bem == "BEM-041"
    assert "only text models are configured" in err.message


def test_file_parts_follow_their_mime_type() -> None:
    router = ModelRouter(ModelList.default())
    image_file = [ContentPart(type="file", data="x", mime_type="image/png")]
    assert refused(router=router, content=image_file).code is ErrorCode.MODALITY_NOT_ROUTABLE
    assert route(router=router, content=PDF).model.name == "riverbeam-default"


def test_no_model_takes_the_modalities_together() -> None:
    router = ModelRouter(
        [m("t"), m("i", modalities=["text", "image"]), m("a", modalities=["text", "audio"])]
    )
    err = refused(router=router, content=IMAGE_AND_AUDIO)
    assert err.code is ErrorCode.MODALITY_NOT_ROUTABLE
    assert "audio, image, text content together" in err.message


def test_unknown_capability_is_bem_043() -> None:
    err = refused(metadata={"capabilities": ["teleport"]})
    assert err.code is ErrorCode.NO_MODEL_FOR_CAPABILITIES
    assert err.bem == "BEM-043"


@pytest.mark.parametrize("value", ["vision", [1], {"vision": True}, [None]])
def test_malformed_capabilities_are_bem_002(value: Any) -> None:
    err = refused(metadata={"capabilities": value})
    assert err.code is ErrorCode.INVALID_ARGUMENT
    assert err.details["field"] == "metadata.capabilities"


def test_router_accepts_a_plain_iterable_and_validates_it() -> None:
    assert ModelRouter([m("x")]).models.names() == ["x"]
    with pytest.raises(RiverbeamError) as info:
        ModelRouter([m("x"), m("x")])
    assert info.value.code is ErrorCode.MODEL_LIST_INVALID


# ---- the worked example of docs/routing.md --------------------------------------------------


def docs_router() -> ModelRouter:
    doc = Path(__file__).parents[3] / "docs" / "routing.md"
    example = doc.read_text().split("```yaml\n", 1)[1].split("```", 1)[0]
    return ModelRouter(ModelList.from_data(yaml.safe_load(example), source="docs/routing.md"))


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ("small", RoutingReason.LIST_ORDER)),
        ({"override": "coder"}, ("coder", RoutingReason.OVERRIDE)),
        ({"content": IMAGE}, ("vision", RoutingReason.MODALITIES)),
        ({"metadata": {"capabilities": ["code"]}}, ("coder", RoutingReason.CAPABILITIES)),
        ({"agent": AgentMetadata(name="a", tags=["code"])}, ("coder", RoutingReason.AGENT_TAGS)),
        ({"agent": AgentMetadata(name="a", tags=["poetry"])}, ("small", RoutingReason.LIST_ORDER)),
        ({"content": AUDIO}, ErrorCode.MODALITY_NOT_ROUTABLE),
        ({"metadata": {"capabilities": ["teleport"]}}, ErrorCode.NO_MODEL_FOR_CAPABILITIES),
        ({"content": IMAGE, "override": "small"}, ErrorCode.MODALITY_NOT_ROUTABLE),
    ],
)
def test_docs_example_table(kwargs: dict[str, Any], expected: Any) -> None:
    router = docs_router()
    if isinstance(expected, ErrorCode):
        with pytest.raises(RiverbeamError) as info:
            route(router=router, **kwargs)
        assert info.value.code is expected
    else:
        decision = route(router=router, **kwargs)
        assert (decision.model.name, decision.reason) == expected


def test_the_agents_own_model_is_taken_when_the_request_names_none() -> None:
    from riverbeam.routing import ModelRouter, RoutingReason
    from riverbeam.types import AgentMetadata, ContentPart, ModelConfig

    router = ModelRouter(
        [
            ModelConfig(name="cheap", provider="custom", cost_per_1k_tokens=0.1),
            ModelConfig(name="smart", provider="custom", cost_per_1k_tokens=9.0),
        ]
    )
    agent = AgentMetadata(name="writer", model="smart")
    content = [ContentPart.of_text("hi")]
    decision = router.resolve(content=content, metadata=None, agent=agent)
    assert (decision.model.name, decision.reason) == ("smart", RoutingReason.AGENT_MODEL)
    # An explicit override still wins.
    decision = router.resolve(content=content, metadata=None, agent=agent, model_override="cheap")
    assert decision.model.name == "cheap"


def test_an_agent_model_the_list_lacks_is_bem_042_naming_the_agent() -> None:
    import pytest

    from riverbeam.core.errors import ErrorCode, RiverbeamError
    from riverbeam.routing import ModelRouter
    from riverbeam.types import AgentMetadata, ContentPart, ModelConfig

    router = ModelRouter([ModelConfig(name="cheap", provider="custom")])
    with pytest.raises(RiverbeamError) as info:
        router.resolve(
            content=[ContentPart.of_text("hi")],
            metadata=None,
            agent=AgentMetadata(name="writer", model="gone"),
        )
    assert info.value.code is ErrorCode.UNKNOWN_MODEL
    assert "writer" in info.value.message and info.value.details["field"] == "agent.model"
