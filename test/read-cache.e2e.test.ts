// Issue 19: reads are cached until anything is committed, so a change made through one instance is seen by the very
// next request on the other. Two instances on one database (either engine); every read is made twice on instance B
// first, so that its answer is cached there, then the change goes through instance A.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engine, startServer, type TestServer } from "./support/server";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { sql } from "drizzle-orm";
import { databasePath, openDatabase } from "../src/db/open";

let a: TestServer;
let b: TestServer;
beforeAll(async () => {
  // rate limits off: with them on, every API request commits its counter and nothing would stay cached
  a = await startServer({ env: { RATE_LIMITS: "off" } });
  b = await startServer({ dbUrl: a.dbUrl, env: { RATE_LIMITS: "off" } });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

/** The same read twice on B (the second may come from its cache); the second answer. */
async function warm(path: string, key?: string) {
  const first = await b.request("GET", path, { key });
  const second = await b.request("GET", path, { key });
  expect(second.status).toBe(first.status);
  return second;
}

async function waitlist(key: string) {
  const r = await a.request("POST", "/api/v1/waitlists", { key, body: { name: `Cache ${uniq()}`, landing_page: { headline: "Version one" } } });
  expect(r.status).toBe(201);
  const w = r.body.data.waitlist;
  return { w, path: `/api/v1/waitlist/${w.key}` };
}

/** A confirmed subscriber (the waitlist has no double opt-in), as the API's Subscriber. */
async function signUp(key: string, path: string, email: string) {
  expect((await a.request("POST", `${path}/sign-up`, { key, body: { email } })).status).toBe(200);
  const r = await a.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key });
  expect(r.status).toBe(200);
  return r.body.data.subscriber as { id: string; sign_up_token: string };
}

describe("keys", () => {
  test("a revoked account key is refused by the next request on the other instance", async () => {
    const { key } = await a.account("business");
    const made = await a.request("POST", "/api/v1/account/keys", { key, body: { name: "second" } });
    const second = made.body.data.api_key;
    expect((await warm("/api/v1/me", second.api_key)).body.data.api_key.name).toBe("second");
    expect((await a.request("DELETE", `/api/v1/account/keys/${second.id}`, { key })).status).toBe(200);
    const after = await b.request("GET", "/api/v1/me", { key: second.api_key });
    expect(after.status).toBe(401);
    expect(after.body.message).toBe("Invalid API key");
  });

  test("a regenerated waitlist key: the old one is refused and the new one accepted by the next requests on the other instance", async () => {
    const { key } = await a.account("growth");
    const { path } = await waitlist(key);
    const old = (await a.request("POST", `${path}/api-key`, { key })).body.data.api_key.api_key;
    expect((await warm(`${path}/settings`, old)).status).toBe(200);
    const fresh = (await a.request("POST", `${path}/api-key`, { key })).body.data.api_key.api_key;
    expect((await b.request("GET", `${path}/settings`, { key: old })).status).toBe(401);
    expect((await b.request("GET", `${path}/settings`, { key: fresh })).status).toBe(200);
  });

  test("a plan change is seen by the next request on the other instance: /me, and a per-waitlist key's plan gate", async () => {
    const { key, username } = await a.account("growth");
    const { path } = await waitlist(key);
    const waitlistKey = (await a.request("POST", `${path}/api-key`, { key })).body.data.api_key.api_key;
    expect((await warm("/api/v1/me", key)).body.data.plan.name).toBe("Growth");
    expect((await warm(`${path}/settings`, waitlistKey)).status).toBe(200);
    expect((await a.cli("account", "set-plan", "--username", username, "--plan", "free")).code).toBe(0);
    expect((await b.request("GET", "/api/v1/me", { key })).body.data.plan.name).toBe("Free");
    expect((await b.request("GET", `${path}/settings`, { key: waitlistKey })).status).toBe(403);
  });

  test("a new waitlist is counted in /me by the next request on the other instance", async () => {
    const { key } = await a.account("business");
    await waitlist(key);
    expect((await warm("/api/v1/me", key)).body.data.waitlists.count).toBe(1);
    await waitlist(key);
    expect((await b.request("GET", "/api/v1/me", { key })).body.data.waitlists.count).toBe(2);
  });
});

describe("pages", () => {
  test("an edit of a published page, then unpublishing it, are seen by the next request on the other instance", async () => {
    const { key } = await a.account("business");
    const { w, path } = await waitlist(key);
    expect((await a.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
    expect((await warm(`/p/${w.slug}`)).text).toContain("Version one");
    expect((await a.request("PATCH", `${path}/landing-page`, { key, body: { headline: "Version two" } })).status).toBe(200);
    const edited = await b.request("GET", `/p/${w.slug}`);
    expect(edited.text).toContain("Version two");
    expect(edited.text).not.toContain("Version one");
    expect((await a.request("POST", `${path}/landing-page/publish`, { key, body: { unpublish: true } })).status).toBe(200);
    const plain = await b.request("GET", `/p/${w.slug}`);
    expect(plain.status).toBe(200);
    expect(plain.text).not.toContain("Version two");
    expect(plain.text).toContain(`action="/s/${w.key}"`);
  });

  test("a published page carries an ETag: a conditional request is 304 until the page changes on the other instance; gzip when asked", async () => {
    const { key } = await a.account("business");
    const { w, path } = await waitlist(key);
    expect((await a.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
    const plain = await b.request("GET", `/p/${w.slug}`, { headers: { "accept-encoding": "identity" } });
    const etag = plain.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(plain.headers.get("cache-control")).toBe("no-cache");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-type")).toBe("text/html; charset=utf-8");
    // a page, not a file: no ranges, the whole page to a Range request
    expect(plain.headers.get("accept-ranges")).toBeNull();
    expect(plain.headers.get("content-range")).toBeNull();
    const ranged = await b.request("GET", `/p/${w.slug}`, { headers: { range: "bytes=0-9", "accept-encoding": "identity" } });
    expect([ranged.status, ranged.text, ranged.headers.get("content-range")]).toEqual([200, plain.text, null]);
    const again = await b.request("GET", `/p/${w.slug}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    // a referral link is another page (its form carries the code)
    const referred = await b.request("GET", `/p/${w.slug}?ref=abc123`, { headers: { "if-none-match": etag } });
    expect(referred.status).toBe(200);
    expect(referred.text).toContain('name="ref" value="abc123"');
    expect(referred.headers.get("etag")).not.toBe(etag);
    const zipped = await fetch(`${b.url}/p/${w.slug}`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect([zipped.headers.get("content-type"), zipped.headers.get("content-range")]).toEqual(["text/html; charset=utf-8", null]);
    expect(zipped.headers.get("etag")).toBe(etag);
    expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer())))).toBe(plain.text);

    expect((await a.request("PATCH", `${path}/landing-page`, { key, body: { headline: "Version three" } })).status).toBe(200);
    const changed = await b.request("GET", `/p/${w.slug}`, { headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.text).toContain("Version three");
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  test("a waitlist's new name is seen on its status page by the next request on the other instance", async () => {
    const { key } = await a.account("business");
    const { path } = await waitlist(key);
    const token = (await signUp(key, path, `name-${uniq()}@example.com`)).sign_up_token;
    await warm(`/t/${token}`);
    const name = `Renamed ${uniq()}`;
    expect((await a.request("PATCH", `${path}/settings`, { key, body: { name } })).status).toBe(200);
    expect((await b.request("GET", `/t/${token}`)).text).toContain(name);
  });
});

describe("subscribers", () => {
  test("points given on one instance move the subscriber in every read of the other at once: GET, list, status page and live numbers", async () => {
    const { key } = await a.account("business");
    const { path } = await waitlist(key);
    const tokens: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await signUp(key, path, `line${i}-${uniq()}@example.com`);
      tokens.push(s.sign_up_token);
      ids.push(s.id);
    }
    const last = ids[2];
    expect((await warm(`${path}/subscribers/${last}`, key)).body.data.subscriber.position).toBe(3);
    expect((await warm(`${path}/subscribers?sort_by=position&sort_dir=asc&limit=20`, key)).body.data.subscribers.map((s: any) => s.id)).toEqual(ids);
    expect((await warm(`/t/${tokens[2]}/live`)).body.position).toBe(3);
    const page = (await warm(`/t/${tokens[2]}`)).text;

    expect((await a.request("PUT", `${path}/subscribers/${last}`, { key, body: { points: 500 } })).status).toBe(200);

    const one = (await b.request("GET", `${path}/subscribers/${last}`, { key })).body.data.subscriber;
    expect(one.points).toBe(500);
    expect(one.position).toBe(1);
    const list = (await b.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=20`, { key })).body.data.subscribers;
    expect(list.map((s: any) => [s.id, s.position])).toEqual([
      [last, 1],
      [ids[0], 2],
      [ids[1], 3],
    ]);
    const live = (await b.request("GET", `/t/${tokens[2]}/live`)).body;
    expect(live).toMatchObject({ position: 1, points: 500 });
    expect((await b.request("GET", `/t/${tokens[2]}`)).text).not.toBe(page);
  });

  test("a deleted subscriber is gone from the other instance's next reads", async () => {
    const { key } = await a.account("business");
    const { path } = await waitlist(key);
    const sub = await signUp(key, path, `gone-${uniq()}@example.com`);
    expect((await warm(`${path}/subscribers/${sub.id}`, key)).status).toBe(200);
    expect((await warm(`/t/${sub.sign_up_token}/live`)).status).toBe(200);
    expect((await a.request("DELETE", `${path}/subscribers/${sub.id}`, { key })).status).toBe(200);
    expect((await b.request("GET", `${path}/subscribers/${sub.id}`, { key })).status).toBe(404);
    expect((await b.request("GET", `/t/${sub.sign_up_token}/live`)).status).toBe(404);
    expect((await b.request("GET", `${path}/subscribers`, { key })).body.data.total).toBe(0);
  });
});

describe("views", () => {
  test("a visitor counted through one instance is not counted again through the other, and each instance answers a repeat without a second count", async () => {
    const { key } = await a.account("business");
    const { path } = await waitlist(key);
    const views = async () => (await a.request("GET", `${path}/stats`, { key })).body.data.views_total;
    const visitor = { "user-agent": `cache-test-${uniq()}` };
    const counted = [];
    for (const s of [a, b, a, b]) counted.push((await s.request("POST", `${path}/log-view`, { key, body: {}, headers: visitor })).body.success);
    expect(counted).toEqual([true, false, false, false]);
    expect(await views()).toBe(1);
  });
});

describe("the change stamp", () => {
  test.skipIf(engine !== "sqlite")("other processes opening and closing the database file leave the server's WAL index alone", async () => {
    const { key } = await a.account("business");
    const { path } = await waitlist(key);
    for (let i = 0; i < 5; i++) {
      // a CLI command or a third instance: opens the file (SQLite truncates an index nobody else holds), closes it
      const other = await openDatabase({ url: a.dbUrl });
      await other.close();
      for (const s of [a, b]) expect((await s.request("GET", `${path}/settings`, { key })).status).toBe(200);
      expect((await a.request("PATCH", `${path}/settings`, { key, body: { name: `Stamp ${i} ${uniq()}` } })).status).toBe(200);
    }
    expect(a.proc.exitCode).toBeNull();
    expect(b.proc.exitCode).toBeNull();
  });

  test.skipIf(engine !== "sqlite")("each instance still holds SQLite's locks on the WAL index (the stamp's reads never drop them)", async () => {
    const { key } = await a.account("business");
    await waitlist(key);
    for (const s of [a, b]) expect((await s.request("GET", "/api/v1/me", { key })).status).toBe(200);
    // /proc/locks: "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128"; a process that closed any descriptor of the
    // file would have lost them all, and another process would take the index as abandoned and truncate it
    const inode = statSync(`${databasePath(a.dbUrl)}-shm`).ino;
    const holders = new Set(
      readFileSync("/proc/locks", "utf8")
        .split("\n")
        .map((line) => line.trim().split(/\s+/))
        .filter((f) => f[1] === "POSIX" && Number(f[5]?.split(":")[2]) === inode)
        .map((f) => Number(f[4])),
    );
    expect(holders.has(a.proc.pid)).toBe(true);
    expect(holders.has(b.proc.pid)).toBe(true);
  });
});

describe("the change stamp, read once per event-loop turn", () => {
  test.skipIf(engine !== "sqlite")("another connection's commit is seen from the next turn on; this instance's own write as it ends, before its caller goes on", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stamp-"));
    const url = `file:${join(dir, "stamp.db")}`;
    const db = await openDatabase({ url });
    const other = new Database(databasePath(url)!);
    // the turn's end is held back (setImmediate queues without running) so that only an own write can refresh it;
    // an interactive transaction schedules nothing of its own
    const held: (() => void)[] = [];
    const realSetImmediate = globalThis.setImmediate;
    try {
      globalThis.setImmediate = ((fn: () => void) => void held.push(fn)) as unknown as typeof setImmediate;
      const first = db.changeStamp();
      expect(first).not.toBeNull();
      // this instance's own write: the stamp read right after it is the new one, though the turn was not let end
      await db.tx((tx) => tx.exec(sql`INSERT OR REPLACE INTO meta (key, value) VALUES ('stamp-test', ${"own"})`));
      const afterOwn = db.changeStamp();
      expect(afterOwn).not.toBeNull();
      expect(afterOwn).not.toBe(first);
      // a commit by another connection (another instance) in the middle of the turn: the turn keeps its stamp
      other.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('stamp-test', ?)").run(["other"]);
      expect(db.changeStamp()).toBe(afterOwn);
      // and the next turn sees it
      globalThis.setImmediate = realSetImmediate;
      for (const fn of held.splice(0)) fn();
      const next = db.changeStamp();
      expect(next).not.toBeNull();
      expect(next).not.toBe(afterOwn);
    } finally {
      globalThis.setImmediate = realSetImmediate;
      other.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("one instance's own writes", () => {
  /** Sign-ups through A, one after another, until stopped: A's own commits, which write nothing a key lookup reads. */
  function signUpsOn(key: string, path: string) {
    let going = true;
    let n = 0;
    const done = (async () => {
      while (going) expect((await a.request("POST", `${path}/sign-up`, { key, body: { email: `stream-${n++}-${uniq()}@example.com` } })).status).toBe(200);
    })();
    return {
      /** Resolves once at least `count` more sign-ups were answered. */
      async past(count: number) {
        const until = n + count;
        while (n < until) await Bun.sleep(5);
      },
      stop: async () => {
        going = false;
        await done;
      },
    };
  }

  test("while sign-ups pour in through it, a change made through the same instance is seen by its next request: revoke, new waitlist, new waitlist key, page edit", async () => {
    const { key } = await a.account("growth");
    const { w, path } = await waitlist(key);
    const made = (await a.request("POST", "/api/v1/account/keys", { key, body: { name: "doomed" } })).body.data.api_key;
    const waitlistKey = (await a.request("POST", `${path}/api-key`, { key })).body.data.api_key.api_key;
    expect((await a.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
    const stream = signUpsOn(key, path);
    try {
      for (const read of [() => a.request("GET", "/api/v1/me", { key: made.api_key }), () => a.request("GET", `${path}/settings`, { key: waitlistKey }), () => a.request("GET", `/p/${w.slug}`)]) {
        expect((await read()).status).toBe(200);
        await stream.past(3);
        expect((await read()).status).toBe(200);
      }
      expect((await a.request("GET", "/api/v1/me", { key })).body.data.waitlists.count).toBe(1);

      expect((await a.request("DELETE", `/api/v1/account/keys/${made.id}`, { key })).status).toBe(200);
      expect((await a.request("GET", "/api/v1/me", { key: made.api_key })).status).toBe(401);

      await waitlist(key);
      expect((await a.request("GET", "/api/v1/me", { key })).body.data.waitlists.count).toBe(2);

      const fresh = (await a.request("POST", `${path}/api-key`, { key })).body.data.api_key.api_key;
      expect((await a.request("GET", `${path}/settings`, { key: waitlistKey })).status).toBe(401);
      expect((await a.request("GET", `${path}/settings`, { key: fresh })).status).toBe(200);

      await stream.past(3);
      expect((await a.request("PATCH", `${path}/landing-page`, { key, body: { headline: "Version two" } })).status).toBe(200);
      expect((await a.request("GET", `/p/${w.slug}`)).text).toContain("Version two");
    } finally {
      await stream.stop();
    }
  });

  test("while sign-ups pour in through it, a plan change made by the CLI (another process) is seen by its next request", async () => {
    const { key, username } = await a.account("growth");
    const { path } = await waitlist(key);
    const stream = signUpsOn(key, path);
    try {
      expect((await a.request("GET", "/api/v1/me", { key })).body.data.plan.name).toBe("Growth");
      await stream.past(3);
      expect((await a.request("GET", "/api/v1/me", { key })).body.data.plan.name).toBe("Growth");
      expect((await a.cli("account", "set-plan", "--username", username, "--plan", "free")).code).toBe(0);
      expect((await a.request("GET", "/api/v1/me", { key })).body.data.plan.name).toBe("Free");
    } finally {
      await stream.stop();
    }
  });
});
