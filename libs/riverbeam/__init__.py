"""Riverbeam: an LLM agent runtime served as gRPC microservices.

`riverbeam.RiverBeam` is the whole runtime in one process (see riverbeam.runtime); it is
imported on first use, so `import riverbeam` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["RiverBeam", "__version__"]

if TYPE_CHECKING:
    from riverbeam.runtime import RiverBeam


def __getattr__(name: str) -> Any:
    if name == "RiverBeam":
        from riverbeam.runtime import RiverBeam

        return RiverBeam
    raise AttributeError(f"module 'riverbeam' has no attribute {name!r}")
