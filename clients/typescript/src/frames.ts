// Frames: the StreamChunk JSON of seed 001, as published on riverbeam.stream.<request_id> and as
// FollowStream relays them (protobuf JSON with proto field names gives the same keys).

import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

export const DEFAULT_STREAM = "RIVERBEAM_STREAM";
export const TERMINAL = new Set(["done", "error"]);

export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface FrameResult {
  content?: ContentPart[];
  agent_name?: string;
  model_used?: string;
  session_id?: string;
  interaction_id?: string;
  run_id?: string;
  interrupted?: boolean;
  [key: string]: unknown;
}

export interface Frame {
  /** chunk, done, error, placeholder, thinking, tool. */
  type: string;
  /** 1, 2, 3, ... per request; the done (or error) frame is last. */
  seq?: number;
  request_id?: string;
  data?: Record<string, unknown>;
  result?: FrameResult;
  error?: string;
  error_code?: string;
  [key: string]: unknown;
}

/** The text of a done frame's result. */
export function resultText(frame: Frame): string {
  return (frame.result?.content ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("");
}

export interface FollowNatsOptions {
  afterSeq?: number;
  streamName?: string;
  /** Give up when no frame arrives for this long (ms); default 60 s. */
  idleTimeoutMs?: number;
}

/**
 * A request's frames straight from NATS JetStream (ordered consumer, from the first stored
 * frame): redeliveries (a seq already seen) are dropped, a gap is an error, the done or error
 * frame ends it.
 */
export async function* followNats(natsUrl: string, requestId: string, options: FollowNatsOptions = {}): AsyncGenerator<Frame> {
  const nc = await connect({ servers: natsUrl, timeout: 5000, name: "riverbeam-ts" });
  try {
    const consumer = await jetstream(nc).consumers.get(options.streamName ?? DEFAULT_STREAM, {
      filter_subjects: `riverbeam.stream.${requestId}`,
      deliver_policy: DeliverPolicy.All,
    });
    const messages = await consumer.consume({ idle_heartbeat: 1000 });
    let last = options.afterSeq ?? 0;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => messages.stop(new Error(`no frame for ${requestId} in time`)), options.idleTimeoutMs ?? 60_000);
    };
    try {
      arm();
      for await (const msg of messages) {
        const frame = msg.json<Frame>();
        const seq = frame.seq ?? 0;
        if (seq <= last) continue;
        if (seq !== last + 1) throw new Error(`frame gap: expected seq ${last + 1}, got ${seq}`);
        last = seq;
        arm();
        yield frame;
        if (TERMINAL.has(frame.type)) return;
      }
      throw new Error("the NATS subscription ended before the done frame");
    } finally {
      clearTimeout(timer);
      await messages.close().catch(() => undefined);
      await consumer.delete().catch(() => undefined);
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
}
