// RiverbeamClient: the public API (riverbeam.v1.RiverbeamService) over gRPC, from Node.js.
//
//   const rb = new RiverbeamClient("127.0.0.1:50051", { token });
//   const ack = await rb.invoke("assistant", "hello", { stream: true });
//   for await (const frame of rb.follow(ack.requestId)) console.log(frame.seq, frame.type);
//
// Every failure is a RiverbeamError (code, title, hint from the rich status).

import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { type RiverbeamError, toRiverbeamError } from "./errors.js";
import type { ToolExecution } from "./gen/riverbeam/v1/ledger_pb.js";
import type { Action, Interaction, Message, Run, Session } from "./gen/riverbeam/v1/records_pb.js";
import { RiverbeamService } from "./gen/riverbeam/v1/riverbeam_service_pb.js";
import {
  ActionResponseEnvelopeSchema,
  StreamChunkSchema,
  type AgentMetadata,
  type AgentResult,
  type ModelConfig,
  type StreamAck,
  type StreamChunk,
  type UsageRow,
} from "./gen/riverbeam/v1/types_pb.js";
import type { Frame } from "./frames.js";

export interface ClientOptions {
  /** Bearer token (sent as `authorization: Bearer <token>`). */
  token?: string;
  /** Per-call deadline for unary calls, in milliseconds (default 60 s). */
  timeoutMs?: number;
}

export interface InvokeOptions {
  sessionId?: string;
  stream?: boolean;
  modelOverride?: string;
  requestId?: string;
  interactionId?: string;
}

export interface ActionAnswer {
  actionId: string;
  /** submitted (run it) or cancelled (decline it). */
  status?: "submitted" | "cancelled";
  kind?: string;
  reason?: string;
}

export interface ResumeOptions {
  agentName: string;
  sessionId: string;
  interactionId: string;
  actions: ActionAnswer[];
  requestId?: string;
}

export interface UsageOptions {
  groupBy?: "run" | "session" | "user" | "org";
  start?: Date;
  end?: Date;
  userId?: string;
  orgId?: string;
  sessionId?: string;
}

export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

export class RiverbeamClient {
  private readonly client: Client<typeof RiverbeamService>;
  private readonly timeoutMs: number;

  /** `target` is the router's HOST:PORT (plaintext, as `riverbeam up` serves it). */
  constructor(target: string, options: ClientOptions = {}) {
    const auth: Interceptor = (next) => async (req) => {
      if (options.token) req.header.set("authorization", `Bearer ${options.token}`);
      return await next(req);
    };
    const baseUrl = /^https?:\/\//.test(target) ? target : `http://${target}`;
    this.client = createClient(RiverbeamService, createGrpcTransport({ baseUrl, interceptors: [auth] }));
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  private async call<T>(run: (opts: { timeoutMs: number }) => Promise<T>): Promise<T> {
    try {
      return await run({ timeoutMs: this.timeoutMs });
    } catch (err) {
      throw toRiverbeamError(err);
    }
  }

  /** Run an agent on one text turn: the result, or (stream: true) the ack to follow. */
  async invoke(agentName: string, text: string, options: InvokeOptions = {}): Promise<AgentResult | StreamAck> {
    const response = await this.call((o) =>
      this.client.invoke(
        {
          agentName,
          content: [{ type: "text", text }],
          sessionId: options.sessionId ?? crypto.randomUUID(),
          stream: options.stream ?? false,
          modelOverride: options.modelOverride,
          requestId: options.requestId,
          interactionId: options.interactionId,
        },
        o,
      ),
    );
    if (response.outcome.case === undefined) throw new Error("Invoke returned neither a result nor an ack");
    return response.outcome.value;
  }

  /** Answer pending actions (approve: submitted; decline: cancelled); the resumed run's ack. */
  async resume(options: ResumeOptions): Promise<StreamAck> {
    return this.resumeWith(resumeRequest(options));
  }

  private async resumeWith(request: ReturnType<typeof resumeRequest>): Promise<StreamAck> {
    const response = await this.call((o) => this.client.resume(request, o));
    if (response.ack === undefined) throw new Error("Resume returned no ack");
    return response.ack;
  }

  /**
   * Answer pending actions and read the resumed run's frames in one call (ResumeStream): the
   * StreamAck `resume` returns, then the frames as `follow` relays them, ending with the done
   * or error frame. A router older than ResumeStream gets `resume`, then `follow`.
   */
  async *resumeStream(options: ResumeOptions, signal?: AbortSignal): AsyncGenerator<StreamAck | Frame> {
    const request = resumeRequest(options);
    yield* this.ackedFrames(
      () => this.client.resumeStream({ request }, { signal }),
      () => this.resumeWith(request),
      signal,
    );
  }

  /** Stop a running request; false when no live run was found. */
  async cancel(requestId: string, reason?: string): Promise<boolean> {
    return (await this.call((o) => this.client.cancel({ requestId, reason }, o))).cancelled;
  }

  async listAgents(): Promise<AgentMetadata[]> {
    return (await this.call((o) => this.client.listAgents({}, o))).agents;
  }

  async getAgent(name: string): Promise<AgentMetadata | undefined> {
    return (await this.call((o) => this.client.getAgent({ name }, o))).agent;
  }

  async listModels(): Promise<ModelConfig[]> {
    return (await this.call((o) => this.client.listModels({}, o))).models;
  }

  async getSession(sessionId: string): Promise<Session | undefined> {
    return (await this.call((o) => this.client.getSession({ sessionId }, o))).session;
  }

  async listMessages(sessionId: string, pageSize = 0, pageToken = ""): Promise<Page<Message>> {
    const r = await this.call((o) => this.client.listMessages({ sessionId, pageSize, pageToken }, o));
    return { items: r.messages, nextPageToken: r.nextPageToken };
  }

  async getInteraction(interactionId: string): Promise<Interaction | undefined> {
    return (await this.call((o) => this.client.getInteraction({ interactionId }, o))).interaction;
  }

  async getRun(runId: string): Promise<Run | undefined> {
    return (await this.call((o) => this.client.getRun({ runId }, o))).run;
  }

  async getAction(actionId: string): Promise<Action | undefined> {
    return (await this.call((o) => this.client.getAction({ actionId }, o))).action;
  }

  async listPendingActions(sessionId?: string, pageSize = 0, pageToken = ""): Promise<Page<Action>> {
    const r = await this.call((o) => this.client.listPendingActions({ sessionId, pageSize, pageToken }, o));
    return { items: r.actions, nextPageToken: r.nextPageToken };
  }

  /** One page of the tool-execution ledger of a run or of an interaction (name one). */
  async listToolExecutions(
    target: { runId?: string; interactionId?: string },
    pageSize = 0,
    pageToken = "",
  ): Promise<Page<ToolExecution>> {
    const r = await this.call((o) =>
      this.client.listToolExecutions(
        { runId: target.runId, interactionId: target.interactionId, pageSize, pageToken },
        o,
      ),
    );
    return { items: r.entries, nextPageToken: r.nextPageToken };
  }

  /** Token usage and cost per run, session, user or org (and model) over [start, end). */
  async getUsage(options: UsageOptions = {}): Promise<{ rows: UsageRow[]; total: UsageRow | undefined }> {
    const r = await this.call((o) =>
      this.client.getUsage(
        {
          groupBy: options.groupBy ?? "session",
          startTime: options.start ? timestampFromDate(options.start) : undefined,
          endTime: options.end ? timestampFromDate(options.end) : undefined,
          userId: options.userId,
          orgId: options.orgId,
          sessionId: options.sessionId,
        },
        o,
      ),
    );
    return { rows: r.rows, total: r.total };
  }

  /**
   * Run an agent and read its frames in one call (InvokeStream): the StreamAck first, then the
   * frames as `follow` relays them (StreamChunk JSON, as on NATS), ending with the done or error
   * frame. Aborting stops the reading, not the run (`cancel` stops it). A router older than
   * InvokeStream (UNIMPLEMENTED from the transport, before any event) gets the same turn as
   * Invoke with stream: true, then FollowStream of its ack.
   */
  async *invokeStream(
    agentName: string,
    text: string,
    options: Omit<InvokeOptions, "stream"> = {},
    signal?: AbortSignal,
  ): AsyncGenerator<StreamAck | Frame> {
    const request = {
      agentName,
      content: [{ type: "text", text }],
      sessionId: options.sessionId ?? crypto.randomUUID(),
      stream: true,
      modelOverride: options.modelOverride,
      requestId: options.requestId,
      interactionId: options.interactionId,
    };
    yield* this.ackedFrames(
      () => this.client.invokeStream({ request }, { signal }),
      async () => {
        const ack = await this.invoke(agentName, text, { ...options, sessionId: request.sessionId, stream: true });
        if (ack.$typeName !== "riverbeam.v1.StreamAck") throw new Error("Invoke with stream: true returned no ack");
        return ack;
      },
      signal,
    );
  }

  /**
   * An ack-then-chunks call (InvokeStream, ResumeStream). A router without the method
   * (UNIMPLEMENTED from the transport, before any event) ran nothing: the turn is sent once as
   * the unary call (`unary`), and its ack is followed.
   */
  private async *ackedFrames(
    open: () => AsyncIterable<{ event: { case: "ack"; value: StreamAck } | { case: "chunk"; value: StreamChunk } | { case: undefined; value?: undefined } }>,
    unary: () => Promise<StreamAck>,
    signal?: AbortSignal,
  ): AsyncGenerator<StreamAck | Frame> {
    let events = 0;
    try {
      for await (const response of open()) {
        events += 1;
        if (response.event.case === "ack") {
          yield response.event.value;
        } else if (response.event.case === "chunk") {
          const json = toJson(StreamChunkSchema, response.event.value, { useProtoFieldName: true }) as JsonObject;
          yield json as unknown as Frame;
        }
      }
      return;
    } catch (err) {
      const error = toRiverbeamError(err);
      if (events > 0 || !unimplemented(error)) throw error;
    }
    const ack = await unary();
    yield ack;
    yield* this.follow(ack.requestId, 0, signal);
  }

  /**
   * A request's frames through the router (FollowStream): replayed after `afterSeq`, then live,
   * ending with the done or error frame. Frames are the StreamChunk JSON, as on NATS.
   */
  async *follow(requestId: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<Frame> {
    try {
      for await (const response of this.client.followStream({ requestId, afterSeq }, { signal })) {
        if (response.chunk === undefined) continue;
        const json = toJson(StreamChunkSchema, response.chunk, { useProtoFieldName: true }) as JsonObject;
        yield json as unknown as Frame;
      }
    } catch (err) {
      throw toRiverbeamError(err);
    }
  }
}

/** A status the router did not send itself (no ErrorInfo) saying the method is unknown. */
function unimplemented(error: RiverbeamError): boolean {
  return error.transport && error.grpcCode === "UNIMPLEMENTED";
}

/** The ResumeRequest of `options`, answered as the Python client answers: `submitted` runs the
 * stored call, anything else runs nothing. */
function resumeRequest(options: ResumeOptions) {
  const actions = options.actions.map((a) => {
    const status = a.status ?? "submitted";
    return create(ActionResponseEnvelopeSchema, {
      actionId: a.actionId,
      kind: a.kind ?? "confirmation",
      requestId: crypto.randomUUID(),
      status,
      payload: { approved: status === "submitted", ...(a.reason ? { reason: a.reason } : {}) },
    });
  });
  return {
    agentName: options.agentName,
    sessionId: options.sessionId,
    interactionId: options.interactionId,
    actions,
    requestId: options.requestId,
  };
}
