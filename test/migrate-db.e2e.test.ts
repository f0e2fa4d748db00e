// `waitlist migrate-db` (issue 18 item 5): a populated embedded database moved to PostgreSQL and back to a new file
// with the command, a non-empty target refused without --force, and a server on the copy answering as the original.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { countRows } from "../src/db/copy";
import { openDatabase } from "../src/db/open";
import { removeDir, tempDir } from "./support/cleanup";
import { scratchPgUrl } from "./support/pg";
import { runCli, startServer, type TestServer } from "./support/server";

const dir = tempDir("waitlist-migrate-");
const source = `file:${join(dir, "source.db")}`;
const back = `file:${join(dir, "back.db")}`;
let pgUrl = "";
let path = "";
let key = "";
const emails: string[] = [];
let before: unknown[] = [];

/** Status, position, points and status of every subscriber, as GET answers them. */
async function answers(server: TestServer) {
  const out: unknown[] = [];
  for (const email of emails) {
    const r = await server.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key });
    const s = r.body?.data?.subscriber;
    out.push([email, r.status, s?.position ?? null, s?.points ?? null, s?.referral_count ?? null, s?.status ?? null, s?.tags ?? null]);
  }
  return out;
}

async function countsOf(url: string) {
  const o = await openDatabase({ url, poolSize: 2 });
  try {
    return await countRows(o);
  } finally {
    await o.close();
  }
}

beforeAll(async () => {
  const s = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: source });
  try {
    ({ key } = await s.account("business"));
    const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Move me", referral_rewards: { enabled: true } } })).body.data.waitlist;
    path = `/api/v1/waitlist/${w.key}`;
    await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: false, milestones: [{ referrals: 2, reward: "Stickers", tag: "Fan" }] } });
    let code = "";
    for (let i = 0; i < 30; i++) {
      const email = `m${i}@example.com`;
      emails.push(email);
      const r = await s.request("POST", `${path}/sign-up`, { key, body: { email, metadata: i % 4 && code ? { referred_by: code } : {} } });
      expect(r.status).toBe(200);
      if (i % 4 === 0) code = r.body.referral_code;
    }
    await s.request("PUT", `${path}/subscribers/${encodeURIComponent("m5@example.com")}`, { key, body: { points: 300 } });
    await s.request("POST", `${path}/tags`, { key, body: { name: "VIP", color: "purple" } });
    await s.request("POST", `${path}/subscribers/${encodeURIComponent("m2@example.com")}/tags`, { key, body: { tags: ["VIP"] } });
    await s.request("POST", `${path}/subscribers/invite`, { key, body: { count: 2 } });
    await s.request("POST", `${path}/landing-page`, { key, body: { headline: "Soon" } });
    before = await answers(s);
  } finally {
    await s.stop({ keep: true });
  }
  pgUrl = await scratchPgUrl();
});

afterAll(() => removeDir(dir));

test("embedded -> PostgreSQL: one JSON object with every table's rows, nothing on stderr off a terminal", async () => {
  const r = await runCli(["migrate-db", "--from", source, "--to", pgUrl, "--json"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split("\n").length).toBe(1);
  expect(r.json.tables.subscribers).toBe(30);
  for (const t of ["accounts", "waitlists", "referrals", "milestone_rewards", "tags", "subscriber_tags", "landing_pages", "rank_counts"]) expect(r.json.tables[t]).toBeGreaterThan(0);
  expect(r.json.rows).toBe(Object.values(r.json.tables as Record<string, number>).reduce((a, b) => a + b, 0));
  expect(r.json.emptied).toBe(false);
  expect(await countsOf(pgUrl)).toEqual(r.json.tables);
});

test("a target that holds rows is refused without --force (exit 2, one line, target unchanged), emptied and refilled with it", async () => {
  const held = await countsOf(pgUrl);
  const refused = await runCli(["migrate-db", "--from", source, "--to", pgUrl]);
  expect(refused.code).toBe(2);
  expect(refused.stdout).toBe("");
  expect(refused.stderr.trim().split("\n").length).toBe(1);
  expect(refused.stderr).toContain("--force");
  const asJson = await runCli(["migrate-db", "--from", source, "--to", pgUrl, "--json"]);
  expect(asJson.code).toBe(2);
  expect(asJson.json.error.code).toBe("not_empty");
  expect(await countsOf(pgUrl)).toEqual(held);
  const forced = await runCli(["migrate-db", "--from", source, "--to", pgUrl, "--force", "--json"]);
  expect(forced.code).toBe(0);
  expect(forced.json.emptied).toBe(true);
  expect(await countsOf(pgUrl)).toEqual(held);
});

test("PostgreSQL -> a new file: the tables and row counts in text, and a server on the copy answers as the original", async () => {
  const r = await runCli(["migrate-db", "--from", pgUrl, "--to", back]);
  expect(r.code).toBe(0);
  expect(r.stderr).toBe("");
  expect(r.stdout).toMatch(/^subscribers\s+30$/m);
  expect(r.stdout).toContain("row counts verified");
  const copy = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: back });
  try {
    expect(await answers(copy)).toEqual(before);
    expect(before.filter((a: any) => a[1] === 200).length).toBe(30);
    // a server using the source is refused, and the target the command would have created is not left behind
    const other = join(dir, "other.db");
    const busy = await runCli(["migrate-db", "--from", back, "--to", `file:${other}`, "--json"]);
    expect(busy.code).toBe(2);
    expect(busy.json.error.code).toBe("server_running");
    expect(existsSync(other)).toBe(false);
  } finally {
    await copy.stop({ keep: true });
  }
});

test("mistakes are one line and exit 2: the same database twice, a missing source, an unreachable target", async () => {
  const same = await runCli(["migrate-db", "--from", source, "--to", `file:${join(dir, ".", "source.db")}`]);
  expect(same.code).toBe(2);
  expect(same.stderr).toContain("same database");
  const samePg = await runCli(["migrate-db", "--from", pgUrl, "--to", pgUrl.replace("://", "://other:secret@").replace(/postgres:postgres@/, "")]);
  expect(samePg.code).toBe(2);
  const missing = await runCli(["migrate-db", "--from", `file:${join(dir, "nope.db")}`, "--to", back, "--json"]);
  expect(missing.json.error.code).toBe("not_found");
  const unreachable = await runCli(["migrate-db", "--from", source, "--to", "postgres://u:secret@127.0.0.1:1/none"]);
  expect(unreachable.code).toBe(2);
  expect(unreachable.stderr.trim().split("\n").length).toBe(1);
  expect(unreachable.stderr).not.toContain("secret");
  const usage = await runCli(["migrate-db", "--from", source]);
  expect(usage.code).toBe(2);
  expect(usage.stderr).toContain("--to");
});
