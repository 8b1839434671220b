// RiverbeamError: a failed call, with the catalog code (BEM-NNN), title and hint the server put
// in the rich status (google.rpc.ErrorInfo, LocalizedMessage and Help in grpc-status-details-bin).

import { Code, ConnectError } from "@connectrpc/connect";

import { ErrorInfoSchema, HelpSchema, LocalizedMessageSchema } from "./gen/google/rpc/error_details_pb.js";

export const DOMAIN = "riverbeam";

// A status without Riverbeam ErrorInfo (a proxy's, or a transport failure): the closest code,
// as the Python client maps it.
const FALLBACK: Partial<Record<Code, string>> = {
  [Code.Unavailable]: "BEM-003",
  [Code.DeadlineExceeded]: "BEM-113",
  [Code.Unauthenticated]: "BEM-050",
  [Code.PermissionDenied]: "BEM-051",
  [Code.InvalidArgument]: "BEM-002",
  [Code.Canceled]: "BEM-033",
};

export class RiverbeamError extends Error {
  /** The catalog code, "BEM-NNN" (docs/errors.md). */
  readonly code: string;
  /** The code's title (google.rpc.LocalizedMessage), e.g. "session not found". */
  readonly title: string;
  /** What to do about it (google.rpc.Help), "" when the catalog has no hint. */
  readonly hint: string;
  /** Where the code is documented (the Help link). */
  readonly helpUrl: string;
  /** The gRPC status code name ("NOT_FOUND", ...). */
  readonly grpcCode: string;
  /** ErrorInfo.metadata: what failed (ids, fields). */
  readonly details: Readonly<Record<string, string>>;
  /** True when no Riverbeam status came back: the service was not reached, or a proxy answered. */
  readonly transport: boolean;

  constructor(fields: {
    code: string;
    message: string;
    title?: string;
    hint?: string;
    helpUrl?: string;
    grpcCode: string;
    details?: Record<string, string>;
    transport?: boolean;
    cause?: unknown;
  }) {
    super(`${fields.code}: ${fields.message}`, { cause: fields.cause });
    this.name = "RiverbeamError";
    this.code = fields.code;
    this.title = fields.title ?? "";
    this.hint = fields.hint ?? "";
    this.helpUrl = fields.helpUrl ?? "";
    this.grpcCode = fields.grpcCode;
    this.details = Object.freeze({ ...(fields.details ?? {}) });
    this.transport = fields.transport ?? false;
  }

  /** The message the server gave, without the code prefix. */
  get reason(): string {
    return this.message.slice(this.code.length + 2);
  }
}

function grpcName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase().replace("CANCELED", "CANCELLED");
}

/** Turn anything a call threw into a RiverbeamError (it is returned unchanged if it is one). */
export function toRiverbeamError(err: unknown): RiverbeamError {
  if (err instanceof RiverbeamError) return err;
  const connect = ConnectError.from(err);
  const [info] = connect.findDetails(ErrorInfoSchema).filter((i) => i.domain === DOMAIN);
  const grpcCode = grpcName(connect.code);
  if (info === undefined) {
    return new RiverbeamError({
      code: FALLBACK[connect.code] ?? "BEM-001",
      message: `${grpcCode}: ${connect.rawMessage || "no details"}`,
      grpcCode,
      transport: true,
      cause: err,
    });
  }
  const [localized] = connect.findDetails(LocalizedMessageSchema);
  const [help] = connect.findDetails(HelpSchema);
  const link = help?.links[0];
  return new RiverbeamError({
    code: info.reason,
    message: connect.rawMessage,
    title: localized?.message ?? "",
    hint: link?.description ?? "",
    helpUrl: link?.url ?? "",
    grpcCode,
    details: { ...info.metadata },
    cause: err,
  });
}
