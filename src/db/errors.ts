// Recognizing database errors the error handler turns into answers (a unique key is the Dialect's job: d.uniqueKey).

/** Connection-level failures: the database is down, restarting or unreachable, not the request's fault. */
const UNAVAILABLE = new Set([
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND",
  // Bun's SQL client: a connection lost, closed before its handshake, refused, or not made in time
  "ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_FAILED", "ERR_POSTGRES_CONNECTION_REFUSED", "ERR_POSTGRES_CONNECTION_TIMEOUT",
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
    // PostgreSQL's SQLSTATE: Bun's SQL client keeps it in `errno` (its `code` is then ERR_POSTGRES_SERVER_ERROR)
    const state = typeof e.errno === "string" ? e.errno : "";
    if (UNAVAILABLE.has(code) || UNAVAILABLE.has(state) || /^08/.test(state) || /^SQLITE_BUSY/.test(code)) return true;
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
