"""nats-py imported without aiohttp, which only its websocket transport uses.

nats-py's transport module imports aiohttp when it loads, whenever aiohttp is installed, for
the websocket transport a `ws://` or `wss://` server URL selects. A service on `nats://` never
uses it and yet carries it: 8-9 MiB of RSS in the router and the runner (aiohttp with yarl,
multidict, propcache and idna).

A service's entry point imports nats this way, first: the transport module then holds
`aiohttp = None`. NatsConnection binds aiohttp into it when one of its URLs is a websocket
one (riverbeam.stream), so such a URL works as before. It is the entry point's choice,
because hiding a module changes the process: a library importing riverbeam keeps nats-py as
it is.
"""

from __future__ import annotations

import importlib
import sys

_TRANSPORT = "nats.aio.transport"


def import_nats_without_aiohttp() -> bool:
    """Import nats-py's transport module with aiohttp hidden from it.

    Returns whether this did it: not when the module or aiohttp is imported already.
    """
    if _TRANSPORT in sys.modules or "aiohttp" in sys.modules:
        return False
    sys.modules["aiohttp"] = None  # type: ignore[assignment]  # `import aiohttp` fails
    try:
        importlib.import_module(_TRANSPORT)
    finally:
        if sys.modules.get("aiohttp", ...) is None:
            del sys.modules["aiohttp"]
    return True
