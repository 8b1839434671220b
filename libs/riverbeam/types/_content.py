"""Content parts and their modalities."""

from __future__ import annotations

from typing import Literal

from riverbeam.types._base import OptionalJsonObject, UUIDStr, WireModel
from riverbeam.v1 import types_pb2

__all__ = ["ContentPart", "ContentType", "Modality", "modalities_of"]

ContentType = Literal[
    "text", "image_url", "image_base64", "audio", "file", "video", "media_ref", "reasoning"
]
Modality = Literal["text", "image", "audio", "video"]

_FIXED: dict[str, Modality] = {
    "text": "text",
    "reasoning": "text",
    "image_url": "image",
    "image_base64": "image",
    "audio": "audio",
    "video": "video",
}


class ContentPart(WireModel):
    """One part of a turn: {"type": "text", "text": "hello"}."""

    _proto = types_pb2.ContentPart

    type: ContentType
    text: str | None = None
    url: str | None = None
    data: str | None = None
    mime_type: str | None = None
    media_id: UUIDStr | None = None
    metadata: OptionalJsonObject = None

    @classmethod
    def of_text(cls, text: str) -> ContentPart:
        """A text part."""
        return cls(type="text", text=text)

    @property
    def modality(self) -> Modality:
        """text and reasoning are text; file and media_ref follow their mime_type prefix."""
        fixed = _FIXED.get(self.type)
        if fixed is not None:
            return fixed
        mime = (self.mime_type or "").lower()
        for prefix, modality in (("image/", "image"), ("audio/", "audio"), ("video/", "video")):
            if mime.startswith(prefix):
                return modality  # type: ignore[return-value]
        return "text"


def modalities_of(parts: list[ContentPart]) -> set[Modality]:
    """The set of modalities a turn uses."""
    return {p.modality for p in parts}
