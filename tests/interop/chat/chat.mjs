// The Vercel AI SDK's chat client (the transport and message assembly `useChat` runs on)
// against Riverbeam's console: POST /chat, UI message stream protocol v1.
//
//   node chat.mjs <console-url> <token|-> <agent> <chat-id> <text>
//
// Prints one JSON line: {"ok": true, "message": <the assembled UIMessage>, "chunks": [...types]}
// or {"ok": false, "error": "..."} when the transport or the stream failed.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url, token, agent, chatId, text] = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.log(JSON.stringify({ ok: false, error: "watchdog: no answer in 40 s" }));
  process.exit(2);
}, 40_000);

const chunkTypes = [];
const transport = new DefaultChatTransport({
  api: `${url}/chat`,
  headers: token && token !== "-" ? { Authorization: `Bearer ${token}` } : {},
  body: { agent },
});

try {
  const stream = await transport.sendMessages({
    chatId,
    messages: [{ id: "user-1", role: "user", parts: [{ type: "text", text }] }],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  const tapped = stream.pipeThrough(new TransformStream({
    transform(chunk, controller) { chunkTypes.push(chunk.type); controller.enqueue(chunk); },
  }));
  let message;
  let streamError;
  for await (const snapshot of readUIMessageStream({ stream: tapped, onError: (e) => { streamError = e; } })) {
    message = snapshot;
  }
  console.log(JSON.stringify({ ok: !streamError, message, chunks: chunkTypes, error: streamError ? String(streamError.message || streamError) : undefined }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, error: String(err && err.message || err), chunks: chunkTypes }));
} finally {
  clearTimeout(watchdog);
}
