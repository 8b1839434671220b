"""`riverbeam invoke`: streamed and waited-for runs, --json, interruptions, errors, exit codes."""

from __future__ import annotations

import json
import uuid

import pytest

from riverbeam.types import StreamChunk
from services.cli._errors import ExitCode
from tests.unit.cli.cli_harness import Cli
from tests.unit.client.fake_router import INTERACTION_WAITING, SESSION


def test_invoke_streams_frames_as_they_come(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hello")
    assert result.exit_code == ExitCode.OK, result.output
    out = result.stdout
    assert "thinking…" in out
    assert '→ tool write_file {"path": "notes.md"}' in out
    assert '← write_file {"ok": true}' in out
    assert "Hello world\n" in out  # the chunks, on one line
    assert out.count("Hello world") == 1  # not printed again from the done frame
    assert "tokens 12 in · 5 out · 17 total · model echo-1 · 1.2s" in out
    sent = cli.fake.invokes[-1]
    assert sent.stream is True
    assert f"session {sent.session_id}" in result.output
    # the tool call shows before the text that follows it
    assert out.index("→ tool write_file") < out.index("Hello world")


def test_invoke_continues_a_session(cli: Cli) -> None:
    result = cli("invoke", "assistant", "again", "--session", SESSION)
    assert result.exit_code == ExitCode.OK
    assert cli.fake.invokes[-1].session_id == SESSION
    assert f"--session {SESSION}" in result.stdout


def test_invoke_no_stream_prints_the_result(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hello", "--no-stream")
    assert result.exit_code == ExitCode.OK, result.output
    assert cli.fake.invokes[-1].stream is False
    assert "Hello world" in result.stdout
    assert '→ tool write_file {"path": "notes.md"}' in result.stdout
    assert "17 total" in result.stdout
    assert not any(name == "FollowStream" for name, _ in cli.fake.calls)


def test_invoke_json_prints_frames_as_json_lines(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hello", "--json")
    assert result.exit_code == ExitCode.OK
    lines = result.stdout.splitlines()
    frames = [StreamChunk.parse(line) for line in lines]  # stdout holds nothing else
    assert [f.seq for f in frames] == list(range(1, 8))
    assert frames[-1].type == "done"
    assert lines[-1] == frames[-1].to_json()
    assert "session" in result.stderr


def test_invoke_no_stream_json_prints_the_result(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hello", "--json", "--no-stream")
    assert result.exit_code == ExitCode.OK
    body = json.loads(result.stdout)
    assert body["agent_name"] == "assistant"
    assert body["content"] == [{"type": "text", "text": "Hello world"}]


def test_interrupted_run_shows_the_approve_command(cli: Cli) -> None:
    result = cli("invoke", "author", "push it", "--session", SESSION)
    assert result.exit_code == ExitCode.INTERRUPTED
    out = result.stdout
    assert '→ tool git_push {"ref": "docs/update"}' in out
    assert "waiting for approval" in out
    assert "9c1b2d3e-4f50-4a61-8273-849506172839" in out
    assert f"riverbeam approve {INTERACTION_WAITING} --session {SESSION}" in out
    assert f"riverbeam decline {INTERACTION_WAITING} --session {SESSION}" in out


def test_interrupted_json_keeps_stdout_for_json(cli: Cli) -> None:
    result = cli("invoke", "author", "push it", "--session", SESSION, "--json")
    assert result.exit_code == ExitCode.INTERRUPTED
    for line in result.stdout.splitlines():
        StreamChunk.parse(line)
    assert f"riverbeam approve {INTERACTION_WAITING} --session {SESSION}" in result.stderr


def test_error_frame_fails_the_run(cli: Cli) -> None:
    result = cli("invoke", "broken", "hello")
    assert result.exit_code == ExitCode.RUN_FAILED
    assert "Let me" in result.stdout
    assert "error BEM-087: agent reported an error: boom" in result.stderr


def test_unknown_agent_shows_code_and_hint(cli: Cli) -> None:
    result = cli("invoke", "missing", "hello")
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-020: agent 'missing' is not registered" in result.stderr
    assert "hint: list agents with `riverbeam agents`" in result.stderr


def test_metadata_is_sent(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--metadata", '{"ticket": 7}', "--no-stream")
    assert result.exit_code == ExitCode.OK
    assert cli.fake.invokes[-1].metadata == {"ticket": 7}


def test_bad_metadata_is_a_usage_error(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--metadata", "[1, 2]")
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-016: --metadata must be a JSON object" in result.stderr
    assert cli.fake.invokes == []


def test_bad_session_is_a_usage_error(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--session", "nope")
    assert result.exit_code == ExitCode.USAGE
    assert "error BEM-010" in result.stderr


def test_text_from_stdin(cli: Cli) -> None:
    result = cli("invoke", "assistant", "-", "--no-stream", input="from a pipe\n")
    assert result.exit_code == ExitCode.OK
    assert cli.fake.invokes[-1].content[0].text == "from a pipe\n"


def test_token_from_flag_and_env(cli: Cli) -> None:
    cli.fake.token = "t0k"
    denied = cli("agents")
    assert denied.exit_code == ExitCode.USAGE
    assert "error BEM-050" in denied.stderr
    assert "hint: pass --token or set RIVERBEAM_TOKEN" in denied.stderr
    assert cli("agents", "--token", "t0k").exit_code == ExitCode.OK
    assert cli.fake.authorizations[-1] == "Bearer t0k"
    cli.env["RIVERBEAM_TOKEN"] = "t0k"
    assert cli("agents").exit_code == ExitCode.OK


def test_unreachable_router_is_exit_5(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--router", "127.0.0.1:1")
    assert result.exit_code == ExitCode.UNAVAILABLE
    assert result.stderr.startswith("error BEM-")
    assert "cannot reach the router at 127.0.0.1:1" in result.stderr
    assert "riverbeam up" in result.stderr


def test_request_id_is_a_fresh_uuid_each_time(cli: Cli) -> None:
    cli("invoke", "assistant", "a")
    cli("invoke", "assistant", "b")
    streamed = [req.request.request_id for name, req in cli.fake.calls if name == "InvokeStream"]
    assert len(set(streamed)) == 2
    assert all(uuid.UUID(r) for r in streamed)
    # One call each: the ack and the frames both come on the InvokeStream.
    assert not any(name in ("Invoke", "FollowStream") for name, _ in cli.fake.calls)


def test_ctrl_c_while_following_says_how_to_pick_it_up(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.cli import _flows

    async def interrupted(
        client: object, consoles: object, progress: _flows.Progress, **_: object
    ) -> ExitCode:
        progress.request_id = "16d12ddc-651a-431d-997c-a756d5793ebf"
        progress.last_seq = 4
        raise KeyboardInterrupt

    monkeypatch.setattr(_flows, "invoke", interrupted)
    result = cli("invoke", "assistant", "hello")
    assert result.exit_code == ExitCode.INTERRUPTED_BY_USER
    assert "riverbeam follow 16d12ddc-651a-431d-997c-a756d5793ebf --after 4" in result.stderr


def test_invoke_sends_the_agent_layer_options(cli: Cli) -> None:
    schema = '{"type": "object", "required": ["n"]}'
    result = cli(
        "invoke",
        "assistant",
        "count",
        "--no-stream",
        "--schema",
        schema,
        "--time-limit",
        "30",
        "--token-budget",
        "5000",
        "--tool",
        "read_file",
        "--no-tool",
        "git_push",
        "--append",
        "Be brief.",
    )
    assert result.exit_code == ExitCode.OK, result.output
    sent = cli.fake.invokes[-1]
    assert sent.response_schema == {"type": "object", "required": ["n"]}
    assert sent.time_limit_s == 30 and sent.token_budget == 5000
    assert sent.turn_config is not None
    assert sent.turn_config.include_tools == ["read_file"]
    assert sent.turn_config.exclude_tools == ["git_push"]
    assert sent.turn_config.append_instructions == "Be brief."
    assert sent.session_config is None


def test_invoke_for_session_stores_the_configuration(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--no-stream", "--no-tool", "x", "--for-session")
    assert result.exit_code == ExitCode.OK, result.output
    sent = cli.fake.invokes[-1]
    assert sent.session_config is not None and sent.session_config.exclude_tools == ["x"]
    assert sent.turn_config is None


def test_invoke_refuses_a_schema_that_is_not_json(cli: Cli) -> None:
    result = cli("invoke", "assistant", "hi", "--schema", "{nope")
    assert result.exit_code != ExitCode.OK
    assert "BEM-016" in result.output
