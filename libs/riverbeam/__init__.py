"""Riverbeam: an LLM agent runtime served as gRPC microservices.

`riverbeam.RiverBeam` is the whole runtime in one process (see riverbeam.runtime); it is
imported on first use, so `import riverbeam` stays light.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# gRPC's fork support restarts its poller in a forked child, and a child of
# `subprocess.Popen(preexec_fn=...)` that has closed the poller's descriptor aborts before it
# can exec (grpcio >= 1.81, grpc/grpc#43055): 1-2% of the processes `riverbeam up` starts with
# a death signal, and of the servers the tests start, died with SIGABRT. No Riverbeam process
# forks to go on using gRPC in the child, so it is off unless the environment says otherwise.
# gRPC reads it when it is first imported: here, before any module of ours imports it.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

__version__ = "0.1.0"
__all__ = ["RiverBeam", "__version__"]

if TYPE_CHECKING:
    from riverbeam.runtime import RiverBeam


def __getattr__(name: str) -> Any:
    if name == "RiverBeam":
        from riverbeam.runtime import RiverBeam

        return RiverBeam
    raise AttributeError(f"module 'riverbeam' has no attribute {name!r}")
