"""The agent modality check (BEM-040)."""

from __future__ import annotations

import pytest

from riverbeam.core.errors import ErrorCode, RiverbeamError
from riverbeam.routing import check_agent_accepts
from riverbeam.types import AgentMetadata, ContentPart

TEXT_AGENT = AgentMetadata(name="kb-assistant")
VISION_AGENT = AgentMetadata(name="looker", supported_modalities=["text", "image"])


@pytest.mark.parametrize(
    "content",
    [
        [],
        [ContentPart.of_text("hi")],
        [ContentPart(type="reasoning", text="hmm")],
        [ContentPart(type="file", data="x", mime_type="application/pdf")],
        [ContentPart(type="media_ref", media_id="9c1b2d3e-4f50-4a61-8273-849506172839")],
    ],
)
def test_text_content_is_accepted_by_a_text_agent(content: list[ContentPart]) -> None:
    check_agent_accepts(TEXT_AGENT, content)


@pytest.mark.parametrize(
    ("part", "modality"),
    [
        (ContentPart(type="image_url", url="https://x/y.png"), "image"),
        (ContentPart(type="image_base64", data="AAAA"), "image"),
        (ContentPart(type="audio", data="AAAA"), "audio"),
        (ContentPart(type="video", url="v"), "video"),
        (ContentPart(type="file", data="x", mime_type="audio/wav"), "audio"),
        (ContentPart(type="media_ref", mime_type="Video/MP4"), "video"),
    ],
)
def test_other_modalities_are_bem_040(part: ContentPart, modality: str) -> None:
    with pytest.raises(RiverbeamError) as info:
        check_agent_accepts(TEXT_AGENT, [ContentPart.of_text("look"), part])
    err = info.value
    assert err.code is ErrorCode.MODALITY_NOT_SUPPORTED
    assert err.bem == "BEM-040"
    assert f"does not accept {modality} content" in err.message
    assert "it accepts text" in err.message
    assert err.details == {"field": "content", "agent_name": "kb-assistant"}


def test_an_agent_listing_the_modality_accepts_it() -> None:
    check_agent_accepts(VISION_AGENT, [ContentPart(type="image_url", url="u")])
    with pytest.raises(RiverbeamError) as info:
        check_agent_accepts(
            VISION_AGENT,
            [ContentPart(type="image_url", url="u"), ContentPart(type="audio", data="A")],
        )
    assert "does not accept audio content" in info.value.message


def test_several_unsupported_modalities_are_all_named() -> None:
    with pytest.raises(RiverbeamError) as info:
        check_agent_accepts(
            TEXT_AGENT, [ContentPart(type="video", url="v"), ContentPart(type="audio", data="A")]
        )
    assert "does not accept audio, video content" in info.value.message
