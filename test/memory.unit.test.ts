// The resident-memory budget's decision (src/memory.ts): a full collection only over the budget, only once the memory
// has grown by 8 MB since the last collection left it, and at most once every 3 s.
import { describe, expect, test } from "bun:test";
import { keepMemoryNear, memoryBudget, type Collection } from "../src/memory";

const MB = 1024 * 1024;

/** The budget of 120 MB on a runtime whose resident memory the test sets; a collection leaves it at `after` (or where it was). */
function budget() {
  const state = { rss: 0, after: null as number | null, collections: 0, busy: false };
  const check = memoryBudget(120 * MB, {
    rss: () => state.rss,
    busy: () => state.busy,
    collect: () => {
      state.collections++;
      if (state.after !== null) state.rss = state.after;
    },
  });
  return { state, check };
}

describe("memory budget", () => {
  test("nothing is collected at or under the budget, however long it runs", () => {
    const { state, check } = budget();
    state.rss = 120 * MB;
    for (let at = 0; at < 60_000; at += 1_000) expect(check(at)).toBe(false);
    expect(state.collections).toBe(0);
  });

  test("over the budget: collected once, then again only after 8 MB more than the collection left", () => {
    const { state, check } = budget();
    state.rss = 150 * MB;
    state.after = 140 * MB;
    expect(check(0)).toBe(true);
    // memory a collection cannot give back: standing at 140 MB over the budget collects nothing more
    for (let at = 1_000; at <= 30_000; at += 1_000) expect(check(at)).toBe(false);
    state.rss = 147.9 * MB;
    expect(check(31_000)).toBe(false);
    state.rss = 148 * MB;
    expect(check(32_000)).toBe(true);
    expect(state.collections).toBe(2);
  });

  test("at most one collection every 3 s while the memory keeps growing", () => {
    const { state, check } = budget();
    const times: number[] = [];
    for (let at = 0; at <= 10_000; at += 1_000) {
      // grows 20 MB a second; a collection gives nothing back
      state.rss = (130 + (20 * at) / 1_000) * MB;
      if (check(at)) times.push(at);
    }
    expect(times).toEqual([0, 3_000, 6_000, 9_000]);
  });

  test("a collection that gives memory back lowers the mark the next growth is counted from", () => {
    const { state, check } = budget();
    state.rss = 170 * MB;
    state.after = 125 * MB;
    expect(check(0)).toBe(true);
    state.rss = 134 * MB;
    expect(check(5_000)).toBe(true);
    expect(state.collections).toBe(2);
  });

  test("nothing is collected while background work (an import) runs; the first check after it collects (issue 47)", () => {
    const { state, check } = budget();
    state.rss = 200 * MB;
    state.busy = true;
    for (let at = 0; at <= 30_000; at += 1_000) expect(check(at)).toBe(false);
    state.busy = false;
    expect(check(31_000)).toBe(true);
    expect(state.collections).toBe(1);
  });

  test("a budget under the process's memory collects within its first checks and says what it stopped and gave back", async () => {
    const heard: Collection[] = [];
    const stop = keepMemoryNear(1, undefined, (c) => heard.push(c));
    try {
      const deadline = performance.now() + 5_000;
      while (heard.length === 0 && performance.now() < deadline) await Bun.sleep(50);
      expect(heard.length).toBe(1);
      const [c] = heard;
      expect(c!.rss_before_mb).toBeGreaterThan(1);
      expect(c!.rss_after_mb).toBeGreaterThan(0);
      expect(c!.ms).toBeGreaterThanOrEqual(0);
    } finally {
      stop();
    }
  });
});
