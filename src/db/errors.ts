// Recognizing database errors the error handler turns into answers (a unique key is the Dialect's job: d.uniqueKey).

/** Connection-level failures: the database is down, restarting or unreachable, not the request's fault. */
const UNAVAILABLE = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND",
  // postgres (porsager)
  "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT",
  // PostgreSQL: admin shutdown, crash shutdown, cannot connect now (starting up), too many connections
  "57P01", "57P02", "57P03", "53300",
  // SQLite: the write lock was not free within the busy timeout
  "SQLITE_BUSY",
]);

/**
 * True when the database could not be reached or is shutting down (PostgreSQL restarting, a lost connection,
 * the class 08 connection exceptions), looking through drizzle's wrapping `cause`: the request may be retried.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as any, depth = 0; e && depth < 4; e = e.cause, depth++) {
    const code = String(e.code ?? "");
    if (UNAVAILABLE.has(code) || /^08/.test(code) || /^SQLITE_BUSY/.test(code)) return true;
  }
  return false;
}

/** Why a database could not be opened: one line an operator can act on (DESIGN §3: exit 2, no stack). */
export class DatabaseOpenError extends Error {
  constructor(
    readonly code: "database_unwritable" | "database_corrupt" | "database_unreachable" | "schema_too_new",
    message: string,
  ) {
    super(message);
  }
}
