"""ContentPart.modality: fixed for most types; file and media_ref follow their mime_type."""

from __future__ import annotations

from typing import get_args

import pytest

from riverbeam.types import ContentPart, ContentType, Modality, modalities_of

FIXED: dict[str, Modality] = {
    "text": "text",
    "reasoning": "text",
    "image_url": "image",
    "image_base64": "image",
    "audio": "audio",
    "video": "video",
}
BY_MIME = ("file", "media_ref")


def test_every_content_type_is_covered() -> None:
    assert set(get_args(ContentType)) == set(FIXED) | set(BY_MIME)


@pytest.mark.parametrize("content_type", sorted(FIXED))
def test_fixed_modality(content_type: str) -> None:
    part = ContentPart.parse({"type": content_type})
    assert part.modality == FIXED[content_type]
    # The mime type does not change a fixed modality.
    assert (
        ContentPart.parse({"type": content_type, "mime_type": "video/mp4"}).modality
        == (FIXED[content_type])
    )


@pytest.mark.parametrize("content_type", BY_MIME)
@pytest.mark.parametrize(
    ("mime_type", "modality"),
    [
        ("image/png", "image"),
        ("image/svg+xml", "image"),
        ("IMAGE/JPEG", "image"),
        ("audio/ogg", "audio"),
        ("audio/mpeg", "audio"),
        ("video/mp4", "video"),
        ("Video/WebM", "video"),
        ("text/markdown", "text"),
        ("application/pdf", "text"),
        ("application/octet-stream", "text"),
        ("image", "text"),  # a prefix needs its slash
        ("", "text"),
        (None, "text"),
    ],
)
def test_modality_follows_mime_prefix(
    content_type: str, mime_type: str | None, modality: Modality
) -> None:
    part = ContentPart.parse({"type": content_type, "mime_type": mime_type})
    assert part.modality == modality


def test_of_text() -> None:
    part = ContentPart.of_text("hello")
    assert part == ContentPart.parse({"type": "text", "text": "hello"})
    assert part.modality == "text"


def test_modalities_of_a_turn() -> None:
    parts = [
        ContentPart.of_text("look"),
        ContentPart(type="image_url", url="https://example.com/a.png"),
        ContentPart(type="file", mime_type="audio/wav"),
        ContentPart(type="media_ref", media_id="7d3f0a9e-2b4c-4d5e-8f60-718293a4b5c6"),
    ]
    assert modalities_of(parts) == {"text", "image", "audio"}
    assert modalities_of([]) == set()
