// Request bodies are capped in bytes as they are read (issue 16), chunked ones included, on every route:
// past the cap nothing more is read and the request is refused with 413, before any handler runs.
import { AppError } from "./errors";

/** DESIGN §5 caps: 1 MB a request body. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A body still arriving after this long is refused (a trickle would hold the request open forever);
 * shorter than the connection's idle timeout (serve.ts), so a stalled body gets an answer first.
 */
export const BODY_DEADLINE_MS = 8_000;

const tooLarge = (cap = MAX_BODY_BYTES) => new AppError("payload_too_large", `The request body is larger than ${cap / 1024 / 1024} MB`);

/** Issue 47: an import's CSV is the one body read as a stream by its route, up to this many bytes. */
export const IMPORT_MAX_BYTES = 1024 * 1024 * 1024;
/**
 * An upload's connection may be silent this long (Bun.serve's idleTimeout, 10 s, for the others: serve.ts). Bun's idle
 * timer runs while the handler is still reading a body the server has received, and an import's body is read only as
 * fast as it is staged: uploads were cut off mid-staging with ECONNRESET (two of four 200,000-row bench runs on
 * PostgreSQL). Set for the request in its handler (`server.timeout`).
 */
export const UPLOAD_IDLE_S = 120;
const IMPORT_PATH = /^\/api\/v1\/waitlist\/[^/]+\/subscribers\/import$/;

/** The route reads this request's body itself, as it arrives (an import): the global parser leaves it alone. */
export const streamsBody = (method: string, path: string) => method === "POST" && IMPORT_PATH.test(path);

/** A declared Content-Length over the cap is refused before a byte is read (an import's under its own cap). */
export function checkDeclaredLength(request: Request): void {
  const length = Number(request.headers.get("content-length") ?? 0);
  if (length <= MAX_BODY_BYTES) return;
  const streamed = streamsBody(request.method, new URL(request.url).pathname);
  if (!streamed || length > IMPORT_MAX_BYTES) throw tooLarge(streamed ? IMPORT_MAX_BYTES : MAX_BODY_BYTES);
}

/** The bytes of a streamed body, refused with 413 once past IMPORT_MAX_BYTES. */
export function cappedStream(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > IMPORT_MAX_BYTES) controller.error(tooLarge(IMPORT_MAX_BYTES));
        else controller.enqueue(chunk);
      },
    }),
  );
}

const lateBody = () => new AppError("request_timeout", `The request body did not arrive within ${BODY_DEADLINE_MS / 1000} s`);

/**
 * Reads still waiting for their body, in the order they started, so in the order of their deadlines. One
 * timer for all of them, checking four times a second while any waits: a timer per request was a visible part
 * of a sign-up's time. A read leaves the set as it settles, so nothing of a finished request is kept (a shared
 * deadline promise raced by every request kept each request's reaction, and its body, for the 8 s: tens of
 * thousands under a sign-up load, issue 19).
 */
const waiting = new Set<{ until: number; late: () => void }>();
let sweeper: Timer | null = null;

function sweep() {
  const now = Date.now();
  for (const read of waiting) {
    if (read.until > now) break;
    waiting.delete(read);
    read.late();
  }
  if (waiting.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

/** `work`, or a 408 AppError once BODY_DEADLINE_MS (up to a quarter second more) has passed. */
function withinDeadline<T>(work: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const read = { until: Date.now() + BODY_DEADLINE_MS, late: () => reject(lateBody()) };
    waiting.add(read);
    sweeper ??= setInterval(sweep, 250).unref();
    work.then(
      (value) => (waiting.delete(read), resolve(value)),
      (err) => (waiting.delete(read), reject(err)),
    );
  });
}

/** How many reads wait for their body (for tests: none once every request has been read). */
export const readsWaiting = () => waiting.size;

/** Whole (Content-Length), the body is read in one call: the HTTP framing bounds it, and the length is checked first. */
function readDeclared<T>(request: Request, read: () => Promise<T>): Promise<T> | undefined {
  if (!request.headers.has("content-length")) return undefined;
  checkDeclaredLength(request);
  return withinDeadline(read());
}

/** A body without a declared length, chunk by chunk: past MAX_BODY_BYTES it stops reading and throws 413. */
async function readChunks(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done || !value) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** The body's bytes, at most MAX_BODY_BYTES of them: more is 413, slower than BODY_DEADLINE_MS is 408 (AppErrors). */
export async function readBody(request: Request): Promise<Uint8Array> {
  const whole = readDeclared(request, () => request.arrayBuffer());
  if (whole !== undefined) return new Uint8Array(await whole);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  try {
    return await withinDeadline(readChunks(reader));
  } catch (err) {
    // too large or too late: nothing more is read
    void reader.cancel().catch(() => {});
    throw err;
  }
}

const decoder = new TextDecoder();

/** The body as text (UTF-8), under the same cap and deadline. */
export async function readBodyText(request: Request): Promise<string> {
  const whole = readDeclared(request, () => request.text());
  return whole !== undefined ? await whole : decoder.decode(await readBody(request));
}

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Form fields as Elysia gives them: one value, or an array of the values of a repeated field. */
function fieldsOf(entries: Iterable<[string, unknown]>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    if (UNSAFE_KEYS.has(key)) continue;
    const had = fields[key];
    fields[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return fields;
}

/**
 * A body outside /api (forms, pages' buttons, one-click unsubscribe), read through the cap and parsed by
 * its Content-Type as Elysia's own parser would: JSON, urlencoded and multipart to objects, text to a string.
 */
export async function parseCappedBody(request: Request): Promise<unknown> {
  const bytes = await readBody(request);
  const contentType = request.headers.get("content-type") ?? "";
  const type = contentType.split(";")[0].trim().toLowerCase();
  // nothing here is parsed again: with no type Elysia's default parser reads nothing
  if (type === "") return undefined;
  const malformed = () => new AppError("bad_request", "Malformed request body");
  if (type === "application/json") {
    const text = new TextDecoder().decode(bytes);
    if (text.trim() === "") return {};
    try {
      return JSON.parse(text);
    } catch {
      throw malformed();
    }
  }
  if (type === "application/x-www-form-urlencoded") return fieldsOf(new URLSearchParams(new TextDecoder().decode(bytes)));
  if (type === "multipart/form-data") {
    if (bytes.byteLength === 0) return {};
    try {
      return fieldsOf(await new Response(bytes, { headers: { "content-type": contentType } }).formData());
    } catch {
      throw malformed();
    }
  }
  if (type.startsWith("text/")) return new TextDecoder().decode(bytes);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}
