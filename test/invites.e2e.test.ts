// Letting people in (issue 11 items 1-3): access status, invite the next N by rank (or given subscribers),
// reject, the single-use invite link, and verifying its token. Over real HTTP with real SMTP and webhooks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

const BASE_URL = "http://wl.invites.example";
let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { BASE_URL, RATE_LIMITS: "off", SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);

/** A waitlist with `n` subscribers; every 3rd one has extra points, so rank order is not join order. */
async function line(n: number, settings: Record<string, unknown> = {}) {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Invites ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true }, ...settings } })).status).toBe(200);
  const emails: string[] = [];
  for (let i = 0; i < n; i++) {
    const email = `p${i}-${uniq()}@example.com`;
    emails.push(email);
    expect((await s.request("POST", `${path}/sign-up`, { key, body: { email } })).status).toBe(200);
    if (i % 3 === 2) await s.request("PUT", `${path}/subscribers/${encodeURIComponent(email)}`, { key, body: { points: 100 + i } });
  }
  const order = async () =>
    (await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=100&status=waiting`, { key })).body.data.subscribers.map((x: any) => [x.email, x.position]);
  const one = async (email: string) => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  const events = (type: string) => hooks.deliveries.filter((d) => d.body?.type === type && d.body?.waitlist?.key === w.key);
  return { key, w, path, emails, order, one, events };
}

const linkIn = (text: string) => text.match(/\/i\/[A-Za-z0-9]+/)?.[0];

describe("POST .../subscribers/invite", () => {
  test("{count: N} invites exactly the first N waiting by position, keeps their positions as final_position, and the rest of the line closes up", async () => {
    const { key, path, order, one } = await line(8);
    const before = await order();
    const r = await s.request("POST", `${path}/subscribers/invite`, { key, body: { count: 3 } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.invited.map((x: any) => [x.email, x.final_position, x.status])).toEqual(before.slice(0, 3).map(([e, p]: [string, number]) => [e, p, "invited"]));
    expect(r.body.data.invited.every((x: any) => x.position === undefined)).toBe(true);
    expect(r.body.data.skipped).toEqual([]);
    const after = await order();
    expect(after).toEqual(before.slice(3).map(([e]: [string, number], i: number) => [e, i + 1]));
    expect((await one(before[0][0])).status).toBe("invited");
    // signing up again while invited: already registered, with the place they held
    const repeat = await s.request("POST", `${path}/sign-up`, { key, body: { email: before[1][0] } });
    expect([repeat.body.is_new_sign_up, repeat.body.position]).toEqual([false, before[1][1]]);
    const invitedList = (await s.request("GET", `${path}/subscribers?status=invited&sort_by=email`, { key })).body.data;
    expect(invitedList.total).toBe(3);
    // stats still count every confirmed subscriber
    expect((await s.request("GET", `${path}/stats`, { key })).body.data.subscribers_total).toBe(8);
  });

  test("each invited subscriber gets one invitation email with a link and one subscriber.invited webhook; inviting them again changes nothing", async () => {
    const { key, path, emails, events } = await line(4, { invitation_email: { subject: "You're in, {{name}}", body: "Accept here: {{invite_link}}" } });
    const targets = emails.slice(0, 2);
    expect((await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: targets } })).status).toBe(200);
    const mails = () => smtp.messages.filter((m) => targets.some((e) => JSON.stringify(m.to).includes(e)));
    await until(() => mails().length === 2 && events("subscriber.invited").length === 2, 5_000, "emails and webhooks");
    for (const m of mails()) expect(linkIn(String(m.text))).toBeTruthy();
    expect(String(mails()[0].html)).toContain(`<a href="${BASE_URL}/i/`);
    const again = await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: targets } });
    expect(again.body.data.invited.map((x: any) => x.email).sort()).toEqual([...targets].sort());
    // a later event has been delivered, and nothing more for the invited two
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `marker-${uniq()}@example.com` } });
    await until(() => events("subscriber.created").length === 5, 5_000, "later event");
    expect(mails()).toHaveLength(2);
    expect(events("subscriber.invited")).toHaveLength(2);
  });

  test("exactly one of count, ids or emails; an unknown id or email is 404 and invites nobody; pending subscribers are skipped", async () => {
    const { key, path, emails, order } = await line(3, { double_opt_in: true });
    for (const body of [{}, { count: 1, ids: ["x"] }, { count: 0 }, { ids: [] }, { count: 1001 }, { emails: "a@b.co" }]) {
      const r = await s.request("POST", `${path}/subscribers/invite`, { key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const r = await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [emails[0], "nobody@example.com"] } });
    expect(r.status).toBe(404);
    expect(r.body.message).toContain("nobody@example.com");
    expect((await order()).length).toBe(0); // double opt-in: all three are pending, none ranked
    const pending = await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [emails[0]] } });
    expect(pending.body.data).toEqual({ invited: [], skipped: [{ id: expect.any(String), email: emails[0], status: "pending" }] });
  });
});

describe("the invite link", () => {
  test("works once: joined, a subscriber.joined webhook, and a redirect to invite_redirect_url with the token; then a friendly page; the token verifies", async () => {
    const { key, path, emails, one, events } = await line(3, { invite_redirect_url: "https://app.example.com/welcome?from=waitlist" });
    await s.request("POST", `${path}/subscribers/invite`, { key, body: { count: 1 } });
    const invitedEmail = (await s.request("GET", `${path}/subscribers?status=invited`, { key })).body.data.subscribers[0].email as string;
    const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(invitedEmail)), 5_000, "invitation");
    const link = linkIn(String(mail.text))!;
    const token = link.split("/").pop()!;

    const first = await fetch(`${s.url}${link}`, { method: "POST", redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe(`https://app.example.com/welcome?from=waitlist&token=${token}`);
    const joined = await one(invitedEmail);
    expect([joined.status, joined.final_position]).toEqual(["joined", 1]);
    await until(() => events("subscriber.joined").length === 1, 5_000, "joined webhook");

    const second = await fetch(`${s.url}${link}`, { method: "POST", redirect: "manual" });
    expect(second.status).toBe(410);
    expect(await second.text()).toContain("Invitation already used");

    const verify = await s.request("GET", `${path}/invites/${token}`, { key });
    expect(verify.status).toBe(200);
    expect(verify.body.data.invite).toMatchObject({ status: "joined", valid: true, subscriber: { email: invitedEmail } });
    expect((await s.request("GET", `${path}/invites/nope`, { key })).status).toBe(404);
    expect(events("subscriber.joined")).toHaveLength(1);
    // the line closed up behind the joined subscriber
    expect((await one(emails.find((e) => e !== invitedEmail)!)).position).toBeLessThanOrEqual(2);
  });

  test("an expired link shows a friendly page and joins nobody; rejecting withdraws the link, and its page says so (410)", async () => {
    const { key, path, emails, one } = await line(3);
    await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: emails.slice(0, 2) } });
    const tokenOf = async (email: string) => {
      const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email)), 5_000, "invitation");
      return linkIn(String(mail.text))!.split("/").pop()!;
    };
    const [expired, withdrawn] = [await tokenOf(emails[0]), await tokenOf(emails[1])];
    const db = await openDatabase({ url: s.dbUrl });
    await db.exec(sql`UPDATE subscribers SET invite_expires_at = 1 WHERE invite_token = ${expired}`);
    await db.close();
    const late = await fetch(`${s.url}/i/${expired}`, { method: "POST" });
    expect([late.status, (await late.text()).includes("Invitation expired")]).toEqual([410, true]);
    expect((await s.request("GET", `${path}/invites/${expired}`, { key })).body.data.invite).toMatchObject({ status: "expired", valid: false });

    const rejected = await s.request("POST", `${path}/subscribers/${encodeURIComponent(emails[1])}/reject`, { key });
    expect(rejected.status).toBe(200);
    expect(rejected.body.data.subscriber.status).toBe("rejected");
    for (const method of ["GET", "POST"]) {
      const gone = await fetch(`${s.url}/i/${withdrawn}`, { method, redirect: "manual" });
      expect([method, gone.status, (await gone.text()).includes("Invitation withdrawn")]).toEqual([method, 410, true]);
    }
    expect((await s.request("GET", `${path}/invites/${withdrawn}`, { key })).body.data.invite).toMatchObject({ status: "revoked", valid: false });
    expect((await one(emails[1])).status).toBe("rejected");
    expect((await one(emails[0])).status).toBe("invited");
    expect((await fetch(`${s.url}/i/not-a-token`)).status).toBe(404);
  });
});

describe("reject", () => {
  test("a waiting subscriber leaves the line with final_position; the status page says so; joined or pending ones are 409", async () => {
    const { key, path, emails, order, one } = await line(4);
    const before = await order();
    const [victim, place] = before[1];
    const r = await s.request("POST", `${path}/subscribers/${encodeURIComponent(victim)}/reject`, { key });
    expect(r.body.data.subscriber).toMatchObject({ status: "rejected", final_position: place });
    expect(await order()).toEqual(before.filter(([e]: [string]) => e !== victim).map(([e]: [string], i: number) => [e, i + 1]));
    const token = (await one(victim)).sign_up_token;
    const page = await (await fetch(`${s.url}/t/${token}`)).text();
    expect(page).toContain('data-access="rejected"');
    expect((await s.request("POST", `${path}/subscribers/nobody@example.com/reject`, { key })).status).toBe(404);
    // joined: through the invite link
    await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [emails[3]] } });
    const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(emails[3])), 5_000, "invitation");
    expect((await fetch(`${s.url}${linkIn(String(mail.text))}`, { method: "POST" })).status).toBe(200);
    expect((await s.request("POST", `${path}/subscribers/${encodeURIComponent(emails[3])}/reject`, { key })).status).toBe(409);
    // pending: double opt-in
    await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: true } });
    const pendingEmail = `pending-${uniq()}@example.com`;
    await s.request("POST", `${path}/sign-up`, { key, body: { email: pendingEmail } });
    expect((await s.request("POST", `${path}/subscribers/${encodeURIComponent(pendingEmail)}/reject`, { key })).status).toBe(409);
  });
});
