// The web services' SQL on either engine (issue 18; TEST_ENGINE=pg for PostgreSQL): rate limits, accounts and keys,
// the waitlist limit under concurrent creates, unique names, settings, captcha solutions spent once, landing pages,
// the key lookup and its waitlist cache, and /healthz reporting a database outage as 503.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { SQL } from "bun";
import { openDatabase, type Db } from "../src/db/open";
import { countAndDecide } from "../src/http/rate-limit";
import { createAccount, regenerateWaitlistKey } from "../src/account/service";
import { createWaitlist, listWaitlists, updateSettings } from "../src/waitlists/service";
import { releaseSolution, spendSolution } from "../src/forms/captcha";
import { createPage, findPage, patchPage, publish } from "../src/landing/service";
import { createPreview, findPreview } from "../src/landing/preview";
import { buildApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { createDispatcher } from "../src/outbox/dispatcher";
import type { Waitlist } from "../src/http/api";
import { onCleanup, tempDir } from "./support/cleanup";
import { scratchPgUrl } from "./support/pg";
import { engine, until } from "./support/server";

async function fresh(): Promise<{ db: Db; url: string }> {
  const url = engine === "pg" ? await scratchPgUrl() : `file:${join(tempDir("waitlist-web-"), "t.db")}`;
  const db = await openDatabase({ url, poolSize: 8 });
  onCleanup(() => db.close().catch(() => {}));
  return { db, url };
}

let db: Db;
beforeAll(async () => {
  ({ db } = await fresh());
});
afterAll(() => db.close().catch(() => {}));

const uniq = () => Math.random().toString(36).slice(2, 8);
const account = (plan: "free" | "business" | "launch" = "business") => createAccount(db, { username: `u${uniq()}`, plan, aiCredits: 0, label: "default" });
const waitlistRow = async (id: string) => (await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, id)))[0] as unknown as Waitlist;

describe(`on ${engine}`, () => {
  test("the rate limit counts concurrent requests in one window and refuses the rest without counting them", async () => {
    const a = await account();
    const decisions = await Promise.all(Array.from({ length: 12 }, () => countAndDecide(db, `key:${a.keyId}:test`, 5, [sql`UPDATE api_keys SET last_used_at = 42 WHERE id = ${a.keyId}`])));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
    expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
    const [row] = await db.rows<{ count: number }>(sql`SELECT count FROM rate_limits WHERE subject = ${`key:${a.keyId}:test`}`);
    expect(row.count).toBe(5);
    const [key] = await db.rows<{ last_used_at: number }>(sql`SELECT last_used_at FROM api_keys WHERE id = ${a.keyId}`);
    expect(key.last_used_at).toBe(42);
  });

  test("a taken username is 409; concurrent key regenerations leave exactly one active key", async () => {
    const a = await account();
    const again = await createAccount(db, { username: a.account.username, plan: "free", aiCredits: 0, label: "x" }).catch((e) => e);
    expect(again.status).toBe(409);
    const w = await createWaitlist(db, { accountId: a.account.id, plan: "business" }, { name: `Keys ${uniq()}` } as never, "http://localhost");
    const keys = await Promise.all(Array.from({ length: 6 }, () => regenerateWaitlistKey(db, { id: w.waitlist.id, accountId: a.account.id })));
    const active = await db.rows<{ id: string }>(sql`SELECT id FROM api_keys WHERE waitlist_id = ${w.waitlist.id} AND revoked_at IS NULL`);
    expect(active).toHaveLength(1);
    expect(keys.map((k) => k.id)).toContain(active[0].id);
  });

  test("the plan's waitlist limit holds under concurrent creates; slug, name (any case) and custom domain are unique", async () => {
    const a = await account("launch");
    const owner = { accountId: a.account.id, plan: "launch" as const };
    const made = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => createWaitlist(db, owner, { name: `Limit ${uniq()} ${i}` } as never, "http://localhost")));
    expect(made.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(made.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.status)).toEqual([403, 403, 403]);

    const b = await account();
    const other = { accountId: b.account.id, plan: "business" as const };
    const name = `Rocket ${uniq()}`;
    const first = await createWaitlist(db, other, { name, landing_page: { headline: "Fly with us" } } as never, "http://localhost");
    expect((await createWaitlist(db, other, { name: `x ${uniq()}`, slug: first.waitlist.slug } as never, "http://localhost").catch((e) => e)).message).toContain("slug");
    expect((await createWaitlist(db, other, { name: name.toUpperCase(), slug: `s-${uniq()}` } as never, "http://localhost").catch((e) => e)).message).toContain("name");
    const second = await createWaitlist(db, other, { name: `Second ${uniq()}` } as never, "http://localhost");
    expect((await findPage(db, first.waitlist.id)).headline).toBe("Fly with us");

    const listed = await listWaitlists(db, b.account.id);
    expect(listed.waitlists.map((w) => w.id)).toEqual([second.waitlist.id, first.waitlist.id]);
    expect(listed.waitlists[0]).toMatchObject({ subscribers: 0, views: 0 });

    const domain = `${uniq()}.example.com`;
    const settings = await updateSettings(db, await waitlistRow(first.waitlist.id), { double_opt_in: false, referral_rewards: { enabled: true }, custom_domain: domain } as never, { blockPrivateWebhooks: true });
    expect(settings).toMatchObject({ double_opt_in: false, referral_rewards: { enabled: true }, validate_emails: true, custom_domain: domain });
    const taken = await updateSettings(db, await waitlistRow(second.waitlist.id), { custom_domain: domain } as never, { blockPrivateWebhooks: true }).catch((e) => e);
    expect(taken.status).toBe(409);
    expect(taken.message).toContain("custom_domain");
    const renamed = await updateSettings(db, await waitlistRow(second.waitlist.id), { name: name.toLowerCase() } as never, { blockPrivateWebhooks: true }).catch((e) => e);
    expect(renamed.status).toBe(409);
  });

  test("a captcha solution is spent once among concurrent uses, and can be given back", async () => {
    const solution = { signature: `sig-${uniq()}`, expiresAt: Date.now() + 60_000 };
    const spent = await Promise.allSettled(Array.from({ length: 8 }, () => spendSolution(db, solution)));
    expect(spent.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(spent.filter((r) => r.status === "rejected").every((r) => (r as PromiseRejectedResult).reason.status === 400)).toBe(true);
    await releaseSolution(db, solution);
    await spendSolution(db, solution);
  });

  test("a landing page: one per waitlist, patched and published against its version, previewed", async () => {
    const a = await account();
    const made = await createWaitlist(db, { accountId: a.account.id, plan: "business" }, { name: `Page ${uniq()}` } as never, "http://localhost");
    const w = await waitlistRow(made.waitlist.id);
    await createPage(db, w, { headline: "First headline", collect_name: true } as never);
    expect((await createPage(db, w, { headline: "Again" } as never).catch((e) => e)).status).toBe(409);
    await Promise.all([patchPage(db, w, { description: "one" } as never), patchPage(db, w, { collect_phone: true } as never)]);
    const patched = await findPage(db, w.id);
    expect(patched).toMatchObject({ description: "one", collectName: true, collectPhone: true, version: 3 });
    expect((await publish(db, w, false, "http://localhost")).status).toBe("published");
    expect(await findPage(db, w.id)).toMatchObject({ status: "published", version: 4 });
    const preview = await createPreview(db, w, { headline: "Unsaved" } as never, "http://localhost");
    const found = await findPreview(db, preview.preview_url.split("/").pop()!);
    expect(found?.page).toMatchObject({ headline: "Unsaved", collectName: true });
    expect(found?.waitlist.id).toBe(w.id);
  });
});

describe(`the app on ${engine}`, () => {
  let url: string;
  let appDb: Db;
  let app: { handle(r: Request): Promise<Response> };
  beforeAll(async () => {
    ({ db: appDb, url } = await fresh());
    const config = loadConfig({ DATABASE_URL: url, BASE_URL: "http://localhost:3000" });
    const log = createLogger("error", () => {});
    app = buildApp({ config, db: appDb, log, dispatcher: createDispatcher({ db: appDb, config, log }) }) as never;
  });
  const call = async (method: string, path: string, key?: string, body?: unknown) => {
    const r = await app.handle(
      new Request(`http://localhost:3000${path}`, { method, headers: { ...(key ? { "x-api-key": key } : {}), "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) }),
    );
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };

  test("the key lookup, its rate-limit headers, and the waitlist read again once its version changes", async () => {
    const a = await createAccount(appDb, { username: `app${uniq()}`, plan: "business", aiCredits: 0, label: "default" });
    expect((await call("GET", "/api/v1/me", a.apiKey)).body.data.account.username).toBe(a.account.username);
    expect((await call("GET", "/api/v1/me", "wl_acct_nope")).status).toBe(401);
    const made = await call("POST", "/api/v1/waitlists", a.apiKey, { name: `App ${uniq()}` });
    expect(made.status).toBe(201);
    const path = `/api/v1/waitlist/${made.body.data.waitlist.key}/settings`;
    const was = (await call("GET", path, a.apiKey)).body.data.settings.double_opt_in;
    expect(typeof was).toBe("boolean");
    expect((await call("PATCH", path, a.apiKey, { double_opt_in: !was })).status).toBe(200);
    expect((await call("GET", path, a.apiKey)).body.data.settings.double_opt_in).toBe(!was);
    // another instance's change (only the version tells): this instance reads the row again
    await appDb.exec(sql`UPDATE waitlists SET double_opt_in = ${was} WHERE key = ${made.body.data.waitlist.key}`);
    expect((await call("GET", path, a.apiKey)).body.data.settings.double_opt_in).toBe(was);
  });

  test("a NUL character (which PostgreSQL's text cannot hold) in a URL, a JSON body or a form is a 4xx, not a 500", async () => {
    const a = await createAccount(appDb, { username: `nul${uniq()}`, plan: "business", aiCredits: 0, label: "default" });
    expect((await call("POST", "/api/v1/waitlists", a.apiKey, { name: "bad\u0000name" })).status).toBe(400);
    expect((await call("POST", "/api/v1/waitlists", a.apiKey, { name: "ok", ["x\u0000"]: 1 })).status).toBe(400);
    const made = (await call("POST", "/api/v1/waitlists", a.apiKey, { name: `Nul ${uniq()}` })).body.data.waitlist;
    expect((await call("GET", "/api/v1/waitlist/a%00b/settings", a.apiKey)).status).toBe(404);
    expect((await call("GET", "/p/a%00b")).status).toBe(404);
    expect((await call("GET", "/healthz?x=%00")).status).toBe(200);
    // a query parameter too (the fuzz test found this one on PostgreSQL: a 500 from the search)
    const search = await call("GET", `/api/v1/waitlist/${made.key}/subscribers?q=%00`, a.apiKey);
    expect(search.status).toBe(400);
    expect(search.body.message).toContain("q must not contain a NUL character");
    const form = await app.handle(
      new Request(`http://localhost:3000/s/${made.key}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost:3000", accept: "application/json" }, body: "email=a%00b%40example.com" }),
    );
    expect(form.status).toBe(400);
  });

  test("/healthz answers 200, and 503 while the database is unavailable", async () => {
    expect(await call("GET", "/healthz")).toEqual({ status: 200, body: { status: "ok" } });
    if (engine === "pg") {
      // the server refuses this database's connections and ends the open ones: an outage, then recovery
      const name = new URL(url).pathname.slice(1);
      const admin = new SQL(url.replace(/\/[^/]*$/, "/postgres"), { max: 1 });
      try {
        await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
        // pg_terminate_backend does not wait for the sessions to end: one still ending would answer the checks below
        await until(async () => (await admin.unsafe(`SELECT 1 FROM pg_stat_activity WHERE datname = '${name}'`)).length === 0, 5_000, "the sessions to end");
        expect(await call("GET", "/healthz")).toEqual({ status: 503, body: { status: "unavailable" } });
        await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        expect((await call("GET", "/healthz")).status).toBe(200);
      } finally {
        await admin.close();
      }
    }
    // embedded: a database the process can no longer use (closed); PostgreSQL: the pool ended
    await appDb.close();
    expect((await call("GET", "/healthz")).status).toBe(503);
  });
});
