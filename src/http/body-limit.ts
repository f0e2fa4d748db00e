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

const tooLarge = () => new AppError("payload_too_large", `The request body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);

/** A declared Content-Length over the cap is refused before a byte is read. */
export function checkDeclaredLength(request: Request): void {
  if (Number(request.headers.get("content-length") ?? 0) > MAX_BODY_BYTES) throw tooLarge();
}

/**
 * When a body must have arrived: between BODY_DEADLINE_MS and a quarter second more. Requests of the same quarter
 * second share one timer (a timer per request was a visible part of a sign-up's time).
 */
let shared: { slot: number; late: Promise<"late"> } | null = null;
function deadline(): Promise<"late"> {
  const now = Date.now();
  const slot = Math.ceil((now + BODY_DEADLINE_MS) / 250) * 250;
  if (shared?.slot !== slot) shared = { slot, late: new Promise((resolve) => setTimeout(() => resolve("late"), slot - now).unref()) };
  return shared.late;
}

const lateBody = () => new AppError("request_timeout", `The request body did not arrive within ${BODY_DEADLINE_MS / 1000} s`);

/** Whole (Content-Length), the body is read in one call: the HTTP framing bounds it, and the length is checked first. */
async function readDeclared<T>(request: Request, read: () => Promise<T>): Promise<T | undefined> {
  if (!request.headers.has("content-length")) return undefined;
  checkDeclaredLength(request);
  const body = await Promise.race([read(), deadline()]);
  if (body === "late") throw lateBody();
  return body;
}

/** The body's bytes, at most MAX_BODY_BYTES of them: more is 413, slower than BODY_DEADLINE_MS is 408 (AppErrors). */
export async function readBody(request: Request): Promise<Uint8Array> {
  const whole = await readDeclared(request, () => request.arrayBuffer());
  if (whole !== undefined) return new Uint8Array(whole);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const late = deadline();
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") throw lateBody();
      if (next.done) break;
      size += next.value.byteLength;
      if (size > MAX_BODY_BYTES) throw tooLarge();
      chunks.push(next.value);
    }
  } catch (err) {
    void reader.cancel().catch(() => {});
    throw err;
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

const decoder = new TextDecoder();

/** The body as text (UTF-8), under the same cap and deadline. */
export async function readBodyText(request: Request): Promise<string> {
  return (await readDeclared(request, () => request.text())) ?? decoder.decode(await readBody(request));
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
