// Background work gives way to requests (src/http/foreground.ts, issue 47): a step waits while a request is in hand,
// for at most 50 ms, and never for the request it works for (an upload staged as it is read).
import { describe, expect, test } from "bun:test";
import { backgroundWork, holdBackground, inBackground } from "../src/background";
import { giveWay, paced, requestEnded, requestStarted, rest, STEP_MS, stepSizer, trafficComing } from "../src/http/foreground";

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

describe("resting while requests come", () => {
  test("with a request in hand, a step's work rests as long as the step took", async () => {
    const request = {};
    requestStarted(request);
    try {
      const started = performance.now();
      await rest(40);
      expect(performance.now() - started).toBeGreaterThanOrEqual(38);
    } finally {
      requestEnded(request);
    }
  });

  test("requests are coming while one is in hand or ended within a second, the upload a step works for aside", async () => {
    const request = {};
    requestStarted(request);
    requestEnded(request);
    const ended = performance.now();
    expect(trafficComing()).toBe(true);
    expect(await settled(rest(1_000))).toBe(false);
    // polled with a deadline: no longer once a second has passed since
    while (trafficComing() && performance.now() - ended < 3_000) await new Promise((r) => setTimeout(r, 20));
    const quietAfter = performance.now() - ended;
    expect(trafficComing()).toBe(false);
    expect(quietAfter).toBeGreaterThanOrEqual(990);
    expect(quietAfter).toBeLessThan(1_500);
    expect(await settled(rest(1_000))).toBe(true);
    const upload = {};
    requestStarted(upload);
    try {
      expect(trafficComing(upload)).toBe(false);
      expect(await settled(rest(1_000, upload))).toBe(true);
      expect(trafficComing()).toBe(true);
    } finally {
      requestEnded(upload);
    }
  });

  test("paced steps that take the machine rest as long again while requests come", async () => {
    const request = {};
    requestStarted(request);
    requestEnded(request); // traffic for a second, none in hand: a step does not wait to start
    let steps = 0;
    const started = performance.now();
    await paced(async () => {
      if (steps++ === 3) return false;
      await new Promise((r) => setTimeout(r, 30));
      return true;
    }, { first: 1, max: 1, rests: true });
    // three steps of 30 ms, each followed by a rest as long
    expect(performance.now() - started).toBeGreaterThanOrEqual(170);
  });
});

describe("held by the database's upkeep", () => {
  test("a step waits while background work is held (a checkpoint catching up) and goes on at its release", async () => {
    let release!: () => void;
    const held = holdBackground(() => new Promise<void>((resolve) => (release = resolve)));
    const waiting = giveWay();
    expect(await settled(waiting)).toBe(false);
    release();
    await held;
    expect(await settled(waiting)).toBe(true);
  });

  test("background work is known while under way, nested or not", async () => {
    expect(backgroundWork()).toBe(false);
    const seen: boolean[] = [];
    await inBackground(async () => {
      seen.push(backgroundWork());
      await inBackground(async () => {});
      seen.push(backgroundWork());
    });
    expect(seen).toEqual([true, true]);
    expect(backgroundWork()).toBe(false);
  });
});

describe("step sizes", () => {
  test("a step is sized to take about STEP_MS, at most doubling or halving at a time", () => {
    const sizer = stepSizer(10, 100);
    sizer.took(STEP_MS / 2); // 10 units in half the time: twice as many
    expect(sizer.size).toBe(20);
    sizer.took(STEP_MS / 20); // far faster: still only doubled
    expect(sizer.size).toBe(40);
    sizer.took(STEP_MS * 20); // far slower: halved
    expect(sizer.size).toBe(20);
    sizer.took(STEP_MS);
    expect(sizer.size).toBe(20);
  });

  test("a step with a fixed part longer than STEP_MS (round trips) gets that fixed part and STEP_MS", () => {
    const sizer = stepSizer(1, 100);
    sizer.took(10); // one unit took 10 ms: the target becomes 10 + STEP_MS
    expect(sizer.size).toBe(Math.round((10 + STEP_MS) / 10));
    const two = stepSizer(2, 100);
    two.took(10); // the fixed part is not known before a step of one unit
    expect(two.size).toBe(1);
    two.took(10);
    two.took(5); // one unit in 5 ms: the fixed part is 5 ms, the target 5 + STEP_MS
    expect(two.size).toBe(Math.round((5 + STEP_MS) / 5));
  });

  test("a fixed part under STEP_MS gets twice itself", () => {
    const sizer = stepSizer(1, 100);
    sizer.took(STEP_MS * 0.6); // the target: 1.2 STEP_MS, twice as many units as now
    expect(sizer.size).toBe(2);
  });

  test("a step whose fixed part holds nothing (it waits for the database) gets as long again of units", () => {
    const sizer = stepSizer(1, 100, { holds: false });
    sizer.took(10); // one unit in 10 ms: the target is 20 ms, where a step that holds gets 10 + STEP_MS
    expect(sizer.size).toBe(2);
    sizer.took(12); // two units in 12 ms: 20 / 12 as many
    expect(sizer.size).toBe(3);
    const holding = stepSizer(1, 100);
    holding.took(10);
    expect(holding.size).toBe(Math.round((10 + STEP_MS) / 10));
    const quick = stepSizer(1, 100, { holds: false });
    quick.took(STEP_MS * 0.6); // a fixed part under STEP_MS: still STEP_MS of units on top of it
    expect(quick.size).toBe(2);
  });

  test("never under one unit nor over the most", () => {
    const sizer = stepSizer(2, 3);
    sizer.took(100);
    expect(sizer.size).toBe(1);
    for (let i = 0; i < 5; i++) sizer.took(0.01);
    expect(sizer.size).toBe(3);
  });
});
