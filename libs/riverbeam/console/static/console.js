// Riverbeam web console: a small ES module over the console's HTTP API (same origin).
// Nothing is fetched from anywhere else. The bearer token lives in sessionStorage only.

const TOKEN_KEY = "riverbeam.token";
const SESSIONS_KEY = "riverbeam.sessions";
const RUNS_KEY = "riverbeam.runs";
const TRACES_KEY = "riverbeam.traces";  // run id -> trace id (x-trace-id, when tracing is on)
let lastTraceId = null;
const $ = (id) => document.getElementById(id);

// ---- DOM ---------------------------------------------------------------------------------------
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
const json = (value) => JSON.stringify(value, null, 2);
const short = (id) => (id ? String(id).slice(0, 8) : "-");
const status = (value) => el("span", { class: `status-${value}` }, value);

// ---- storage -----------------------------------------------------------------------------------
function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
function remembered(key) {
  try { return JSON.parse(sessionStorage.getItem(key) || "[]"); } catch { return []; }
}
function remember(key, value) {
  const list = remembered(key).filter((v) => v !== value);
  list.unshift(value);
  sessionStorage.setItem(key, JSON.stringify(list.slice(0, 50)));
}

// ---- problems ----------------------------------------------------------------------------------
class Problem extends Error {
  constructor(doc) {
    super(`${doc.code || ""} ${doc.title || "error"}: ${doc.detail || ""}`.trim());
    this.doc = doc;
  }
}
function showProblem(err) {
  const doc = err instanceof Problem ? err.doc
    : { code: "", title: "the console could not be reached", detail: String(err && err.message || err) };
  $("problem-title").textContent = `${doc.code ? doc.code + " " : ""}${doc.title}`;
  $("problem-detail").textContent = doc.detail ? `: ${doc.detail}` : "";
  $("problem-hint").textContent = doc.hint || "";
  $("problem").hidden = false;
  if (doc.status === 401) $("login").hidden = false;
}
function clearProblem() { $("problem").hidden = true; }

// ---- HTTP --------------------------------------------------------------------------------------
function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  if (token()) out.Authorization = `Bearer ${token()}`;
  return out;
}
async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  lastTraceId = response.headers.get("x-trace-id");
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Problem(data || { title: response.statusText, status: response.status });
  return data;
}

// Reads a text/event-stream response: onEvent(event, payload, id) for each event with data;
// `event: problem` is thrown as a Problem. Resolves true once a terminal frame was read.
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let terminal = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return terminal;
    buffer += value.replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = { event: "message", data: [], id: null };
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const data = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") event.data.push(data);
        else if (field === "event") event.event = data;
        else if (field === "id") event.id = data;
      }
      if (!event.data.length) continue;
      const payload = JSON.parse(event.data.join("\n"));
      if (event.event === "problem") throw new Problem(payload);
      onEvent(event.event, payload, event.id);
      if (event.event === "message" && (payload.type === "done" || payload.type === "error")) terminal = true;
    }
  }
}

// Follows GET /v1/requests/{id}/frames (SSE) with fetch, so the token can be sent as a header.
// Calls onFrame for each frame; resolves after the terminal frame; reconnects with Last-Event-ID.
async function followFrames(requestId, onFrame, { afterSeq = 0, signal } = {}) {
  let last = afterSeq;
  for (let attempt = 0; attempt < 4; attempt++) {
    const extra = { Accept: "text/event-stream" };
    if (last > 0) extra["Last-Event-ID"] = String(last);
    const response = await fetch(`/v1/requests/${encodeURIComponent(requestId)}/frames`, { headers: headers(extra), signal });
    if (response.status === 204) return;
    if (!response.ok) throw new Problem(await response.json());
    const terminal = await readEvents(response, (_event, frame, id) => {
      if (id) last = Number(id);
      onFrame(frame);
    });
    if (terminal) return;
  }
  throw new Problem({ code: "BEM-086", title: "stream ended without a done frame", detail: requestId });
}

// POSTs to an endpoint answering `event: ack`, then frames (/v1/invoke/stream, /v1/resume/stream,
// /v1/actions/{id}/{verb}/stream). Calls onAck, then onFrame for each frame; a stream that
// breaks before its terminal frame is followed on from the last frame read.
async function postStream(path, body, onAck, onFrame) {
  const response = await fetch(path, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(body),
  });
  lastTraceId = response.headers.get("x-trace-id");
  if (!response.ok) throw new Problem(await response.json());
  let ack = null;
  let last = 0;
  const terminal = await readEvents(response, (event, payload, id) => {
    if (event === "ack") {
      ack = payload;
      onAck(payload);
      return;
    }
    if (id) last = Number(id);
    onFrame(payload);
  });
  if (terminal) return ack;
  if (ack === null) throw new Problem({ code: "BEM-086", title: "stream ended before its ack", detail: path });
  await followFrames(ack.request_id, onFrame, { afterSeq: last });
  return ack;
}

// ---- frame rendering (shared by the playground, the inbox and replays) --------------------------
class FrameView {
  constructor({ reply, tools, summary, frames, count }) {
    Object.assign(this, { reply, tools, summary, frames, count, n: 0, text: "", toolRows: new Map() });
  }
  reset() {
    for (const node of [this.reply, this.tools, this.summary, this.frames]) if (node) node.replaceChildren();
    this.n = 0; this.text = ""; this.afterTool = false; this.toolRows.clear();
    if (this.count) this.count.textContent = "";
  }
  add(frame) {
    this.n += 1;
    if (this.count) this.count.textContent = `(${this.n})`;
    if (this.frames) {
      this.frames.append(el("li", { value: frame.seq, class: `frame frame-${frame.type}` },
        el("details", {}, el("summary", {}, el("span", { class: "frame-type" }, frame.type), " ", frameLabel(frame)),
          el("pre", {}, json(frame)))));
    }
    const data = frame.data || {};
    if (frame.parent_run_id) return;  // a child run's frame: listed above, not the reply
    if (frame.type === "chunk") {
      if (this.afterTool && this.text) this.text += "\n\n";  // a new model turn after tools
      this.afterTool = false;
      for (const part of data.content || []) if (part.text) this.text += part.text;
      if (this.reply) this.reply.textContent = this.text;
    } else if (frame.type === "tool" && this.tools) {
      this.afterTool = true;
      if (data.role === "tool") {
        const row = this.toolRows.get(data.tool_call_id);
        const result = el("div", { class: "tool result" }, el("span", { class: "name" }, `${data.tool_name} →`), el("pre", {}, json(data.tool_result)));
        if (row) row.after(result); else this.tools.append(result);
      } else {
        const row = el("div", { class: "tool call" }, el("span", { class: "name" }, `${data.tool_name}(…)`), el("pre", {}, json(data.tool_args || {})),
          data.preview ? previewView(data.preview) : null);  // a held call: what approving would do
        this.toolRows.set(data.tool_call_id, row);
        this.tools.append(row);
      }
    } else if (frame.type === "done") {
      const result = frame.result || {};
      if (!this.text && this.reply) {
        this.text = (result.content || []).map((p) => p.text || "").join("");
        this.reply.textContent = this.text;
      }
      const usage = result.token_usage;
      const parts = [
        result.interrupted ? status("interrupted") : status("completed"),
        ` · model ${result.model_used || "-"}`,
        usage ? ` · ${usage.total_tokens} tokens (${usage.prompt_tokens} in, ${usage.completion_tokens} out)` : "",
      ];
      if (result.interrupted) parts.push(` · ${(result.action_required || []).length} action(s) waiting in the inbox`);
      this.summary && this.summary.replaceChildren(el("span", { class: "done-summary" }, ...parts));
    } else if (frame.type === "error") {
      this.summary && this.summary.replaceChildren(el("span", { class: "error-summary" }, status("failed"), ` · ${frame.error_code || ""} ${frame.error || ""}`));
    }
  }
}
function frameLabel(frame) {
  const data = frame.data || {};
  if (frame.type === "chunk") return `#${frame.seq} ${JSON.stringify((data.content || []).map((p) => p.text || "").join(""))}`;
  if (frame.type === "tool") return `#${frame.seq} ${data.role === "tool" ? "result of" : "call"} ${data.tool_name}`;
  if (frame.type === "error") return `#${frame.seq} ${frame.error_code || ""}`;
  return `#${frame.seq}`;
}

// ---- auth --------------------------------------------------------------------------------------
function renderAuth() {
  const has = Boolean(token());
  $("auth-mode").textContent = has ? "signed in (token in this tab)" : "dev mode: no token sent";
  $("sign-out").hidden = !has;
  $("login").hidden = has;
}
async function signIn(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
  renderAuth();
  clearProblem();
  try {
    await loadAgents();
    refreshInboxCount();
  } catch (err) {
    showProblem(err);
  }
}

// ---- playground --------------------------------------------------------------------------------
let sessionId = sessionStorage.getItem("riverbeam.current-session") || crypto.randomUUID();
let running = null;
const view = new FrameView({ reply: $("reply"), tools: $("tools"), summary: $("summary"), frames: $("frames"), count: $("frame-count") });

function setSession(id) {
  sessionId = id;
  sessionStorage.setItem("riverbeam.current-session", id);
  $("session-id").textContent = id;
}
async function loadAgents() {
  const { agents } = await api("GET", "/v1/agents");
  const select = $("agent");
  const current = select.value;
  select.replaceChildren(...agents.map((a) => el("option", { value: a.name, title: a.description || "" }, a.name)));
  if (agents.some((a) => a.name === current)) select.value = current;
  return agents;
}
async function invoke(event) {
  event.preventDefault();
  clearProblem();
  const prompt = $("prompt").value;
  if (!prompt.trim()) return;
  view.reset();
  $("send").disabled = true;
  $("run-state").textContent = "starting…";
  const controller = new AbortController();
  try {
    const ack = await api("POST", "/v1/invoke", { agent_name: $("agent").value, content: prompt, session_id: sessionId, stream: true });
    const traceId = lastTraceId;
    remember(SESSIONS_KEY, ack.session_id);
    running = { ack, controller };
    $("cancel").hidden = false;
    $("run-state").replaceChildren("request ", el("code", {}, ack.request_id));
    await followFrames(ack.request_id, (frame) => {
      if (frame.run_id) rememberRun(frame.run_id, traceId);
      view.add(frame);
    }, { signal: controller.signal });
    $("prompt").value = "";
    refreshInboxCount();
  } catch (err) {
    if (err.name !== "AbortError") showProblem(err);
  } finally {
    running = null;
    $("send").disabled = false;
    $("cancel").hidden = true;
  }
}
async function cancelRun() {
  if (!running) return;
  try { await api("POST", `/v1/requests/${running.ack.request_id}/cancel`, { reason: "cancelled from the console" }); }
  catch (err) { showProblem(err); }
}

// ---- sessions ----------------------------------------------------------------------------------
async function allMessages(id) {
  const out = [];
  let pageToken = "";
  do {
    const page = await api("GET", `/v1/sessions/${id}/messages?page_size=200&page_token=${encodeURIComponent(pageToken)}`);
    out.push(...page.messages);
    pageToken = page.next_page_token;
  } while (pageToken);
  return out;
}
async function allPending(sessionFilter) {
  const out = [];
  let pageToken = "";
  do {
    const query = new URLSearchParams({ page_size: "200", page_token: pageToken });
    if (sessionFilter) query.set("session_id", sessionFilter);
    const page = await api("GET", `/v1/inbox?${query}`);
    out.push(...page.actions);
    pageToken = page.next_page_token;
  } while (pageToken);
  return out;
}
const unique = (values) => [...new Set(values.filter(Boolean))];
async function loadSession(id) {
  const session = await api("GET", `/v1/sessions/${id}`);
  const [messages, pending] = await Promise.all([allMessages(session.session_id), allPending(session.session_id)]);
  const runIds = unique([...messages.map((m) => m.run_id), ...pending.map((a) => a.run_id)]);
  const runs = Object.fromEntries(await Promise.all(runIds.map(async (r) => [r, await api("GET", `/v1/runs/${r}`)])));
  const interactionIds = unique([...messages.map((m) => m.interaction_id), ...pending.map((a) => a.interaction_id), ...Object.values(runs).map((r) => r.interaction_id)]);
  const interactions = await Promise.all(interactionIds.map((i) => api("GET", `/v1/interactions/${i}`)));
  const actions = Object.fromEntries(pending.map((a) => [a.action_id, a]));
  const asked = unique(Object.values(runs).flatMap((r) => ((r.result || {}).action_required || []).map((a) => a.action_id)));
  for (const a of await Promise.all(asked.filter((a) => !actions[a]).map((a) => api("GET", `/v1/actions/${a}`)))) actions[a.action_id] = a;
  for (const r of runIds) remember(RUNS_KEY, r);
  remember(SESSIONS_KEY, session.session_id);
  return { session, messages, runs: Object.values(runs), interactions, actions: Object.values(actions) };
}
function messageText(m) {
  const text = (m.content || []).map((p) => p.text || "").join("");
  if (text) return text.length > 160 ? text.slice(0, 160) + "…" : text;
  if (m.tool_name) return `${m.type} ${m.tool_name} ${JSON.stringify(m.tool_result ?? m.tool_args ?? "").slice(0, 120)}`;
  return m.type;
}
function renderTree({ session, messages, runs, interactions, actions }) {
  const byCreated = (a, b) => String(a.created_at || a.started_at).localeCompare(String(b.created_at || b.started_at));
  const runNode = (run) => {
    const replay = el("div", { class: "replay" });
    const replayView = new FrameView({ reply: null, tools: null, summary: null, frames: el("ol", { class: "frames" }) });
    const button = run.request_id ? el("button", { type: "button", class: "link replay-frames", onclick: async () => {
      replayView.reset();
      replay.replaceChildren(replayView.frames);
      try { await followFrames(run.request_id, (f) => replayView.add(f)); } catch (err) { showProblem(err); }
    } }, "replay frames") : null;
    const usage = run.token_usage ? ` · ${run.token_usage.total_tokens} tokens` : "";
    const error = run.error_code ? ` · ${run.error_code}: ${run.error_message || ""}` : "";
    return el("li", { class: "run", dataset: { runId: run.run_id } },
      el("span", { class: "label" }, "run"), el("code", {}, short(run.run_id)), " ", status(run.status),
      el("span", { class: "dim" }, ` · ${run.model_used || "-"}${usage}${error} `), button,
      el("ul", {},
        messages.filter((m) => m.run_id === run.run_id).sort((a, b) => a.seq - b.seq).map((m) =>
          el("li", { class: "message" }, el("span", { class: "label" }, `#${m.seq} ${m.role}`), messageText(m))),
        actions.filter((a) => a.run_id === run.run_id).sort(byCreated).map((a) =>
          el("li", { class: "action" }, el("span", { class: "label" }, "action"), el("code", {}, short(a.action_id)), ` ${a.tool} `,
            el("code", {}, JSON.stringify(a.args)), " ", status(a.status), a.outcome ? ` · ${a.outcome}` : "", a.error ? ` · ${a.error}` : ""))),
      replay);
  };
  const tree = el("ul", {},
    el("li", { class: "session" }, el("span", { class: "label" }, "session"), el("code", {}, session.session_id),
      el("span", { class: "dim" }, ` · user ${session.user_id || "-"} · ${session.last_seq} messages · last active ${session.last_active_at}`),
      el("ul", {}, interactions.sort(byCreated).map((i) =>
        el("li", { class: "interaction" }, el("span", { class: "label" }, "interaction"), el("code", {}, short(i.interaction_id)),
          ` ${i.agent_name} `, status(i.status),
          el("ul", {}, runs.filter((r) => r.interaction_id === i.interaction_id).sort(byCreated).map(runNode)))))));
  $("session-tree").replaceChildren(tree);
}
async function showSession(event) {
  if (event) event.preventDefault();
  clearProblem();
  const id = $("session-input").value.trim();
  if (!id) return;
  try { renderTree(await loadSession(id)); } catch (err) { showProblem(err); }
  renderKnownSessions();
}
function renderKnownSessions() {
  $("known-sessions").replaceChildren(...remembered(SESSIONS_KEY).slice(0, 8).map((id) =>
    el("button", { type: "button", class: "link known-session", onclick: () => { $("session-input").value = id; showSession(); } }, short(id))));
}

// ---- inbox -------------------------------------------------------------------------------------
function actionCard(action) {
  const out = el("div", { class: "action-output" });
  const answerView = new FrameView({ reply: el("div", { class: "reply" }), tools: el("div", { class: "tools" }), summary: el("div", { class: "summary" }), frames: null });
  const buttons = el("div", { class: "row" });
  const answer = async (verb) => {
    clearProblem();
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    out.replaceChildren(answerView.reply, answerView.tools, answerView.summary);
    try {
      // The answer and the resumed run's frames in one call (ResumeStream).
      let traceId = null;
      await postStream(
        `/v1/actions/${action.action_id}/${verb}/stream`,
        { reason: `${verb}d in the console` },
        () => {
          traceId = lastTraceId;
          state.replaceChildren(status(verb === "approve" ? "approved" : "declined"));
        },
        (frame) => {
          if (frame.run_id) rememberRun(frame.run_id, traceId);
          answerView.add(frame);
        },
      );
      refreshInboxCount();
    } catch (err) {
      showProblem(err);
      for (const b of buttons.querySelectorAll("button")) b.disabled = false;
    }
  };
  buttons.append(
    el("button", { type: "button", class: "approve", onclick: () => answer("approve") }, "Approve"),
    el("button", { type: "button", class: "decline", onclick: () => answer("decline") }, "Decline"));
  const state = el("span", { class: "state" }, status(action.status));
  const preview = action.preview ?? (action.args || {}).preview;
  return el("div", { class: "card action-card", dataset: { actionId: action.action_id, tool: action.tool } },
    el("div", { class: "head" }, el("strong", { class: "tool-name" }, action.tool), state,
      el("span", { class: "dim" }, `${action.agent_name || ""} · session ${short(action.session_id)} · interaction ${short(action.interaction_id)} · ${action.created_at}`)),
    el("div", {}, el("span", { class: "dim" }, "arguments"), el("pre", { class: "args" }, json(action.args || {}))),
    preview !== undefined && preview !== null ? previewView(preview) : null,
    buttons, out);
}
// What approving would do (the sandbox's preview): a summary, the commits a push would send,
// and the unified diff, each line classed so additions and removals stand out.
function previewView(preview) {
  if (typeof preview === "string") return el("div", { class: "preview" }, el("pre", {}, preview));
  const state = preview.state || {};
  const bound = state.head ? `head ${short(state.head)}` : state.blob ? `file ${state.blob === "absent" ? "absent" : short(state.blob)}` : "";
  const commits = (preview.commits || []).map((c) =>
    el("li", { class: "commit" }, el("code", {}, String(c.id || "").slice(0, 12)), " ", c.summary || "", el("span", { class: "dim" }, ` ${c.author || ""}`)));
  const lines = String(preview.diff || "").split("\n").map((line) => {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "diff-file"
      : line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del"
      : line.startsWith("@@") ? "diff-hunk" : line.startsWith("[... preview truncated") ? "diff-cut" : "";
    return el("span", { class: kind }, `${line}\n`);
  });
  return el("div", { class: "preview", dataset: { tool: preview.tool || "" } },
    el("div", {}, el("span", { class: "dim" }, "preview "), el("strong", { class: "preview-summary" }, preview.summary || preview.tool),
      bound ? el("span", { class: "dim" }, ` · approval bound to ${bound}`) : null),
    commits.length ? el("ul", { class: "commits" }, ...commits) : null,
    preview.diff ? el("pre", { class: "diff" }, ...lines) : null,
    preview.truncated ? el("div", { class: "dim" }, `diff cut at the preview limit (${preview.diff_bytes} bytes in all)`) : null);
}
async function refreshInbox() {
  clearProblem();
  try {
    const actions = await allPending();
    $("inbox-list").replaceChildren(...(actions.length ? actions.map(actionCard) : [el("div", { class: "card dim empty" }, "No pending actions.")]));
    setInboxCount(actions.length);
  } catch (err) { showProblem(err); }
}
function setInboxCount(n) { $("inbox-count").hidden = !n; $("inbox-count").textContent = String(n); }
async function refreshInboxCount() { try { setInboxCount((await allPending()).length); } catch { /* shown elsewhere */ } }

// ---- runs --------------------------------------------------------------------------------------
function rememberRun(runId, traceId) {
  remember(RUNS_KEY, runId);
  if (!traceId) return;
  const traces = JSON.parse(sessionStorage.getItem(TRACES_KEY) || "{}");
  traces[runId] = traceId;
  sessionStorage.setItem(TRACES_KEY, JSON.stringify(traces));
}
function traceId(run) {
  const traces = JSON.parse(sessionStorage.getItem(TRACES_KEY) || "{}");
  const metadata = (run.result || {}).metadata || {};
  return traces[run.run_id] || metadata.trace_id || null;
}
async function refreshRuns() {
  clearProblem();
  const ids = remembered(RUNS_KEY);
  try {
    // A run this token may not read (another sign-in in this tab) is left out, not an error.
    const runs = (await Promise.all(ids.map((id) => api("GET", `/v1/runs/${id}`).catch((err) => {
      if (err instanceof Problem && err.doc.status === 404) return null;
      throw err;
    })))).filter(Boolean);
    $("runs-table").tBodies[0].replaceChildren(...runs.map((run) => {
      const calls = ((run.result || {}).tool_calls || []).map((c) => c.tool_name);
      const usage = run.token_usage ? `${run.token_usage.total_tokens} (${run.token_usage.prompt_tokens}+${run.token_usage.completion_tokens})` : "-";
      const trace = traceId(run);
      return el("tr", { dataset: { runId: run.run_id } },
        el("td", {}, el("code", {}, short(run.run_id))), el("td", {}, run.agent_name), el("td", {}, status(run.status)),
        el("td", {}, run.model_used || "-"), el("td", {}, usage), el("td", {}, calls.join(", ") || "-"),
        el("td", { class: "error-code" }, run.error_code ? `${run.error_code}: ${run.error_message || ""}` : "-"),
        el("td", {}, trace ? el("code", {}, trace) : el("span", { class: "dim" }, "tracing off")));
    }));
  } catch (err) { showProblem(err); }
}

// ---- tabs and start-up -------------------------------------------------------------------------
function showTab(name) {
  for (const tab of document.querySelectorAll("#tabs [data-tab]")) tab.classList.toggle("active", tab.dataset.tab === name);
  for (const id of ["playground", "sessions", "inbox", "runs"]) $(id).hidden = id !== name;
  if (name === "inbox") refreshInbox();
  if (name === "runs") refreshRuns();
  if (name === "sessions") { renderKnownSessions(); if (!$("session-input").value) $("session-input").value = sessionId; }
}

function start() {
  for (const tab of document.querySelectorAll("#tabs [data-tab]")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  $("login-form").addEventListener("submit", (e) => { e.preventDefault(); signIn($("token").value.trim()); $("token").value = ""; });
  $("sign-out").addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); renderAuth(); $("login").hidden = false; });
  $("problem-close").addEventListener("click", clearProblem);
  $("invoke-form").addEventListener("submit", invoke);
  $("cancel").addEventListener("click", cancelRun);
  $("new-session").addEventListener("click", () => { setSession(crypto.randomUUID()); view.reset(); });
  $("session-form").addEventListener("submit", showSession);
  $("refresh-inbox").addEventListener("click", refreshInbox);
  $("refresh-runs").addEventListener("click", refreshRuns);
  setSession(sessionId);
  renderAuth();
  loadAgents().then(() => { refreshInboxCount(); document.body.dataset.ready = "true"; })
    .catch((err) => { showProblem(err); document.body.dataset.ready = "true"; });
}
start();
