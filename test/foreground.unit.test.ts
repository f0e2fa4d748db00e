// Background work gives way to requests (src/http/foreground.ts, issue 47): a step waits while a request is in hand,
// for at most 50 ms, and never for the request it works for (an upload staged as it is read).
import { describe, expect, test } from "bun:test";
import { giveWay, requestEnded, requestStarted } from "../src/http/foreground";

/** Whether `p` has settled after a few turns of the event loop. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe("giving way", () => {
  test("with no request in hand a step goes on after a turn", async () => {
    expect(await settled(giveWay())).toBe(true);
  });

  test("a step waits for a request in hand and goes on when it ends", async () => {
    const request = {};
    requestStarted(request);
    try {
      const waiting = giveWay();
      expect(await settled(waiting)).toBe(false);
      requestEnded(request);
      expect(await settled(waiting)).toBe(true);
    } finally {
      requestEnded(request);
    }
  });

  test("a step working for its own request (an upload) does not wait for it, but waits for another", async () => {
    const upload = {};
    const other = {};
    requestStarted(upload);
    try {
      expect(await settled(giveWay(upload))).toBe(true);
      requestStarted(other);
      const waiting = giveWay(upload);
      expect(await settled(waiting)).toBe(false);
      requestEnded(other);
      expect(await settled(waiting)).toBe(true);
    } finally {
      requestEnded(other);
      requestEnded(upload);
    }
  });

  test("under steady traffic a step still goes on, after at most about 50 ms", async () => {
    const request = {};
    requestStarted(request);
    try {
      const started = performance.now();
      await giveWay();
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(45);
      expect(waited).toBeLessThan(1_000);
    } finally {
      requestEnded(request);
    }
  });
});
