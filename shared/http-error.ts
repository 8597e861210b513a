// The error a handler throws to answer a 4xx/5xx with its `error` string (and extra fields): shared/http/server.ts
// turns it into the answer. A file of its own, importing nothing, so code below the HTTP layer (the processor
// adapters, which verify signatures and refuse payloads) can throw it without depending on the server and
// what the server depends on (shared/db), which would close a cycle between the shared/ folders.

export class HttpError extends Error {
  readonly statusCode: number;
  readonly extra: Record<string, unknown> | undefined;
  constructor(statusCode: number, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.statusCode = statusCode;
    this.extra = extra;
  }
}
