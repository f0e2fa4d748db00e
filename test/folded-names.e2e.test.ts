// One meaning of "the same name" on both engines (issue 44 item 5): tag names, waitlist names and search compare
// names folded by one rule computed in code (src/db/fold-names.ts), so letters outside ASCII give the same answers on
// SQLite (whose lower() folds ASCII only) and on PostgreSQL; and a database written before the rule is folded at
// start-up, a name the rule finds taken renamed rather than lost. Runs in both passes of `npm test`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(async () => {
  await s?.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const enc = encodeURIComponent;

async function waitlist(server = s) {
  const { key } = await server.account();
  const r = await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Folding ${uniq()}`, validate_emails: false } });
  expect(r.status, r.text).toBe(201);
  const w = r.body.data.waitlist;
  return { key, w, base: `/api/v1/waitlist/${w.key}` };
}

async function signUp(wl: { key: string; base: string }, email: string, name: string) {
  const r = await s.request("POST", `${wl.base}/sign-up`, { key: wl.key, body: { email, name } });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

describe("tag names", () => {
  test('a tag "Été" is found by "été": tagging with it adds the same tag (200), and untagging and deleting by "ÉTÉ" work', async () => {
    const wl = await waitlist();
    const created = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "Été" } });
    expect(created.status, created.text).toBe(201);
    await signUp(wl, "ete@example.com", "Ete");

    const tagged = await s.request("POST", `${wl.base}/subscribers/${enc("ete@example.com")}/tags`, { key: wl.key, body: { tags: ["été"] } });
    expect(tagged.status, tagged.text).toBe(200);
    expect(tagged.body.data.subscriber.tags).toEqual([{ id: created.body.data.tag.id, name: "Été", color: "gray" }]);
    // no second tag was made
    expect((await s.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags.map((t: any) => [t.name, t.subscribers])).toEqual([["Été", 1]]);
    // the list's tag filter follows the same rule
    const filtered = await s.request("GET", `${wl.base}/subscribers?tag=${enc("ÉTÉ")}`, { key: wl.key });
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.body.data.subscribers.map((x: any) => x.email)).toEqual(["ete@example.com"]);

    const untagged = await s.request("DELETE", `${wl.base}/subscribers/${enc("ete@example.com")}/tags/${enc("ÉTÉ")}`, { key: wl.key });
    expect(untagged.status, untagged.text).toBe(200);
    expect(untagged.body.data.subscriber.tags).toEqual([]);
    const deleted = await s.request("DELETE", `${wl.base}/tags/${enc("été")}`, { key: wl.key });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await s.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags).toEqual([]);
  });

  test('"Ünï" and "ünï", "Straße" and "STRASSE", "ﬁnal" and "FINAL" are each one tag: the second is 409 and is not stored', async () => {
    const wl = await waitlist();
    for (const [first, second] of [["Ünï", "ünï"], ["Straße", "STRASSE"], ["ﬁnal", "FINAL"]]) {
      expect((await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: first } })).status).toBe(201);
      const dup = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: second } });
      expect(dup.status, dup.text).toBe(409);
      expect(dup.body.message).toBe(`A tag named "${second}" already exists`);
    }
    // listed in one order on both engines: by the folded name's bytes
    expect((await s.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags.map((t: any) => t.name)).toEqual(["ﬁnal", "Straße", "Ünï"]);
  });

  test("tagging with two spellings of one new name makes one tag", async () => {
    const wl = await waitlist();
    await signUp(wl, "two@example.com", "Two");
    const r = await s.request("POST", `${wl.base}/subscribers/${enc("two@example.com")}/tags`, { key: wl.key, body: { tags: ["Ünï", "ÜNÏ", "ünï"] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.subscriber.tags.map((t: any) => t.name)).toEqual(["Ünï"]);
    expect((await s.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags).toHaveLength(1);
  });
});

describe("waitlist names", () => {
  test('"Ünï Launch" and "ÜNÏ LAUNCH" are the same name: 409 naming name, on create and on rename', async () => {
    const { key } = await s.account();
    const name = `Ünï Launch ${uniq()}`;
    expect((await s.request("POST", "/api/v1/waitlists", { key, body: { name } })).status).toBe(201);
    const dup = await s.request("POST", "/api/v1/waitlists", { key, body: { name: name.toUpperCase(), slug: `other-${uniq()}` } });
    expect(dup.status, dup.text).toBe(409);
    expect(dup.body.message).toBe(`name "${name.toUpperCase()}" is already taken`);

    const other = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Straße ${uniq()}` } })).body.data.waitlist;
    const renamed = await s.request("PATCH", `/api/v1/waitlist/${other.key}/settings`, { key, body: { name: name.toLowerCase() } });
    expect(renamed.status, renamed.text).toBe(409);
    expect(renamed.body.message).toBe(`name "${name.toLowerCase()}" is already taken`);
    // a rename to another spelling of its own name is not a conflict
    const own = await s.request("PATCH", `/api/v1/waitlist/${other.key}/settings`, { key, body: { name: other.name.replace("Straße", "STRASSE") } });
    expect(own.status, own.text).toBe(200);
  });
});

describe("search", () => {
  test('?q=élodie finds "Élodie" and not "Elodie"; ?q=STRASSE finds "Straße"; an email matches in any case', async () => {
    const wl = await waitlist();
    await signUp(wl, "durand@example.com", "Élodie Durand");
    await signUp(wl, "martin@example.com", "Elodie Martin");
    await signUp(wl, "jurgen@example.com", "Jürgen Straße");
    const found = async (q: string) => {
      const r = await s.request("GET", `${wl.base}/subscribers?q=${enc(q)}&sort_by=email&sort_dir=asc`, { key: wl.key });
      expect(r.status, r.text).toBe(200);
      return r.body.data.subscribers.map((x: any) => x.name);
    };
    expect(await found("élodie")).toEqual(["Élodie Durand"]);
    expect(await found("ÉLODIE")).toEqual(["Élodie Durand"]);
    expect(await found("Elodie")).toEqual(["Elodie Martin"]);
    expect(await found("STRASSE")).toEqual(["Jürgen Straße"]);
    expect(await found("ürg")).toEqual(["Jürgen Straße"]);
    expect(await found("JURGEN@EXAMPLE")).toEqual(["Jürgen Straße"]);
    // a renamed subscriber is found by the new name only
    const patched = await s.request("PUT", `${wl.base}/subscribers/${enc("jurgen@example.com")}`, { key: wl.key, body: { name: "Ünï Müller" } });
    expect(patched.status, patched.text).toBe(200);
    expect(await found("strasse")).toEqual([]);
    expect(await found("MÜLLER")).toEqual(["Ünï Müller"]);
  });
});

describe("a database written before the rule", () => {
  test("is folded at start-up: duplicates the rule reveals are renamed (the older keeps its name), tags and search keep working", async () => {
    const server = await startServer({ env: { RATE_LIMITS: "off" } });
    try {
      const wl = await waitlist(server);
      const first = (await server.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "Ünï" } })).body.data.tag;
      const second = (await server.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "Other" } })).body.data.tag;
      const signed = await server.request("POST", `${wl.base}/sign-up`, { key: wl.key, body: { email: "old@example.com", name: "Élodie Old" } });
      expect(signed.status, signed.text).toBe(200);
      expect((await server.request("POST", `${wl.base}/subscribers/old%40example.com/tags`, { key: wl.key, body: { tags: [second.id] } })).status).toBe(200);
      const { key } = await server.account();
      const a = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Straße ${uniq()}` } })).body.data.waitlist;
      const b = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Other ${uniq()}` } })).body.data.waitlist;
      await server.stop({ keep: true });

      // what an older binary could leave: no keys, and names that only the new rule finds equal ("ünï" beside
      // "Ünï", as SQLite's ASCII-only lower() allowed; "STRASSE" beside "Straße", as both engines' lower() did)
      const upper = a.name.replace("Straße", "STRASSE");
      // (one opening: each one folds what it finds)
      const db = await openDatabase({ url: server.dbUrl, poolSize: 1 });
      try {
        await db.write([
          sql`UPDATE tags SET name = 'ünï', name_key = NULL WHERE id = ${second.id}`,
          sql`UPDATE waitlists SET name = ${upper}, name_key = NULL WHERE id = ${b.id}`,
          sql`UPDATE tags SET name_key = NULL`,
          sql`UPDATE waitlists SET name_key = NULL`,
          sql`UPDATE subscribers SET name_key = NULL`,
        ]);
      } finally {
        await db.close();
      }

      const again = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: server.dbUrl });
      try {
        const tags = (await again.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags;
        expect(tags.map((t: any) => [t.id, t.name, t.subscribers])).toEqual([
          [first.id, "Ünï", 0],
          [second.id, "ünï (2)", 1],
        ]);
        const lists = (await again.request("GET", "/api/v1/waitlists", { key })).body.data.waitlists;
        expect(lists.find((w: any) => w.id === a.id).name).toBe(a.name);
        expect(lists.find((w: any) => w.id === b.id).name).toBe(`${upper} (2)`);
        const renames = again.logs.map((l) => JSON.parse(l)).filter((e) => e.level === "warn" && /renamed/.test(e.msg));
        expect(renames.map((e) => [e.id, e.from, e.to])).toEqual([
          [b.id, upper, `${upper} (2)`],
          [second.id, "ünï", "ünï (2)"],
        ]);
        // the folded keys work: by name, and in search
        const tagged = await again.request("POST", `${wl.base}/subscribers/old%40example.com/tags`, { key: wl.key, body: { tags: ["ÜNÏ"] } });
        expect(tagged.body.data.subscriber.tags.map((t: any) => t.id).sort()).toEqual([first.id, second.id].sort());
        const search = await again.request("GET", `${wl.base}/subscribers?q=${enc("ÉLODIE")}`, { key: wl.key });
        expect(search.body.data.subscribers.map((x: any) => x.email)).toEqual(["old@example.com"]);
      } finally {
        await again.stop();
      }
    } finally {
      if (server.proc.exitCode === null) await server.stop();
    }
  });
});
