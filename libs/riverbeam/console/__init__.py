"""The console: Riverbeam's HTTP/JSON API, SSE frames, `POST /chat` and the web console.

    from riverbeam.console import create_app
    app = create_app(ConsoleSettings(router_url="127.0.0.1:50051"))

A gRPC client of the router and nothing more: every endpoint is one SDK call with the caller's
bearer token, so authentication, sanitising and ownership stay in the router.
"""

from riverbeam.console._app import STATIC_DIR, create_app, swagger_assets
from riverbeam.console._chat import UI_STREAM_HEADERS, ChatTranslator, chat_session_id
from riverbeam.console._problem import PROBLEM_MEDIA_TYPE, Problem, problem_of, problem_response

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "STATIC_DIR",
    "UI_STREAM_HEADERS",
    "ChatTranslator",
    "Problem",
    "chat_session_id",
    "create_app",
    "problem_of",
    "problem_response",
    "swagger_assets",
]
