"""The web console in real headless Chromium (Debian's, driven by Playwright) against the stack.

The browser is the system's /usr/bin/chromium, never one Playwright downloads. Where it is
missing the fixture installs it with apt-get when it can (root with apt), else skips these
tests with a message; with CI=true a missing browser is a failure.

The README's screenshot (docs/console.png) is taken here; it is rewritten only when missing or
when RIVERBEAM_UPDATE_SCREENSHOTS=1, so a test run leaves the tree clean.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pygit2
import pytest
import pytest_asyncio
from console_kit import ALICE_TOKEN, WRONG_TOKEN, ConsoleEnv

from tests.support.chat_server import call, text, tool_calls

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.nats,
    pytest.mark.postgres,
    pytest.mark.asyncio(loop_scope="package"),
]

SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "console.png"
TIMEOUT_MS = 60_000  # a guard against a hang, never an assertion about speed
# Each session pushes its own branch (a workspace per session, docs/isolation.md).
SESSION_BRANCHES = "refs/heads/riverbeam/s-"


@pytest_asyncio.fixture(loop_scope="package")
async def page(browser: object, console_env: ConsoleEnv) -> AsyncIterator[object]:
    context = await browser.new_context(viewport={"width": 1360, "height": 900})  # type: ignore[attr-defined]
    context.set_default_timeout(TIMEOUT_MS)
    page = await context.new_page()
    outside: list[str] = []
    page.on(
        "request",
        lambda request: (
            None
            if request.url.startswith(console_env.url) or request.url.startswith("data:")
            else outside.append(request.url)
        ),
    )
    await page.goto(console_env.url + "/")
    await page.wait_for_selector("body[data-ready=true]")
    try:
        yield page
    finally:
        await context.close()
    assert not outside, f"the console fetched from elsewhere: {outside}"


async def _sign_in(page: object, token: str) -> None:
    await page.fill("#token", token)  # type: ignore[attr-defined]
    await page.click("#sign-in")  # type: ignore[attr-defined]


async def _send(page: object, agent: str, prompt: str) -> None:
    await page.wait_for_selector(f"#agent option[value='{agent}']", state="attached")  # type: ignore[attr-defined]
    await page.select_option("#agent", agent)  # type: ignore[attr-defined]
    await page.fill("#prompt", prompt)  # type: ignore[attr-defined]
    await page.click("#send")  # type: ignore[attr-defined]


async def test_echo_agent_reply_and_frames(page: object) -> None:
    await _sign_in(page, ALICE_TOKEN)
    await page.wait_for_selector("#auth-mode:has-text('signed in')")  # type: ignore[attr-defined]
    await _send(page, "assistant", "hello browser")
    summary = await page.wait_for_selector("#summary .done-summary")  # type: ignore[attr-defined]
    assert "completed" in await summary.inner_text()
    assert await page.inner_text("#reply") == "Echo: hello browser"  # type: ignore[attr-defined]
    types = await page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#frames li .frame-type", "nodes => nodes.map(n => n.textContent)"
    )
    assert types[0] == "chunk" and types[-1] == "done", types
    seqs = await page.eval_on_selector_all("#frames li", "nodes => nodes.map(n => n.value)")  # type: ignore[attr-defined]
    assert seqs == list(range(1, len(seqs) + 1))
    # The token stays in this tab's sessionStorage, never in localStorage or a cookie.
    stored = await page.evaluate(  # type: ignore[attr-defined]
        "() => [sessionStorage.getItem('riverbeam.token'), localStorage.length, document.cookie]"
    )
    assert stored == [ALICE_TOKEN, 0, ""]


async def test_author_task_approved_in_the_inbox(
    page: object, console_env: ConsoleEnv, tmp_path: Path
) -> None:
    await console_env.chat.clear()
    await console_env.chat.push(
        tool_calls(
            [call("write_file", {"path": "notes/browser.md", "body": "from the browser\n"})],
            text="Writing it.",
        ),
        tool_calls([call("git_add", {"path": "notes/browser.md"})]),
        tool_calls([call("git_commit", {"message": "Add browser notes"})]),
        tool_calls([call("git_push", {})], text="Committed; may I push this session's branch?"),
        text("Pushed it."),
    )
    await _sign_in(page, ALICE_TOKEN)
    await page.click("#new-session")  # type: ignore[attr-defined]
    await _send(page, "author", "Add notes and publish them")
    summary = await page.wait_for_selector("#summary .done-summary")  # type: ignore[attr-defined]
    assert "interrupted" in await summary.inner_text()
    calls = await page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#tools .tool.call .name", "nodes => nodes.map(n => n.textContent)"
    )
    assert calls == ["write_file(…)", "git_add(…)", "git_commit(…)", "git_push(…)"]
    results = await page.eval_on_selector_all("#tools .tool.result", "nodes => nodes.length")  # type: ignore[attr-defined]
    assert results == 3  # the push waits for a person
    # The held push's call shows its preview in the playground too.
    held = await page.wait_for_selector("#tools .tool.call .preview .preview-summary")  # type: ignore[attr-defined]
    assert "commit" in await held.inner_text()
    await _screenshot(page, tmp_path)

    await page.click("[data-tab=inbox]")  # type: ignore[attr-defined]
    card = await page.wait_for_selector(".action-card[data-tool=git_push]")  # type: ignore[attr-defined]
    assert "git_push" in await card.inner_text()
    # The card shows what approving would push: the commit and the diff, additions marked.
    summary = await card.query_selector(".preview .preview-summary")  # type: ignore[attr-defined]
    assert "commit" in await summary.inner_text()
    assert (
        "Add browser notes" in await (await card.query_selector(".preview .commits")).inner_text()
    )  # type: ignore[attr-defined]
    added = await card.eval_on_selector_all(  # type: ignore[attr-defined]
        ".preview pre.diff .diff-add", "nodes => nodes.map(n => n.textContent)"
    )
    assert "+from the browser\n" in added, added
    # The refs before the approval: it must add exactly one session branch (other tests of this
    # stack push theirs too).
    before = set(pygit2.Repository(str(console_env.origin)).references)
    approve = await card.query_selector("button.approve")  # type: ignore[attr-defined]
    await approve.click()
    done = await page.wait_for_selector(".action-card .done-summary")  # type: ignore[attr-defined]
    assert "completed" in await done.inner_text()
    assert "Pushed it." in await card.inner_text()
    # The answer and the resumed run's frames came on one call (ResumeStream).
    action_id = await card.get_attribute("data-action-id")  # type: ignore[attr-defined]
    log = console_env.stack.log_path("console").read_text()
    assert f"POST /v1/actions/{action_id}/approve/stream" in log
    origin = pygit2.Repository(str(console_env.origin))
    pushed = [r for r in set(origin.references) - before if r.startswith(SESSION_BRANCHES)]
    assert len(pushed) == 1, list(origin.references)
    ref = origin.references[pushed[0]]
    assert origin[ref.target].message.strip() == "Add browser notes"

    await page.click("[data-tab=runs]")  # type: ignore[attr-defined]
    await page.wait_for_selector("#runs-table tbody tr")  # type: ignore[attr-defined]
    statuses = await page.eval_on_selector_all(  # type: ignore[attr-defined]
        "#runs-table tbody tr td:nth-child(3)", "nodes => nodes.map(n => n.textContent)"
    )
    assert "interrupted" in statuses and "completed" in statuses, statuses

    await page.click("[data-tab=sessions]")  # type: ignore[attr-defined]
    await page.click("#load-session")  # type: ignore[attr-defined]
    action = await page.wait_for_selector("#session-tree li.action")  # type: ignore[attr-defined]
    assert "git_push" in await action.inner_text() and "resolved" in await action.inner_text()
    await page.click("#session-tree li.run >> nth=0 >> button.replay-frames")  # type: ignore[attr-defined]
    await page.wait_for_selector("#session-tree .replay li.frame-done")  # type: ignore[attr-defined]


async def test_a_wrong_token_shows_a_clear_error(page: object) -> None:
    await _sign_in(page, WRONG_TOKEN)
    problem = await page.wait_for_selector("#problem:not([hidden])")  # type: ignore[attr-defined]
    message = await problem.inner_text()
    assert "BEM-050" in message and "missing or invalid bearer token" in message, message
    assert not await page.is_hidden("#login")  # type: ignore[attr-defined]
    assert WRONG_TOKEN not in await page.content()  # type: ignore[attr-defined]


async def _screenshot(page: object, tmp_path: Path) -> None:
    update = os.environ.get("RIVERBEAM_UPDATE_SCREENSHOTS") == "1" or not SCREENSHOT.exists()
    target = SCREENSHOT if update else tmp_path / "console.png"
    await page.screenshot(path=str(target), full_page=False)  # type: ignore[attr-defined]
    assert target.stat().st_size > 10_000
