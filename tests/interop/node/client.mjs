#!/usr/bin/env node
// Riverbeam interop proof from Node.js: the public gRPC API (RiverbeamService) plus the
// request's frames read straight from NATS JetStream, checked against the gRPC relay.
//
//   node client.mjs --router 127.0.0.1:50051 --nats nats://127.0.0.1:4222 [--text "hello"]
//                   [--agent assistant] [--token T] [--timeout 30]
//
// It uses the TypeScript client package (clients/typescript, `@riverbeam/client`), as an
// application would: no stubs or status decoding of its own.
//
// Steps: ListAgents (the agent is listed); an unknown agent is refused with a RiverbeamError
// whose code (BEM-020), title and hint come from the rich status; Invoke with stream=true returns a StreamAck;
// the ack's subject is followed on JetStream (ordered consumer, deliver all) until the done
// frame, seq 1..n without gaps and the result text "Echo: <text>"; FollowStream (gRPC) for
// the same request gives the same (seq, type) list; InvokeStream on the same session gives its ack
// and then its frames in one call.
//
// Prints one JSON line on stdout: {"ok":true,"frames":N,"text":"Echo: ...","request_id":...}
// (or {"ok":false,"step":...,"error":...}). Exit 0 when every check passed; 1 when a check
// failed; 2 on a gRPC or NATS error (the summary then carries grpc_code and the BEM code);
// 3 when the whole run got stuck (watchdog).

import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";

// The TypeScript client package (clients/typescript, built with `npm ci && npm run build`).
import { RiverbeamClient, RiverbeamError, followNats, resultText } from "../../../clients/typescript/dist/index.js";

const TERMINAL = new Set(["done", "error"]);

// ---- command line ------------------------------------------------------------------------------
const { values: opts } = parseArgs({
  options: {
    router: { type: "string", default: process.env.RIVERBEAM_ROUTER ?? "127.0.0.1:50051" },
    nats: { type: "string", default: process.env.RIVERBEAM_NATS_URL ?? "nats://127.0.0.1:4222" },
    agent: { type: "string", default: "assistant" },
    text: { type: "string", default: "hello from node" },
    token: { type: "string", default: process.env.RIVERBEAM_TOKEN ?? "" },
    timeout: { type: "string", default: "30" },
  },
  strict: true,
});
const TIMEOUT_MS = Math.max(1, Number(opts.timeout)) * 1000;

class CheckError extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckError(message);
}

// ---- frames -----------------------------------------------------------------------------------
/** Add a frame to `state` (the documented follower rules); true once it is terminal. */
function acceptFrame(state, frame, requestId, where) {
  check(Number.isInteger(frame.seq), `${where}: frame without an integer seq: ${JSON.stringify(frame)}`);
  if (frame.seq <= state.last) {
    state.duplicates += 1; // a redelivery: the docs say drop it
    return false;
  }
  check(frame.seq === state.last + 1, `${where}: gap, expected seq ${state.last + 1}, got ${frame.seq}`);
  check(frame.request_id === requestId, `${where}: frame of request ${frame.request_id}, expected ${requestId}`);
  state.last = frame.seq;
  state.frames.push(frame);
  return TERMINAL.has(frame.type);
}

function withTimeout(promise, what, onTimeout) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new CheckError(`${what}: no terminal frame within ${TIMEOUT_MS / 1000}s`));
    }, TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Collect a frame source (the client's followNats or follow) until its terminal frame. */
async function collect(frames, requestId, where, onTimeout) {
  const state = { last: 0, frames: [], duplicates: 0 };
  await withTimeout(
    (async () => {
      for await (const frame of frames) {
        if (acceptFrame(state, frame, requestId, where)) return;
      }
      throw new CheckError(`${where}: ended before the done frame`);
    })(),
    where,
    onTimeout,
  );
  return state;
}

// ---- the proof --------------------------------------------------------------------------------
async function main(progress) {
  const client = new RiverbeamClient(opts.router, { token: opts.token || undefined, timeoutMs: TIMEOUT_MS });
  progress.step = "ListAgents";
  const names = (await client.listAgents()).map((a) => a.name);
  check(names.includes(opts.agent), `ListAgents: ${opts.agent} not in ${JSON.stringify(names)}`);

  progress.step = "error details";
  const refused = await client
    .invoke(`no-such-agent-${randomUUID().slice(0, 8)}`, "hi")
    .then(() => null, (err) => err);
  check(refused instanceof RiverbeamError, `Invoke of an unknown agent: expected a RiverbeamError, got ${refused}`);
  check(
    refused.grpcCode === "NOT_FOUND" && refused.code === "BEM-020",
    `unknown agent: expected NOT_FOUND with BEM-020, got ${refused.grpcCode} ${refused.code} (${refused.message})`,
  );
  check(refused.title === "agent not registered", `unknown agent: title ${JSON.stringify(refused.title)}`);
  check(refused.hint.includes("riverbeam agents"), `unknown agent: hint ${JSON.stringify(refused.hint)}`);

  progress.step = "Invoke";
  const sessionId = randomUUID();
  const ack = await client.invoke(opts.agent, opts.text, { sessionId, stream: true });
  check(ack.$typeName === "riverbeam.v1.StreamAck", `Invoke: expected a StreamAck, got ${ack.$typeName}`);
  progress.request_id = ack.requestId;
  check(/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(ack.requestId), `bad request_id ${ack.requestId}`);
  check(ack.subject === `riverbeam.stream.${ack.requestId}`, `ack subject ${ack.subject}`);
  check(ack.sessionId === sessionId, `ack session ${ack.sessionId}, sent ${sessionId}`);

  progress.step = "NATS";
  const viaNats = await collect(
    followNats(opts.nats, ack.requestId, { streamName: ack.streamName || undefined, idleTimeoutMs: TIMEOUT_MS }),
    ack.requestId,
    "nats",
  );
  const frames = viaNats.frames;
  const seqs = frames.map((f) => f.seq);
  check(
    seqs.every((seq, i) => seq === i + 1),
    `nats: seq not 1..n: ${JSON.stringify(seqs)}`,
  );
  const last = frames.at(-1);
  check(last.type === "done", `nats: run ended with ${last.type}: ${last.error_code ?? ""} ${last.error ?? ""}`);
  const text = resultText(last);
  check(text === `Echo: ${opts.text}`, `done text ${JSON.stringify(text)}, expected "Echo: ${opts.text}"`);
  check(last.result.session_id === sessionId, `done frame session ${last.result.session_id}`);

  progress.step = "FollowStream";
  const abort = new AbortController();
  const viaGrpc = await collect(client.follow(ack.requestId, 0, abort.signal), ack.requestId, "FollowStream", () =>
    abort.abort(),
  );
  const shape = (list) => JSON.stringify(list.map((f) => [f.seq, f.type]));
  check(
    shape(viaGrpc.frames) === shape(frames),
    `FollowStream frames ${shape(viaGrpc.frames)} differ from NATS ${shape(frames)}`,
  );
  check(resultText(viaGrpc.frames.at(-1)) === text, "FollowStream done text differs from NATS");

  progress.step = "reads";
  check((await client.cancel(ack.requestId)) === false, "Cancel of a finished request found a live run");
  const session = await client.getSession(sessionId);
  check(session?.sessionId === sessionId, `GetSession: ${session?.sessionId}`);
  const messages = await client.listMessages(sessionId);
  const roles = messages.items.map((m) => m.role);
  check(JSON.stringify(roles) === JSON.stringify(["human", "ai"]), `ListMessages roles ${JSON.stringify(roles)}`);
  const run = await client.getRun(last.result.run_id);
  check(run?.status !== undefined && run.runId === last.result.run_id, `GetRun: ${JSON.stringify(run?.runId)}`);
  const pending = await client.listPendingActions(sessionId);
  check(pending.items.length === 0, `ListPendingActions: ${pending.items.length}`);

  progress.step = "InvokeStream";
  const streamed = [];
  let streamAck;
  for await (const event of client.invokeStream(opts.agent, opts.text, { sessionId })) {
    if (event.$typeName === "riverbeam.v1.StreamAck") {
      check(streamAck === undefined && streamed.length === 0, "InvokeStream: the ack is not first");
      streamAck = event;
    } else {
      streamed.push(event);
    }
  }
  check(streamAck?.sessionId === sessionId, `InvokeStream ack session ${streamAck?.sessionId}`);
  check(
    streamed.every((f, i) => f.seq === i + 1 && f.request_id === streamAck.requestId),
    `InvokeStream frames ${shape(streamed)}`,
  );
  check(streamed.at(-1)?.type === "done", `InvokeStream ended with ${streamed.at(-1)?.type}`);
  check(resultText(streamed.at(-1)) === text, "InvokeStream done text differs");

  return {
    ok: true,
    reads: { messages: roles.length, run_status: run.status },
    frames: frames.length,
    text,
    request_id: ack.requestId,
    session_id: sessionId,
    types: frames.map((f) => f.type),
    relay_frames: viaGrpc.frames.length,
    invoke_stream_frames: streamed.length,
    duplicates_dropped: viaNats.duplicates + viaGrpc.duplicates,
    agents: names,
    unknown_agent_error: refused.code,
    unknown_agent_title: refused.title,
    unknown_agent_hint: refused.hint,
  };
}

const progress = { step: "start", request_id: null };
// A last resort: --timeout bounds each step; whatever hangs anyway, the whole run ends here.
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ ok: false, step: progress.step, request_id: progress.request_id, error: "watchdog: stuck" }));
  process.exit(3);
}, TIMEOUT_MS * 3 + 5000);
watchdog.unref();

try {
  const summary = await main(progress);
  console.log(JSON.stringify(summary));
  process.exitCode = 0;
} catch (err) {
  console.log(
    JSON.stringify({
      ok: false,
      step: progress.step,
      request_id: progress.request_id,
      error: err?.message ?? String(err),
      ...(err instanceof RiverbeamError ? { grpc_code: err.grpcCode, bem: err.code } : {}),
    }),
  );
  process.exitCode = err instanceof CheckError ? 1 : 2;
}
