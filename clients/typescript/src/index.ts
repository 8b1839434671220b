// @riverbeam/client: the public gRPC API of Riverbeam, typed, from Node.js.

export { RiverbeamClient } from "./client.js";
export type { ActionAnswer, ClientOptions, InvokeOptions, Page, ResumeOptions, UsageOptions } from "./client.js";
export { DOMAIN, RiverbeamError, toRiverbeamError } from "./errors.js";
export { DEFAULT_STREAM, TERMINAL, followNats, resultText } from "./frames.js";
export type { ContentPart, FollowNatsOptions, Frame, FrameResult } from "./frames.js";
export * as v1 from "./gen/riverbeam/v1/types_pb.js";
