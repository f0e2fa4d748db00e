// Structured JSON logs, one object per line (DESIGN §8). Never pass keys, passwords or full emails.
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: Level, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const min = ORDER[level];
  const emit = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + "\n");
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** Logs to stderr: admin commands keep stdout for their one JSON object. */
export const stderrLogger = (level: Level = "info") => createLogger(level, (l) => process.stderr.write(l));

/** `ana@example.com` -> `a***@example.com`: enough to correlate, not enough to leak. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  return at <= 0 ? "***" : `${email[0]}***${email.slice(at)}`;
}
