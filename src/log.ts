// Structured JSON logs, one object per line (DESIGN §8). Never pass keys, passwords or full emails.
import { writeSync } from "node:fs";

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  /** Whether lines of `level` are written (to skip building fields nobody reads). */
  enabled(level: Level): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** How long a line may wait to be written with the ones after it, and how many lines are written at once at most. */
const FLUSH_MS = 20;
const FLUSH_LINES = 256;

/**
 * Lines for stdout, written together every 20 ms (or at 256 lines) rather than one write each (under load a write
 * per request line cost ~3% of a sign-up), or once per event-loop turn (a write every few requests: 8% of a published
 * page's throughput, issue 19). Every byte goes through this one queue, in order: a write takes what the pipe takes
 * (Bun's stdout pipe is non-blocking: a full pipe takes part or answers EAGAIN) and the rest is tried again 5 ms later;
 * at exit, whatever is left is written before the process goes, waiting for the reader if it must. (Writing through
 * process.stdout and then synchronously at exit could put the exit's bytes in the middle of a line the stream still
 * held: the 5,000-line test met both that and an EAGAIN.)
 */
function bufferedStdout(): (line: string) => void {
  let pending: string[] = [];
  /** Bytes a write has not taken yet, before any pending line. */
  let rest: Buffer = Buffer.alloc(0);
  let timer: Timer | undefined;
  const takePending = () => {
    if (pending.length === 0) return;
    const bytes = Buffer.from(pending.join(""));
    pending = [];
    rest = rest.length ? Buffer.concat([rest, bytes]) : bytes;
  };
  /** Writes what the pipe takes now; true when nothing is left. */
  const writeSome = (): boolean => {
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(1, rest));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") return false;
        throw err;
      }
    }
    return true;
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    takePending();
    // the pipe is full (a slow reader): the rest is tried again shortly; the timer never keeps the process alive
    if (!writeSome()) timer = setTimeout(flush, 5).unref();
  };
  process.on("exit", () => {
    takePending();
    while (!writeSome()) Bun.sleepSync(1);
  });
  return (line) => {
    const waiting = pending.push(line);
    if (waiting === 1 && timer === undefined) timer = setTimeout(flush, FLUSH_MS).unref();
    else if (waiting >= FLUSH_LINES) flush();
  };
}

/** `new Date().toISOString()`, made once per millisecond: a busy server writes dozens of lines in each. */
function isoClock(): () => string {
  let ms = NaN;
  let iso = "";
  return () => {
    const now = Date.now();
    if (now !== ms) iso = new Date((ms = now)).toISOString();
    return iso;
  };
}

export function createLogger(level: Level, write: (line: string) => void = bufferedStdout()): Logger {
  const min = ORDER[level];
  const time = isoClock();
  const emit = (lvl: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    // {"time","level","msg", then the fields}: the fields' object is written as it is, not copied into a new one
    const head = `{"time":"${time()}","level":"${lvl}","msg":${JSON.stringify(msg)}`;
    const rest = fields === undefined ? "}" : JSON.stringify(fields);
    write(rest.length > 2 ? `${head},${rest.slice(1)}\n` : `${head}}\n`);
  };
  return { enabled: (lvl) => ORDER[lvl] >= min, debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

/** Logs to stderr: admin commands keep stdout for their one JSON object. */
export const stderrLogger = (level: Level = "info") => createLogger(level, (l) => process.stderr.write(l));

/** `ana@example.com` -> `a***@example.com`: enough to correlate, not enough to leak. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  return at <= 0 ? "***" : `${email[0]}***${email.slice(at)}`;
}

/** Every address in a text masked (an SMTP server's answer names the recipient; issue 47: no log line holds one). */
export const maskEmailsIn = (text: string): string => text.replace(/[^\s<>"'(),;:]+@[^\s<>"'(),;:]+\.[A-Za-z]{2,}/g, maskEmail);
