// Broadcasts, bounces and email history (issue 45), over a real SMTP server and a real webhook receiver: a broadcast
// reaches exactly its segment once each, in multipart email with the unsubscribe headers and a Message-ID on the
// sender's domain; a 5xx at RCPT marks the address bounced; providers' reports (ours, SES over SNS, Postmark) mark
// bounced and complained addresses, which then get nothing; a kill -9 in the middle of sending loses and repeats nobody.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ParsedMail } from "mailparser";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

const BASE_URL = "http://wl.broadcast.example";
const MAIL_FROM = "Rocket <hello@rocket.example>";
let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { BASE_URL, RATE_LIMITS: "off", SMTP_URL: smtp.url, MAIL_FROM, MAIL_RATE_PER_MINUTE: "6000" } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const mailsTo = (address: string, subject?: string) => smtp.messages.filter((m) => JSON.stringify(m.to).includes(address) && (!subject || m.subject === subject));
const header = (m: ParsedMail, name: string) => m.headerLines.find((h) => h.key === name)?.line.replace(/\r?\n[ \t]+/g, " ").replace(/^[^:]+:\s*/, "");

async function waitlist(server = s) {
  const { key } = await server.account("growth");
  const w = (await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Broadcast ${uniq()}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  expect((await server.request("PATCH", `${path}/settings`, { key, body: { webhook: { url: hooks.url, enabled: true } } })).status).toBe(200);
  const signUp = async (email: string, name?: string, tags: string[] = []) => {
    expect((await server.request("POST", `${path}/sign-up`, { key, body: { email, name } })).status).toBe(200);
    if (tags.length) expect((await server.request("POST", `${path}/subscribers/${encodeURIComponent(email)}/tags`, { key, body: { tags } })).status).toBe(200);
  };
  const one = async (email: string) => (await server.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
  const get = async (id: string) => (await server.request("GET", `${path}/broadcasts/${id}`, { key })).body.data.broadcast;
  const create = async (body: Record<string, unknown>) => server.request("POST", `${path}/broadcasts`, { key, body });
  return { key, w, path, signUp, one, get, create };
}

describe("drafts", () => {
  test("an unknown merge tag, an unknown tag name or a bad segment is a 400 naming it, and nothing is created", async () => {
    const { key, path, create, signUp } = await waitlist();
    await signUp(`d-${uniq()}@example.com`, "Dee", ["beta"]);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ subject: "Hi", body_markdown: "Hello {{frist_name}}" }, /body_markdown.*\{\{frist_name\}\}/],
      [{ subject: "Hi {{ Name }}", body_markdown: "Hello" }, /subject.*\{\{Name\}\}/],
      [{ subject: "Hi", body_markdown: "Hello", segment: { tags_any: ["beta", "nope"] } }, /^Unknown tag "nope" in segment\.tags_any\[1\]/],
      [{ subject: "Hi", body_markdown: "Hello", segment: { status: ["pending"] } }, /segment/],
      [{ subject: "Hi", body_markdown: "Hello", segment: { position_lte: 0 } }, /position_lte/],
      [{ subject: "Hi", body_markdown: "Hello", segment: { signed_up_after: 20, signed_up_before: 10 } }, /signed_up_before/],
      [{ subject: " ", body_markdown: "Hello" }, /subject/],
    ];
    for (const [body, message] of cases) {
      const r = await create(body);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    const list = await s.request("GET", `${path}/broadcasts`, { key });
    expect(list.status).toBe(200);
    expect(list.body.data.broadcasts).toEqual([]);
  });

  test("a draft is listed, previewed with its segment's count and the first recipient's email, changed, and deleted", async () => {
    const { key, path, create, signUp } = await waitlist();
    const tag = uniq();
    await signUp(`p1-${tag}@example.com`, "Ada Lovelace", ["Beta"]);
    await signUp(`p2-${tag}@example.com`, "Grace Hopper", ["beta", "VIP"]);
    await signUp(`p3-${tag}@example.com`, null as unknown as string);
    const created = await create({ subject: "News for {{first_name}}", body_markdown: "Hi **{{first_name}}**, you are #{{position}}.\n\n[Share]({{referral_link}})", segment: { tags_any: ["BETA"] } });
    expect(created.status).toBe(201);
    const b = created.body.data.broadcast;
    expect(b).toMatchObject({ status: "draft", recipients: 2, sent: 0, failed: 0, bounced: 0, unsubscribed: 0, segment: { tags_any: ["BETA"] }, send_at: null });
    expect(b.id).toMatch(/^bc_/);
    const preview = await s.request("GET", `${path}/broadcasts/${b.id}/preview`, { key });
    expect(preview.status).toBe(200);
    expect(preview.body.data.recipients).toBe(2);
    const sample = preview.body.data.sample;
    expect(sample.subject).toBe("News for Ada");
    expect(sample.text).toContain("Hi **Ada**, you are #1.");
    expect(sample.text).toContain(`${BASE_URL}/u/`); // the automatic unsubscribe line
    expect(sample.html).toContain("<strong>Ada</strong>");
    expect(sample.html).toMatch(/<a href="http:\/\/wl\.broadcast\.example\/p\/[^"]+\?ref=[^"]+">Share<\/a>/);
    const vip = await s.request("PATCH", `${path}/broadcasts/${b.id}`, { key, body: { segment: { tags_all: ["beta", "vip"] } } });
    expect(vip.status).toBe(200);
    expect(vip.body.data.broadcast.recipients).toBe(1);
    expect((await s.request("GET", `${path}/broadcasts`, { key })).body.data.broadcasts.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect((await s.request("DELETE", `${path}/broadcasts/${b.id}`, { key })).status).toBe(200);
    expect((await s.request("GET", `${path}/broadcasts/${b.id}`, { key })).status).toBe(404);
  });
});

describe("sending", () => {
  test("reaches exactly the segment once each, multipart, with unsubscribe headers and a Message-ID on MAIL_FROM's domain; unsubscribed, bounced and complained get nothing", async () => {
    const { key, path, create, signUp, one, get, w } = await waitlist();
    const t = uniq();
    const inSegment = [`a-${t}@example.com`, `b-${t}@example.com`, `c-${t}@example.com`];
    for (const [i, email] of inSegment.entries()) await signUp(email, `Person${i} Last`, ["launch"]);
    const outside = `o-${t}@example.com`;
    await signUp(outside, "Out Side");
    const unsubscribed = `u-${t}@example.com`;
    const bounced = `x-${t}@example.com`;
    const complained = `y-${t}@example.com`;
    for (const email of [unsubscribed, bounced, complained]) await signUp(email, "No Mail", ["launch"]);
    const u = await one(unsubscribed);
    expect((await fetch(`${s.url}/u/${u.sign_up_token}`, { method: "POST", redirect: "manual" })).status).toBeLessThan(400);
    const events = await s.request("POST", "/api/v1/email/events", {
      key,
      body: { events: [{ email: bounced, type: "hard_bounce", waitlist: w.key }, { email: complained.toUpperCase(), type: "complaint" }, { email: `nobody-${t}@example.com`, type: "soft_bounce" }] },
    });
    expect(events.status).toBe(200);
    expect(events.body.data).toEqual({ received: 3, bounced: 1, complained: 1, soft_bounces: 1, unknown: 1 });
    expect((await one(bounced)).email_status).toBe("bounced");
    expect((await one(complained)).email_status).toBe("complained");
    await until(() => hooks.deliveries.some((d) => d.body?.type === "subscriber.complained" && d.body.data.subscriber.email === complained), 5_000, "subscriber.complained webhook");
    expect(hooks.deliveries.some((d) => d.body?.type === "subscriber.bounced" && d.body.data.subscriber.email === bounced)).toBe(true);
    const filtered = await s.request("GET", `${path}/subscribers?email_status=bounced`, { key });
    expect(filtered.body.data.subscribers.map((x: { email: string }) => x.email)).toEqual([bounced]);

    const subject = `Launch news ${t}`;
    const b = (await create({ subject, body_markdown: "Hi {{first_name}},\n\nWe launch **soon**.", segment: { tags_any: ["launch"] } })).body.data.broadcast;
    expect(b.recipients).toBe(3);
    const sent = await s.request("POST", `${path}/broadcasts/${b.id}/send`, { key });
    expect(sent.status).toBe(200);
    expect(sent.body.data.broadcast.status).toBe("sending");
    const done = await until(async () => {
      const x = await get(b.id);
      return x.status === "sent" && x;
    }, 20_000, "the broadcast to be sent");
    expect(done).toMatchObject({ recipients: 3, sent: 3, failed: 0, bounced: 0 });
    expect(done.finished_at).toBeGreaterThanOrEqual(done.started_at);
    for (const [i, email] of inSegment.entries()) {
      const got = mailsTo(email, subject);
      expect(got.length).toBe(1);
      const m = got[0];
      expect(m.text).toContain(`Hi Person${i},`);
      expect(m.html).toContain("<strong>soon</strong>");
      expect(m.messageId).toMatch(/^<evt_[A-Za-z0-9]+@rocket\.example>$/);
      expect(header(m, "list-unsubscribe")).toMatch(/^<http:\/\/wl\.broadcast\.example\/u\/[^>]+>$/);
      expect(header(m, "list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    }
    for (const email of [outside, unsubscribed, bounced, complained]) expect(mailsTo(email, subject)).toEqual([]);
    // sending again is a 409: a broadcast goes once
    expect((await s.request("POST", `${path}/broadcasts/${b.id}/send`, { key })).status).toBe(409);

    // DESIGN §10: no email of any kind to a complained address, not only broadcasts: an invitation is withheld too
    expect((await s.request("POST", `${path}/subscribers/invite`, { key, body: { emails: [complained] } })).status).toBe(200);
    const withheld = await until(async () => {
      const emails = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(complained)}/emails`, { key })).body.data.emails;
      return emails.find((e: { kind: string; status: string }) => e.kind === "invitation" && e.status === "failed");
    }, 10_000, "the invitation to be withheld");
    expect(withheld.error).toBe("not sent: the address complained");
    expect(mailsTo(complained)).toEqual([]);

    const history = await s.request("GET", `${path}/subscribers/${encodeURIComponent(inSegment[0])}/emails`, { key });
    expect(history.status).toBe(200);
    expect(history.body.data.emails).toContainEqual(expect.objectContaining({ kind: "broadcast", broadcast_id: b.id, subject, status: "sent", error: null }));
  });

  test("a 5xx at RCPT marks the subscriber bounced, counts in the broadcast, and sends the subscriber.bounced webhook", async () => {
    const { key, path, create, signUp, one, get } = await waitlist();
    const t = uniq();
    const good = `g-${t}@example.com`;
    const gone = `gone-${t}@example.com`;
    await signUp(good, "Good");
    await signUp(gone, "Gone");
    smtp.refuse(gone);
    const b = (await create({ subject: `Refused ${t}`, body_markdown: "Hello {{first_name}} {{unsubscribe_link}}" })).body.data.broadcast;
    await s.request("POST", `${path}/broadcasts/${b.id}/send`, { key });
    const done = await until(async () => {
      const x = await get(b.id);
      return x.status === "sent" && x;
    }, 20_000, "the broadcast to be sent");
    expect(done).toMatchObject({ recipients: 2, sent: 1, bounced: 1, failed: 0 });
    expect((await one(gone)).email_status).toBe("bounced");
    await until(() => hooks.deliveries.some((d) => d.body?.type === "subscriber.bounced" && d.body.data.subscriber.email === gone), 5_000, "subscriber.bounced webhook");
    const history = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(gone)}/emails`, { key })).body.data.emails;
    expect(history[0]).toMatchObject({ kind: "broadcast", status: "failed" });
    expect(history[0].error).toMatch(/550/);
    // the body showed the link itself: no second one appended
    expect(mailsTo(good, `Refused ${t}`)[0].text!.match(/\/u\//g)!.length).toBe(1);
  });

  test("a test copy goes to the given address with example values; a scheduled broadcast cancelled sends nothing", async () => {
    const { key, path, create, signUp, get } = await waitlist();
    const t = uniq();
    const member = `m-${t}@example.com`;
    await signUp(member, "Member");
    const b = (await create({ subject: `Scheduled ${t}`, body_markdown: "Hi {{first_name}}, see {{status_link}}" })).body.data.broadcast;
    const team = `team-${t}@example.com`;
    expect((await s.request("POST", `${path}/broadcasts/${b.id}/test`, { key, body: { email: team } })).status).toBe(200);
    const copy = await until(() => mailsTo(team)[0], 5_000, "the test copy");
    expect(copy.subject).toBe(`[Test] Scheduled ${t}`);
    expect(copy.text).toContain("Hi Ada,");
    expect(copy.text).toContain(`${BASE_URL}/t/example`);
    expect((await s.request("POST", `${path}/broadcasts/${b.id}/test`, { key, body: { email: "not-an-email" } })).status).toBe(400);

    const later = Date.now() + 3_600_000;
    const scheduled = await s.request("POST", `${path}/broadcasts/${b.id}/send`, { key, body: { send_at: later } });
    expect(scheduled.body.data.broadcast).toMatchObject({ status: "scheduled", send_at: later });
    const cancelled = await s.request("POST", `${path}/broadcasts/${b.id}/cancel`, { key });
    expect(cancelled.body.data.broadcast.status).toBe("cancelled");
    expect((await s.request("POST", `${path}/broadcasts/${b.id}/cancel`, { key })).status).toBe(409);
    expect((await s.request("POST", `${path}/broadcasts/${b.id}/send`, { key })).status).toBe(409);
    expect((await get(b.id)).sent).toBe(0);
    expect(mailsTo(member, `Scheduled ${t}`)).toEqual([]);
  });
});

describe("provider reports", () => {
  test("Amazon SES over SNS (key as the Basic password) and Postmark bodies mark addresses; a bad report changes nothing", async () => {
    const { key, signUp, one } = await waitlist();
    const t = uniq();
    const [ses, pm, pmSoft, kept] = ["ses", "pm", "soft", "kept"].map((p) => `${p}-${t}@example.com`);
    for (const email of [ses, pm, pmSoft, kept]) await signUp(email);
    const sns = {
      Type: "Notification",
      MessageId: "m-1",
      TopicArn: "arn:aws:sns:eu-west-1:123456789012:ses-bounces",
      Message: JSON.stringify({ notificationType: "Bounce", bounce: { bounceType: "Permanent", bouncedRecipients: [{ emailAddress: ses }] }, mail: { destination: [ses] } }),
    };
    const basic = `Basic ${Buffer.from(`sns:${key}`).toString("base64")}`;
    const r1 = await s.request("POST", "/api/v1/email/events", { raw: JSON.stringify(sns), headers: { authorization: basic, "content-type": "text/plain; charset=UTF-8" } });
    expect(r1.status).toBe(200);
    expect(r1.body.data.bounced).toBe(1);
    expect((await one(ses)).email_status).toBe("bounced");
    const r2 = await s.request("POST", "/api/v1/email/events", { key, body: { RecordType: "SpamComplaint", Email: pm, Type: "SpamComplaint" } });
    expect(r2.body.data.complained).toBe(1);
    expect((await one(pm)).email_status).toBe("complained");
    const r3 = await s.request("POST", "/api/v1/email/events", { key, body: { RecordType: "Bounce", Type: "SoftBounce", Email: pmSoft } });
    expect(r3.body.data.soft_bounces).toBe(1);
    expect((await one(pmSoft)).email_status).toBe("ok");
    // the last report is bad: the first is not applied either
    const bad = await s.request("POST", "/api/v1/email/events", { key, body: { events: [{ email: kept, type: "hard_bounce" }, { email: kept, type: "hard_bounce", waitlist: "wl_nope" }] } });
    expect(bad.status).toBe(404);
    expect(bad.body.message).toMatch(/wl_nope.*events\[1\]\.waitlist/);
    expect((await one(kept)).email_status).toBe("ok");
    const confirm = await s.request("POST", "/api/v1/email/events", { key, body: { Type: "SubscriptionConfirmation", SubscribeURL: "http://127.0.0.1:1/confirm" } });
    expect(confirm.status).toBe(400);
    expect(confirm.body.message).toMatch(/SubscribeURL/);
    expect((await s.request("POST", "/api/v1/email/events", { body: { events: [{ email: kept, type: "complaint" }] } })).status).toBe(401);
  });
});
