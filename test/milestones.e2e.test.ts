// Milestone rewards (issue 11 item 4): settings, the reward reached exactly once (concurrent referrals
// included, and never again after a take-back), its tag, webhook and email. Over real HTTP with a real
// SMTP server and webhook receiver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";
import { startReceiver, startSmtp, type Receiver, type Smtp } from "./support/peers";

let s: TestServer;
let smtp: Smtp;
let hooks: Receiver;
beforeAll(async () => {
  [smtp, hooks] = await Promise.all([startSmtp(), startReceiver()]);
  s = await startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  hooks.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const MILESTONES = [
  { referrals: 5, reward: "Lifetime discount", tag: "Ambassador" },
  { referrals: 2, reward: "Early access" },
];

async function waitlist(settings: Record<string, unknown> = {}) {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Milestones ${uniq()}`, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const r = await s.request("PATCH", `${path}/settings`, { key, body: { milestones: MILESTONES, webhook: { url: hooks.url, enabled: true }, ...settings } });
  expect(r.status, r.text).toBe(200);
  const referrer = (await s.request("POST", `${path}/sign-up`, { key, body: { email: `ref-${uniq()}@example.com` } })).body;
  const refer = (email: string) => s.request("POST", `${path}/sign-up`, { key, body: { email, metadata: { referred_by: referrer.referral_code } } });
  const rewards = () => hooks.deliveries.filter((d) => d.body?.type === "milestone.reached" && d.body?.waitlist?.key === w.key);
  return { key, w, path, referrer, refer, rewards };
}

describe("settings", () => {
  test("milestones are sorted by threshold and shown with the milestone email; a bad list is 400 naming the problem and changes nothing", async () => {
    const { key, path } = await waitlist();
    const settings = (await s.request("GET", `${path}/settings`, { key })).body.data.settings;
    expect(settings.milestones).toEqual([
      { referrals: 2, reward: "Early access", tag: null },
      { referrals: 5, reward: "Lifetime discount", tag: "Ambassador" },
    ]);
    expect(Object.keys(settings.milestone_email).sort()).toEqual(["body", "subject"]);
    const bad: [unknown, string][] = [
      [Array.from({ length: 11 }, (_, i) => ({ referrals: i + 1, reward: "x" })), "milestones"],
      [[{ referrals: 3, reward: "a" }, { referrals: 3, reward: "b" }], "appears twice"],
      [[{ referrals: 0, reward: "a" }], "referrals"],
      [[{ referrals: 3, reward: "   " }], "blank"],
      [[{ referrals: 3, reward: "<b>x</b>" }], "plain text"],
      [[{ referrals: 3, reward: "x", extra: 1 }], "extra"],
    ];
    for (const [milestones, message] of bad) {
      const r = await s.request("PATCH", `${path}/settings`, { key, body: { milestones } });
      expect(r.status, JSON.stringify(milestones)).toBe(400);
      expect(r.body.message).toContain(message);
    }
    expect((await s.request("GET", `${path}/settings`, { key })).body.data.settings.milestones).toHaveLength(2);
  });
});

describe("reaching a milestone", () => {
  test("the 2nd credited referral reaches 'Early access' once: one milestone.reached webhook and one email with the reward; the 5th reaches 'Lifetime discount' and its tag", async () => {
    const { key, path, referrer, refer, rewards } = await waitlist({ milestone_email: { subject: "Reward: {{reward}}", body: "{{name}}, {{referral_count}} referrals earned you {{reward}}." } });
    const email = (await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=asc&limit=1`, { key })).body.data.subscribers[0].email;
    await refer(`f1-${uniq()}@example.com`);
    expect(rewards()).toHaveLength(0);
    await refer(`f2-${uniq()}@example.com`);
    const first = await until(() => rewards()[0], 5_000, "milestone webhook");
    expect(first.body.data.milestone).toEqual({ referrals: 2, reward: "Early access", tag: null, reached_at: expect.any(Number) });
    expect(first.body.data.subscriber.referral_code).toBe(referrer.referral_code);
    const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes(email) && m.subject === "Reward: Early access"), 5_000, "milestone email");
    expect(mail.text).toContain("2 referrals earned you Early access.");

    for (let i = 3; i <= 5; i++) await refer(`f${i}-${uniq()}@example.com`);
    await until(() => rewards().length === 2, 5_000, "second milestone");
    expect(rewards().map((d) => d.body.data.milestone.referrals)).toEqual([2, 5]);
    const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(sub.tags.map((t: { name: string }) => t.name)).toEqual(["Ambassador"]);
    const rewardMails = () => smtp.messages.filter((m) => JSON.stringify(m.to).includes(email) && String(m.subject).startsWith("Reward:"));
    await until(() => rewardMails().length === 2, 5_000, "the second milestone email");
    expect(rewardMails().map((m) => m.subject)).toEqual(["Reward: Early access", "Reward: Lifetime discount"]);
  });

  test("a reward is not taken back when a referral is, and is not given twice when the count comes back", async () => {
    const { key, path, refer, rewards } = await waitlist();
    await refer("a1@example.com");
    await refer("a2@example.com");
    await until(() => rewards().length === 1, 5_000, "milestone");
    expect((await s.request("DELETE", `${path}/subscribers/a2@example.com`, { key })).status).toBe(200);
    await refer("a3@example.com");
    // a later referral's events have been delivered, and no second reward among them
    const marker = `a4-${uniq()}@example.com`;
    await refer(marker);
    await until(() => hooks.deliveries.some((d) => d.body?.type === "subscriber.created" && d.body?.data?.subscriber?.email === marker), 5_000, "later events");
    expect(rewards()).toHaveLength(1);
  });

  test("20 referrals at once: each milestone is reached exactly once", async () => {
    const { w, refer, rewards } = await waitlist();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => refer(`c${i}-${uniq()}@example.com`)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    await until(() => rewards().length >= 2, 5_000, "both milestones");
    const marker = (await Promise.all([refer(`late-${uniq()}@example.com`)]))[0];
    expect(marker.status).toBe(200);
    await until(() => hooks.deliveries.filter((d) => d.body?.type === "referral.credited" && d.body?.waitlist?.key === w.key).length === 21, 5_000, "every credit delivered");
    expect(rewards().map((d) => d.body.data.milestone.referrals).sort((a: number, b: number) => a - b)).toEqual([2, 5]);
  });
});

describe("the status page /t/{sign_up_token}", () => {
  const statusPage = async (token: string) => (await fetch(`${s.url}/t/${token}`)).text();

  test("shows the next reward and how many referrals it needs, and the rewards reached", async () => {
    const { referrer, refer } = await waitlist();
    expect(await statusPage(referrer.sign_up_token)).toContain("Next reward: <strong>Early access</strong> at 2 referrals: 2 more to go.");
    await refer(`s1-${uniq()}@example.com`);
    expect(await statusPage(referrer.sign_up_token)).toContain("Next reward: <strong>Early access</strong> at 2 referrals: 1 more to go.");
    await refer(`s2-${uniq()}@example.com`);
    const html = await statusPage(referrer.sign_up_token);
    expect(html).toContain('<li class="reached"><span>2 referrals</span><span>Early access ✓</span></li>');
    expect(html).toContain("Next reward: <strong>Lifetime discount</strong> at 5 referrals: 3 more to go.");
  });

  test("with the leaderboard on, the top referrers by referrals show as a first name or a masked email; off, there is none", async () => {
    const { key, path, refer } = await waitlist();
    const second = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "jane.doe@gmail.com", name: "Jane Doe" } })).body;
    for (let i = 0; i < 3; i++) await refer(`l${i}-${uniq()}@example.com`);
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `friend-${uniq()}@example.com`, metadata: { referred_by: second.referral_code } } });
    expect(await statusPage(second.sign_up_token)).not.toContain("Top referrers");
    await s.request("PATCH", `${path}/settings`, { key, body: { leaderboard: true } });
    const html = await statusPage(second.sign_up_token);
    const board = html.slice(html.indexOf("Top referrers"));
    const referrerEmail = (await s.request("GET", `${path}/subscribers?sort_by=referral_count&sort_dir=desc&limit=1`, { key })).body.data.subscribers[0].email as string;
    expect(referrerEmail.startsWith("ref-")).toBe(true);
    expect(board).toContain(`<li><span>r***@example.com</span><span>3</span></li><li><span>Jane</span><span>1</span></li></ol>`);
    expect(html).not.toContain(referrerEmail);
    expect(html).not.toContain("jane.doe@gmail.com");
  });

  test("GET .../leaderboard (issue 46): rank, masked name, referrals and points, top first, whatever the status page's setting, exact after a change", async () => {
    const { key, path, refer } = await waitlist();
    const jane = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "jane.roe@gmail.com", name: "Jane Roe" } })).body;
    const board = async (query = "") => {
      const r = await s.request("GET", `${path}/leaderboard${query}`, { key });
      expect(r.status).toBe(200);
      return r.body.data.leaderboard;
    };
    expect(await board()).toEqual([]);
    for (let i = 0; i < 2; i++) await refer(`lb${i}-${uniq()}@example.com`);
    await s.request("POST", `${path}/sign-up`, { key, body: { email: `f-${uniq()}@example.com`, metadata: { referred_by: jane.referral_code } } });
    // the leaderboard setting is off: the API answers anyway; points follow the waitlist's rewards (50 + 30 a referral)
    expect(await board()).toEqual([
      { rank: 1, name: "r***@example.com", referrals: 2, points: 110 },
      { rank: 2, name: "Jane", referrals: 1, points: 80 },
    ]);
    expect(await board("?limit=1")).toEqual([{ rank: 1, name: "r***@example.com", referrals: 2, points: 110 }]);
    // two more for Jane: she leads at once
    for (let i = 0; i < 2; i++) await s.request("POST", `${path}/sign-up`, { key, body: { email: `g${i}-${uniq()}@example.com`, metadata: { referred_by: jane.referral_code } } });
    expect((await board()).map((l: { name: string }) => l.name)).toEqual(["Jane", "r***@example.com"]);
    for (const bad of ["?limit=0", "?limit=101", "?limit=x"]) {
      const r = await s.request("GET", `${path}/leaderboard${bad}`, { key });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain("limit");
    }
  });
});
