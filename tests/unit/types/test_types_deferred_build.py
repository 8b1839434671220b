"""Wire models build their validator and serializer on first use (defer_build, issue 16).

A fresh interpreter imports riverbeam.types with no model built; the first parse, dump and
protobuf round trip of each model must then behave exactly as a built model's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent(
    """
    import json, sys
    import riverbeam.types as t

    models = [getattr(t, name) for name in t.__all__]
    models = [m for m in models if isinstance(m, type) and issubclass(m, t.WireModel)]
    built_at_import = sorted(m.__name__ for m in models if m.__pydantic_complete__)

    request = t.InvokeRequest.parse(json.loads(sys.argv[1]))
    back = t.InvokeRequest.from_proto(request.to_proto())
    from_text = t.InvokeRequest.parse(request.to_json())
    try:
        t.InvokeRequest.parse({"agent_name": "a", "content": [], "session_id": "nope"})
        refused = None
    except Exception as exc:
        refused = getattr(exc, "bem", type(exc).__name__)
    print(json.dumps({
        "models": len(models),
        "built_at_import": built_at_import,
        "json": request.to_json_dict(),
        "same": back == request and from_text == request,
        "refused": refused,
        "built_now": t.InvokeRequest.__pydantic_complete__,
    }))
    """
)

REQUEST = {
    "agent_name": "assistant",
    "session_id": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "content": [{"type": "text", "text": "hello"}],
    "metadata": {"k": "v"},
}


def test_models_build_on_first_use_and_behave_as_built_ones() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(REQUEST)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["models"] > 20
    assert out["built_at_import"] == []
    assert out["json"] == {**REQUEST, "stream": False}  # stream is always shown
    assert out["same"] is True
    assert out["refused"] == "BEM-010"  # INVALID_UUID, through the deferred validator
    assert out["built_now"] is True
