#!/usr/bin/env node
// Riverbeam interop proof from Node.js: the public gRPC API (RiverbeamService) plus the
// request's frames read straight from NATS JetStream, checked against the gRPC relay.
//
//   node client.mjs --router 127.0.0.1:50051 --nats nats://127.0.0.1:4222 [--text "hello"]
//                   [--agent assistant] [--token T] [--timeout 30]
//
// Steps: ListAgents (the agent is listed); an unknown agent is refused with ErrorInfo
// BEM-020 read from grpc-status-details-bin; Invoke with stream=true returns a StreamAck;
// the ack's subject is followed on JetStream (ordered consumer, deliver all) until the done
// frame, seq 1..n without gaps and the result text "Echo: <text>"; FollowStream (gRPC) for
// the same request gives the same (seq, type) list.
//
// Prints one JSON line on stdout: {"ok":true,"frames":N,"text":"Echo: ...","request_id":...}
// (or {"ok":false,"step":...,"error":...}). Exit 0 when every check passed; 1 when a check
// failed; 2 on a gRPC or NATS error (the summary then carries grpc_code and the BEM code);
// 3 when the whole run got stuck (watchdog).

import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import protobuf from "protobufjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PROTOS = path.resolve(HERE, "../../../protos");
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

// ---- gRPC: stubs from the .proto files at run time ----------------------------------------------
const packageDefinition = protoLoader.loadSync("riverbeam/v1/riverbeam_service.proto", {
  includeDirs: [PROTOS],
  keepCase: true, // field names as in the .proto files and the seed JSON (agent_name, ...)
  longs: String,
  enums: String,
  defaults: false, // unset optional fields stay absent, as in the frame JSON
  oneofs: true, // InvokeResponse.outcome names the set member ("result" or "ack")
});
const riverbeam = grpc.loadPackageDefinition(packageDefinition).riverbeam.v1;

function callMetadata() {
  const md = new grpc.Metadata();
  if (opts.token) md.set("authorization", `Bearer ${opts.token}`);
  return md;
}

function deadline() {
  return new Date(Date.now() + TIMEOUT_MS);
}

function unary(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, callMetadata(), { deadline: deadline() }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

// google.rpc.Status, its Any details and google.rpc.ErrorInfo: wire-compatible subsets (field
// numbers and types as in googleapis), enough to read the rich status details.
const { root: rpcTypes } = protobuf.parse(
  `syntax = "proto3";
  message Any { string type_url = 1; bytes value = 2; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }`,
  { keepCase: true },
);
const StatusType = rpcTypes.lookupType("Status");
const ErrorInfoType = rpcTypes.lookupType("ErrorInfo");

/** The Riverbeam ErrorInfo of a gRPC error ({reason: "BEM-NNN", domain, metadata}), or null. */
function riverbeamErrorInfo(err) {
  const [raw] = err?.metadata?.get("grpc-status-details-bin") ?? [];
  if (!raw) return null;
  const status = StatusType.decode(raw);
  for (const any of status.details ?? []) {
    if (any.type_url.endsWith("/google.rpc.ErrorInfo")) {
      const info = ErrorInfoType.toObject(ErrorInfoType.decode(any.value), { defaults: true });
      if (info.domain === "riverbeam") return info;
    }
  }
  return null;
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

/** Follow riverbeam.stream.<request_id> on JetStream from the first stored frame. */
async function followNats(js, ack) {
  const consumer = await js.consumers.get(ack.stream_name || "RIVERBEAM_STREAM", {
    filter_subjects: ack.subject, // a string: filter_subject, which servers before 2.10 accept too
    deliver_policy: DeliverPolicy.All, // stored frames first, then live ones
  });
  const messages = await consumer.consume();
  const state = { last: 0, frames: [], duplicates: 0 };
  try {
    await withTimeout(
      (async () => {
        for await (const msg of messages) {
          if (acceptFrame(state, msg.json(), ack.request_id, "nats")) return;
        }
        throw new CheckError("nats: the subscription ended before the done frame");
      })(),
      "nats",
      () => messages.stop(),
    );
  } finally {
    await messages.close().catch(() => {});
    await consumer.delete().catch(() => {}); // the server would reap it anyway
  }
  return state;
}

/** The same request relayed by the router: FollowStream (server streaming). */
function followGrpc(client, requestId) {
  const state = { last: 0, frames: [], duplicates: 0 };
  const call = client.FollowStream({ request_id: requestId, after_seq: 0 }, callMetadata(), {
    deadline: deadline(),
  });
  const done = new Promise((resolve, reject) => {
    let terminal = false;
    call.on("data", (response) => {
      try {
        if (acceptFrame(state, response.chunk, requestId, "FollowStream")) terminal = true;
      } catch (err) {
        call.cancel();
        reject(err);
      }
    });
    call.on("error", reject);
    call.on("end", () =>
      terminal ? resolve(state) : reject(new CheckError("FollowStream ended before the done frame")),
    );
  });
  return withTimeout(done, "FollowStream", () => call.cancel());
}

function resultText(frame) {
  return (frame.result?.content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("");
}

// ---- the proof --------------------------------------------------------------------------------
async function main(progress) {
  const client = new riverbeam.RiverbeamService(opts.router, grpc.credentials.createInsecure());
  let nc = null;
  try {
    progress.step = "ListAgents";
    const listed = await unary(client, "ListAgents", {});
    const names = (listed.agents ?? []).map((a) => a.name);
    check(names.includes(opts.agent), `ListAgents: ${opts.agent} not in ${JSON.stringify(names)}`);

    progress.step = "error details";
    const refused = await unary(client, "Invoke", {
      agent_name: `no-such-agent-${randomUUID().slice(0, 8)}`,
      content: [{ type: "text", text: "hi" }],
      session_id: randomUUID(),
    }).then(
      () => null,
      (err) => err,
    );
    check(refused !== null, "Invoke of an unknown agent succeeded");
    const info = riverbeamErrorInfo(refused);
    check(
      refused.code === grpc.status.NOT_FOUND && info?.reason === "BEM-020",
      `unknown agent: expected NOT_FOUND with ErrorInfo BEM-020, got code ${refused.code} ` +
        `(${refused.details}) info ${JSON.stringify(info)}`,
    );

    progress.step = "Invoke";
    const sessionId = randomUUID();
    const response = await unary(client, "Invoke", {
      agent_name: opts.agent,
      content: [{ type: "text", text: opts.text }],
      session_id: sessionId,
      stream: true,
    });
    check(response.outcome === "ack", `Invoke: expected a StreamAck, got ${response.outcome}`);
    const ack = response.ack;
    progress.request_id = ack.request_id;
    check(/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(ack.request_id), `bad request_id ${ack.request_id}`);
    check(ack.subject === `riverbeam.stream.${ack.request_id}`, `ack subject ${ack.subject}`);
    check(ack.session_id === sessionId, `ack session ${ack.session_id}, sent ${sessionId}`);

    progress.step = "NATS";
    nc = await connect({ servers: opts.nats, timeout: 5000, name: "riverbeam-interop-node" });
    const viaNats = await followNats(jetstream(nc), ack);
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
    const viaGrpc = await followGrpc(client, ack.request_id);
    const shape = (list) => JSON.stringify(list.map((f) => [f.seq, f.type]));
    check(
      shape(viaGrpc.frames) === shape(frames),
      `FollowStream frames ${shape(viaGrpc.frames)} differ from NATS ${shape(frames)}`,
    );
    check(resultText(viaGrpc.frames.at(-1)) === text, "FollowStream done text differs from NATS");

    return {
      ok: true,
      frames: frames.length,
      text,
      request_id: ack.request_id,
      session_id: sessionId,
      types: frames.map((f) => f.type),
      relay_frames: viaGrpc.frames.length,
      duplicates_dropped: viaNats.duplicates + viaGrpc.duplicates,
      agents: names,
      unknown_agent_error: info.reason,
    };
  } finally {
    client.close();
    if (nc !== null) await nc.close().catch(() => {});
  }
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
  const info = riverbeamErrorInfo(err);
  console.log(
    JSON.stringify({
      ok: false,
      step: progress.step,
      request_id: progress.request_id,
      error: err?.message ?? String(err),
      ...(err?.code !== undefined ? { grpc_code: err.code } : {}),
      ...(info ? { bem: info.reason } : {}),
    }),
  );
  process.exitCode = err instanceof CheckError ? 1 : 2;
}
