// Each person's own data (issue 47 item 5), over HTTP with a real SMTP server: the status page's "Get my data" emails a
// 24-hour link whose page downloads the document on POST only; the team's GET .../data gives the same document;
// DELETE ?erase=true leaves nothing that names the person; retention_days removes rejected and joined subscribers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { pruneRetention } from "../src/subscribers/personal-data";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";
import { startServer, until, type TestServer } from "./support/server";

let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
let key: string;
let db: Db;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url } });
  ({ key } = await s.account("business"));
  db = await openDatabase({ url: s.dbUrl });
});
afterAll(async () => {
  await db?.close();
  await s?.stop();
  hooks?.stop();
  await smtp?.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

async function waitlist(settings: Record<string, unknown> = {}) {
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Mine ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true }, ...settings } })).status).toBe(200);
  return { w, path };
}

const linkIn = (text: string) => /(http\S+\/d\/[A-Za-z0-9]+)/.exec(text)?.[1];

describe("a subscriber's own data", () => {
  test("the status page emails a link; GET shows a button and downloads nothing; POST downloads the document the team's API gives", async () => {
    const { path } = await waitlist();
    const email = `me-${uniq()}@example.com`;
    const me = (await s.request("POST", `${path}/sign-up`, { key, body: { email, name: "Me Myself", metadata: { plan: "pro" } } })).body;
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `friend-${uniq()}@example.com`, metadata: { referred_by: me.referral_code } } });

    const status = await (await fetch(`${s.url}/t/${me.sign_up_token}`)).text();
    expect(status).toContain(`href="/t/${me.sign_up_token}/data"`);
    const page = await fetch(`${s.url}/t/${me.sign_up_token}/data`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`action="/t/${me.sign_up_token}/data"`);
    const before = smtp.messages.length;
    for (let i = 0; i < 2; i++) {
      const asked = await fetch(`${s.url}/t/${me.sign_up_token}/data`, { method: "POST" });
      expect(asked.status).toBe(200);
      expect(await asked.text()).toContain("Check your inbox");
    }
    const mail = await until(() => smtp.messages.slice(before).find((m) => m.to && JSON.stringify(m.to).includes(email)), 10_000, "the data email");
    // asked twice: one email
    await Bun.sleep(300);
    expect(smtp.messages.slice(before).filter((m) => JSON.stringify(m.to).includes(email)).length).toBe(1);
    expect(mail.subject).toContain("Your data");
    const link = linkIn(mail.text ?? "")!;
    expect(link).toBeString();

    const shown = await fetch(link);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("content-type")).toStartWith("text/html");
    const head = await fetch(link, { method: "HEAD" });
    expect(head.status).toBe(200);
    const download = await fetch(link, { method: "POST" });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toStartWith("attachment;");
    const document = (await download.json()) as any;
    expect(document.subscriber).toMatchObject({ email, name: "Me Myself", metadata: { plan: "pro" }, referral_count: 1 });
    expect(document.referrals).toEqual([{ friend: expect.stringMatching(/^f\*+@example\.com$/), credited: true, points: expect.any(Number), at: expect.any(Number) }]);
    expect(document.emails.map((e: any) => e.kind)).toContain("data_export");

    const api = await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}/data`, { key });
    expect(api.status).toBe(200);
    const { generated_at: _a, ...fromApi } = api.body.data;
    const { generated_at: _b, ...downloaded } = document;
    expect(fromApi).toEqual(downloaded);
    expect((await fetch(`${s.url}/d/not-a-real-token-123456`, { method: "POST" })).status).toBe(404);
  });

  test("DELETE ?erase=true leaves no email, event or cap that names them; the webhook says only who was erased", async () => {
    const { path } = await waitlist({ double_opt_in: true });
    const email = `gone-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email } });
    const [row] = await db.rows<{ id: string; confirm_token: string }>(sql`SELECT id, confirm_token FROM subscribers WHERE email = ${email}`);
    await fetch(`${s.url}/confirm/${row!.confirm_token}`, { method: "POST" });
    await until(async () => (await db.rows(sql`SELECT 1 FROM outbox WHERE subscriber_id = ${row!.id} AND status = 'sent'`)).length > 0, 10_000, "an email sent");
    expect((await db.rows(sql`SELECT 1 FROM confirmation_sends WHERE email = ${email}`)).length).toBe(1);

    const r = await s.request("DELETE", `${path}/subscribers/${encodeURIComponent(email)}?erase=true`, { key });
    expect(r.status).toBe(200);
    const deleted = await until(() => hooks.deliveries.find((d) => d.body.type === "subscriber.deleted" && d.body.data.subscriber.id === row!.id), 10_000, "the deleted event");
    expect(deleted.body.data).toEqual({ subscriber: { id: row!.id }, erased: true });
    const outbox = await db.rows<{ id: string; topic: string; payload: string | null }>(sql`SELECT id, topic, payload FROM outbox WHERE subscriber_id = ${row!.id} OR related_id = ${row!.id}`);
    expect(outbox.map((o) => o.topic)).toEqual(["subscriber.deleted"]);
    const everything = JSON.stringify(await db.rows(sql`SELECT payload FROM outbox`));
    expect(everything).not.toContain(email);
    expect(await db.rows(sql`SELECT 1 FROM confirmation_sends WHERE email = ${email}`)).toEqual([]);
    expect(s.logs.join("\n")).not.toContain(email);
    expect((await s.request("DELETE", `${path}/subscribers/x?erase=maybe`, { key })).status).toBe(400);
  });

  test("retention_days removes rejected and joined subscribers past it (the referrer keeps the credit); waiting ones stay", async () => {
    const { path } = await waitlist({ retention_days: 30 });
    expect((await s.request("GET", `${path}/settings`, { key })).body.data.settings.retention_days).toBe(30);
    const referrer = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `keep-${uniq()}@example.com` } })).body;
    const old = `old-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email: old, metadata: { referred_by: referrer.referral_code } } });
    const recent = `recent-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email: recent } });
    for (const e of [old, recent]) expect((await s.request("POST", `${path}/subscribers/${encodeURIComponent(e)}/reject`, { key })).status).toBe(200);
    await db.exec(sql`UPDATE subscribers SET updated_at = ${Date.now() - 31 * 86_400_000} WHERE email = ${old}`);

    const dispatched: string[] = [];
    expect(await pruneRetention(db, (ids) => dispatched.push(...ids))).toBe(1);
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(old)}`, { key })).status).toBe(404);
    expect((await s.request("GET", `${path}/subscribers/${encodeURIComponent(recent)}`, { key })).status).toBe(200);
    const stays = (await s.request("GET", `${path}/subscribers?status=waiting`, { key })).body.data.subscribers;
    expect(stays.map((x: any) => [x.referral_count])).toEqual([[1]]);
    expect(dispatched.length).toBe(1);
    const [event] = await db.rows<{ payload: string }>(sql`SELECT payload FROM outbox WHERE event_id = ${dispatched[0]}`);
    expect(JSON.parse(event!.payload).data).toMatchObject({ erased: true, reason: "retention" });
    expect((await s.request("PATCH", `${path}/settings`, { key, body: { retention_days: 0 } })).status).toBe(400);
  });
});
