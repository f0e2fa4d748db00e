// Request bodies under the cap and the deadline (src/http/body-limit.ts): what a read answers, and that a finished
// read leaves nothing waiting behind it (issue 19: a deadline shared by every request kept each one's body for 8 s).
import { describe, expect, test } from "bun:test";
import { MAX_BODY_BYTES, readBody, readBodyText, readsWaiting } from "../src/http/body-limit";

const declared = (text: string) =>
  new Request("http://127.0.0.1/x", { method: "POST", body: text, headers: { "content-length": String(Buffer.byteLength(text)) } });

/** A body without a Content-Length, arriving in `chunks`. */
const streamed = (chunks: Uint8Array[]) =>
  new Request("http://127.0.0.1/x", {
    method: "POST",
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    }),
  });

describe("request bodies", () => {
  test("declared and streamed bodies read whole, and once read none is left waiting for its deadline", async () => {
    const texts = Array.from({ length: 500 }, (_, i) => JSON.stringify({ email: `user${i}@example.com` }));
    const read = await Promise.all(texts.map((t, i) => (i % 2 ? readBodyText(declared(t)) : readBody(streamed([Buffer.from(t.slice(0, 5)), Buffer.from(t.slice(5))])))));
    expect(read.map((r) => (typeof r === "string" ? r : Buffer.from(r).toString()))).toEqual(texts);
    expect(readsWaiting()).toBe(0);
  });

  test("a streamed body past the cap is 413 and stops being read; a declared one is refused before a byte is read", async () => {
    const mb = new Uint8Array(MAX_BODY_BYTES);
    await expect(readBody(streamed([mb, new Uint8Array(1), new Uint8Array(1)]))).rejects.toMatchObject({ code: "payload_too_large" });
    await expect(readBodyText(declared("x".repeat(MAX_BODY_BYTES + 1)))).rejects.toMatchObject({ code: "payload_too_large" });
    expect(readsWaiting()).toBe(0);
  });
});
