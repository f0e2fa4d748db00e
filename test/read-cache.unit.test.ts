// The read cache's loads (src/db/read-cache.ts): requests that miss together at one stamp read the database once;
// a later stamp is read afresh, unless only this process's commits that wrote none of the cache's tables came
// between. The caches' correctness across instances is tested end to end (read-cache.e2e).
import { describe, expect, test } from "bun:test";
import { ownCommits } from "../src/db/sqlite/own-commits";
import { readCache } from "../src/db/read-cache";

/** A database whose change stamp the test moves, and a load that counts its reads and resolves when told. */
function setup(commits: ReturnType<typeof ownCommits> | null = null) {
  let stamp: string | null = "1:10:7";
  const db = { changeStamp: () => stamp, ownCommits: commits };
  let reads = 0;
  const pending: ((value: string) => void)[] = [];
  const load = () => {
    reads++;
    return new Promise<string>((resolve) => pending.push(resolve));
  };
  return {
    cache: readCache<string, string>(db, { max: 10, tables: ["api_keys"] }),
    load,
    reads: () => reads,
    setStamp: (s: string | null) => (stamp = s),
    resolveAll: (value: string) => pending.splice(0).forEach((resolve) => resolve(value)),
  };
}

describe("readCache loads", () => {
  test("requests that miss one key at the same stamp wait for one read, and all get its value", async () => {
    const s = setup();
    const gets = [s.cache.get("k", s.load), s.cache.get("k", s.load), s.cache.get("k", s.load)];
    await Promise.resolve();
    s.resolveAll("v1");
    expect(await Promise.all(gets)).toEqual(["v1", "v1", "v1"]);
    expect(s.reads()).toBe(1);
    // kept: the next request at that stamp reads nothing
    expect(await s.cache.get("k", s.load)).toBe("v1");
    expect(s.reads()).toBe(1);
  });

  test("a request at a later stamp does not take a read begun before it: it reads again", async () => {
    const s = setup();
    const first = s.cache.get("k", s.load);
    await Promise.resolve();
    s.setStamp("2:11:7");
    const second = s.cache.get("k", s.load);
    await Promise.resolve();
    expect(s.reads()).toBe(2);
    s.resolveAll("v2");
    expect(await Promise.all([first, second])).toEqual(["v2", "v2"]);
  });

  test("without a stamp (a commit under way) every request reads for itself", async () => {
    const s = setup();
    s.setStamp(null);
    const gets = [s.cache.get("k", s.load), s.cache.get("k", s.load)];
    await Promise.resolve();
    s.resolveAll("v");
    await Promise.all(gets);
    expect(s.reads()).toBe(2);
  });

  test("a failed read fails the requests that waited for it, and the next request reads again", async () => {
    const s = setup();
    let reads = 0;
    const failing = () => (reads++, Promise.reject(new Error("database unavailable")));
    const settled = await Promise.allSettled([s.cache.get("k", failing), s.cache.get("k", failing)]);
    expect(settled.map((r) => r.status === "rejected" && (r.reason as Error).message)).toEqual(["database unavailable", "database unavailable"]);
    expect(reads).toBe(1);
    const again = s.cache.get("k", s.load);
    await Promise.resolve();
    s.resolveAll("v");
    expect(await again).toBe("v");
    expect(s.reads()).toBe(1);
  });

  test("a request at a later stamp waits for a read begun before it when only own commits that wrote none of its tables came between", async () => {
    const commits = ownCommits();
    const s = setup(commits);
    /** This process commits from one stamp to the next, writing `table`; then a request for the key (not awaited). */
    const afterCommit = async (from: string, to: string, table: string) => {
      commits.record(from, to, new Set([table]));
      s.setStamp(to);
      const got = s.cache.get("k", s.load);
      await Promise.resolve();
      return { got };
    };
    const first = s.cache.get("k", s.load);
    await Promise.resolve();
    // a sign-up of this process: it wrote subscribers (and what its triggers keep), not api_keys
    const second = await afterCommit("1:10:7", "2:11:7", "subscribers");
    expect(s.reads()).toBe(1);
    s.resolveAll("v1");
    expect(await Promise.all([first, second.got])).toEqual(["v1", "v1"]);
    // a key's row written since: the next request reads again, and a request behind it waits for that read
    const third = await afterCommit("2:11:7", "3:12:7", "api_keys");
    expect(s.reads()).toBe(2);
    const fourth = await afterCommit("3:12:7", "4:13:7", "subscribers");
    expect(s.reads()).toBe(2);
    s.resolveAll("v2");
    expect(await Promise.all([third.got, fourth.got])).toEqual(["v2", "v2"]);
  });
});

describe("readCache memory", () => {
  test("entries past their age, which no request is answered from again, are dropped, and so are those read again", async () => {
    const db = { changeStamp: () => "1:10:7", ownCommits: null };
    const cache = readCache<string, string>(db, { max: 100, maxAgeMs: 50 });
    for (const key of ["a", "b", "c"]) expect(await cache.get(key, async () => `value of ${key}`)).toBe(`value of ${key}`);
    expect(cache.size()).toBe(3);
    /** Polls until the cache holds nothing, for 5 s at most. */
    const emptied = async () => {
      const deadline = Date.now() + 5_000;
      while (cache.size() > 0 && Date.now() < deadline) await Bun.sleep(10);
      return cache.size();
    };
    expect(await emptied()).toBe(0);
    // and what is read again afterwards is kept again, and goes again
    let reads = 0;
    expect(await cache.get("a", async () => (reads++, "again"))).toBe("again");
    expect(await cache.get("a", async () => (reads++, "never"))).toBe("again");
    expect(reads).toBe(1);
    expect(cache.size()).toBe(1);
    expect(await emptied()).toBe(0);
  });
});
