#!/usr/bin/env node
// One InvokeStream turn with the TypeScript client package, its events printed as one JSON line:
//
//   node invoke_stream.mjs --router 127.0.0.1:50051 [--agent assistant] [--text "hello"]
//   node invoke_stream.mjs --router ... --resume SESSION,INTERACTION,ACTION   (ResumeStream,
//                                                                           approving ACTION)
//
// {"events":[{"kind":"ack","request_id":...},{"kind":"frame","seq":1,"type":...},...]}, exit 0;
// on an error {"error":..., "code": "BEM-NNN"}, exit 2. tests/interop/test_node_client.py runs
// it against routers with and without InvokeStream (the client then sends Invoke + FollowStream).

import { parseArgs } from "node:util";

import { RiverbeamClient, RiverbeamError } from "../../../clients/typescript/dist/index.js";

const { values: opts } = parseArgs({
  options: {
    router: { type: "string", default: "127.0.0.1:50051" },
    agent: { type: "string", default: "assistant" },
    text: { type: "string", default: "hello from node" },
    resume: { type: "string" },
  },
  strict: true,
});

const client = new RiverbeamClient(opts.router, { timeoutMs: 10_000 });
const events = [];
try {
  let stream;
  if (opts.resume) {
    const [sessionId, interactionId, actionId] = opts.resume.split(",");
    stream = client.resumeStream({ agentName: opts.agent, sessionId, interactionId, actions: [{ actionId }] });
  } else {
    stream = client.invokeStream(opts.agent, opts.text);
  }
  for await (const event of stream) {
    if (event.$typeName === "riverbeam.v1.StreamAck") {
      events.push({ kind: "ack", request_id: event.requestId, session_id: event.sessionId });
    } else {
      events.push({ kind: "frame", seq: event.seq, type: event.type, request_id: event.request_id });
    }
  }
  console.log(JSON.stringify({ events }));
  process.exit(0);
} catch (err) {
  const code = err instanceof RiverbeamError ? err.code : "";
  console.log(JSON.stringify({ error: String(err), code, events }));
  process.exit(2);
}
