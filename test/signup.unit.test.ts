// The sign-up and confirmation services without HTTP, on the suites' engine (TEST_ENGINE): the row locks taken
// before `last_seq + 1` and before a referral, the referral credit, milestones, fraud and the confirmation caps.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../src/db/open";
import type { Waitlist } from "../src/http/api";
import { confirmSubscriber } from "../src/subscribers/confirm";
import { pruneConfirmationSends, resendConfirmation } from "../src/subscribers/confirmation-caps";
import type { SignUpInput } from "../src/subscribers/model";
import { signUp, type SignUpContext } from "../src/subscribers/signup";
import { recountRanks, scratchDatabase } from "./support/db";
import { dayOf } from "../src/clock";
import { engine } from "./support/server";

let db: Db;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await scratchDatabase());
  await db.exec(sql`UPDATE waitlists SET referral_enabled = TRUE, signup_points = 50, referral_points = 30, validate_emails = FALSE,
    webhook_endpoints = 1, milestones = ${JSON.stringify([{ referrals: 2, reward: "r2", tag: "vip" }])} WHERE id = 'w'`);
  await db.exec(sql`INSERT INTO webhook_endpoints (id, waitlist_id, url, secret, created_at, updated_at) VALUES ('we', 'w', 'https://hook.example.com', 'whsec_x', 0, 0)`);
});
afterAll(() => close());

const ctx: SignUpContext = { joinedWith: "api", requestIp: null, refererHost: null, baseUrl: "https://x", dispatch: () => {} };
const waitlist = async () => (await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, "w")))[0] as Waitlist;
type Answer = { is_new_sign_up: boolean; is_pending_confirmation: boolean; position?: number; points?: number; referral_code?: string };
const join = async (w: Waitlist, input: { email: string; metadata?: Record<string, unknown> }) => (await signUp(db, w, input as SignUpInput, ctx)) as Answer;
const count = async (q: ReturnType<typeof sql>) => (await db.rows<{ n: number }>(q))[0].n;

test("sign-ups at once take positions 1..n; a repeat is not new; referees at once credit the referrer and reach its milestone once", async () => {
  const w = await waitlist();
  const many = await Promise.all(Array.from({ length: 12 }, (_, i) => join(w, { email: `a${i}@x.io` })));
  expect(many.map((r) => r.position).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  const first = many.find((r) => r.position === 1)!;
  expect((await join(w, { email: " A0@X.io" })).is_new_sign_up).toBe(false);

  const referees = await Promise.all(Array.from({ length: 3 }, (_, i) => join(w, { email: `r${i}@x.io`, metadata: { referred_by: first.referral_code } })));
  expect(referees.map((r) => [r.is_new_sign_up, r.points])).toEqual(Array(3).fill([true, 50]));
  expect(await db.rows(sql`SELECT points, referral_count FROM subscribers WHERE referral_code = ${first.referral_code!}`)).toEqual([{ points: 140, referral_count: 3 }]);
  expect(await count(sql`SELECT count(*) AS n FROM milestone_rewards`)).toBe(1);
  expect(await count(sql`SELECT count(*) AS n FROM subscriber_tags`)).toBe(1);
  expect(await count(sql`SELECT count(*) AS n FROM outbox WHERE topic = 'referral.credited'`)).toBe(3);
});

test("a referee with its referrer's client_ip signs up without credit (self_referral)", async () => {
  const w = await waitlist();
  const ref = await join(w, { email: "ip@x.io", metadata: { client_ip: "1.2.3.4" } });
  expect((await join(w, { email: "ip2@x.io", metadata: { client_ip: "1.2.3.4", referred_by: ref.referral_code } })).is_new_sign_up).toBe(true);
  const [r] = await db.rows<{ credited: unknown; reason: string }>(sql`SELECT credited, reason FROM referrals
    WHERE referee_id = (SELECT id FROM subscribers WHERE email = 'ip2@x.io')`);
  expect([Boolean(r.credited), r.reason]).toEqual([false, "self_referral"]);
});

test("a referrer deleted while its referees sign up: every sign-up succeeds, distinct confirmation numbers", async () => {
  const w = await waitlist();
  for (let i = 0; i < 15; i++) {
    const gone = await join(w, { email: `g${i}@x.io` });
    const ups = Array.from({ length: 6 }, (_, k) =>
      Bun.sleep(k % 3).then(() => join(w, { email: `o${i}-${k}@x.io`, metadata: { referred_by: gone.referral_code } })),
    );
    const del = Bun.sleep(i % 3).then(() =>
      db.write([
        sql`UPDATE subscribers SET referrer_id = NULL WHERE referrer_id = (SELECT id FROM subscribers WHERE email = ${`g${i}@x.io`})`,
        sql`DELETE FROM subscribers WHERE email = ${`g${i}@x.io`}`,
      ]),
    );
    expect((await Promise.all(ups)).map((r) => r.is_new_sign_up)).toEqual(Array(6).fill(true));
    await del;
  }
  expect(await count(sql`SELECT count(*) AS n FROM referrals WHERE referrer_id NOT IN (SELECT id FROM subscribers)`)).toBe(0);
  const seqs = await db.rows<{ seq: number }>(sql`SELECT seq FROM subscribers WHERE seq IS NOT NULL`);
  expect(new Set(seqs.map((s) => s.seq)).size).toBe(seqs.length);
});

test("double opt-in: a pending referee confirmed by two clicks is confirmed once and credits its referrer once", async () => {
  await db.exec(sql`UPDATE waitlists SET double_opt_in = TRUE WHERE id = 'w'`);
  const w = await waitlist();
  const [referrer] = await db.rows<{ referral_code: string; points: number }>(sql`SELECT referral_code, points FROM subscribers WHERE email = 'a5@x.io'`);
  expect((await join(w, { email: "p@x.io", metadata: { referred_by: referrer.referral_code } })).is_pending_confirmation).toBe(true);
  const [{ confirm_token }] = await db.rows<{ confirm_token: string }>(sql`SELECT confirm_token FROM subscribers WHERE email = 'p@x.io'`);
  const click = () => confirmSubscriber(db, confirm_token, () => {});
  // two clicks at once on PostgreSQL; on SQLite one after the other (two interactive transactions of one process
  // wait on each other's write lock there)
  const clicks = engine === "pg" ? await Promise.all([click(), click()]) : [await click(), await click()];
  expect(clicks.every((c) => c?.signUpToken)).toBe(true);
  expect(await db.rows(sql`SELECT status FROM subscribers WHERE email = 'p@x.io'`)).toEqual([{ status: "confirmed" }]);
  expect(await count(sql`SELECT count(*) AS n FROM outbox WHERE topic = 'subscriber.confirmed'`)).toBe(1);
  expect(await db.rows(sql`SELECT points FROM subscribers WHERE email = 'a5@x.io'`)).toEqual([{ points: referrer.points + 30 }]);

  await resendConfirmation(db, w, "nobody@x.io", () => {});
  expect((await pruneConfirmationSends(db)).changed).toBe(0);
});

test("one address signing up to 8 double opt-in waitlists at once gets 3 confirmation emails (the daily cap)", async () => {
  const ids = ["w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8"];
  for (const id of ids) {
    await db.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body,
      signing_secret, double_opt_in, validate_emails, created_at, updated_at)
      VALUES (${id}, 'a', ${`k-${id}`}, ${`s-${id}`}, ${`n-${id}`}, '', '', '', '', '', TRUE, FALSE, 0, 0)`);
  }
  const lists = await Promise.all(ids.map(async (id) => (await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, id)))[0] as Waitlist));
  const answers = await Promise.all(lists.map((w) => join(w, { email: "many@x.io" })));
  expect(answers.filter((a) => a.is_new_sign_up)).toHaveLength(8);
  expect(await count(sql`SELECT count(*) AS n FROM outbox WHERE topic = 'confirmation' AND waitlist_id IN ${ids}`)).toBe(3);
  expect(await count(sql`SELECT count(*) AS n FROM confirmation_sends WHERE email = 'many@x.io'`)).toBe(3);
});

test("sign-ups of one turn on a waitlist without webhooks or welcome email (one INSERT of many rows on the embedded file): positions 1..n in the order of their confirmation numbers, a repeated email one subscriber", async () => {
  await db.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body,
    signing_secret, validate_emails, referral_enabled, signup_points, created_at, updated_at)
    VALUES ('rows', 'a', 'k-rows', 's-rows', 'n-rows', '', '', '', '', '', FALSE, TRUE, 50, 0, 0)`);
  const [w] = (await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, "rows"))) as Waitlist[];
  const version = w.version;
  const emails = [...Array.from({ length: 30 }, (_, i) => `m${i}@x.io`), "m3@x.io", "m7@x.io"];
  const answers = await Promise.all(emails.map((email) => join(w, { email })));
  expect(answers.filter((a) => a.is_new_sign_up)).toHaveLength(30);
  expect(answers.map((a) => a.position).sort((a, b) => a! - b!)).toEqual([...Array.from({ length: 30 }, (_, i) => i + 1), 4, 8].sort((a, b) => a - b));
  // the repeats answer with the subscriber the first sign-up made
  for (const [i, repeat] of [[3, 30], [7, 31]]) expect(answers[repeat].referral_code).toBe(answers[i].referral_code);
  const rows = await db.rows<{ email: string; seq: number }>(sql`SELECT email, seq FROM subscribers WHERE waitlist_id = 'rows' ORDER BY seq`);
  expect(rows).toHaveLength(30);
  expect(new Set(rows.map((r) => r.seq)).size).toBe(30);
  // each answer's position is its place in the order of confirmation numbers (all have the same points)
  const answered = new Map(emails.slice(0, 30).map((email, i) => [email, answers[i].position]));
  expect(rows.map((r) => answered.get(r.email))).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  expect(await db.rows(sql`SELECT subscribers_count, last_seq, version FROM waitlists WHERE id = 'rows'`)).toEqual([{ subscribers_count: 30, last_seq: rows[29].seq, version }]);
  await expectCountersOfRows("rows", 30);

  // the same emails again at once: nothing new, nothing counted, the waitlist's version unchanged
  const again = await Promise.all(emails.map((email) => join(w, { email })));
  expect(again.filter((a) => a.is_new_sign_up)).toHaveLength(0);
  expect(again.map((a) => a.position)).toEqual(answers.map((a) => a.position));
  expect(await db.rows(sql`SELECT subscribers_count, last_seq, version FROM waitlists WHERE id = 'rows'`)).toEqual([{ subscribers_count: 30, last_seq: rows[29].seq, version }]);
  await expectCountersOfRows("rows", 30);
});

test("sign-ups of one turn to two waitlists, and with two sign-up points: each waitlist's positions and counters exact", async () => {
  for (const id of ["rows-a", "rows-b"]) {
    await db.exec(sql`INSERT INTO waitlists (id, account_id, key, slug, name, welcome_subject, welcome_body, confirmation_subject, confirmation_body,
      signing_secret, validate_emails, referral_enabled, signup_points, created_at, updated_at)
      VALUES (${id}, 'a', ${`k-${id}`}, ${`s-${id}`}, ${`n-${id}`}, '', '', '', '', '', FALSE, TRUE, 10, 0, 0)`);
  }
  const [a, b] = await Promise.all(["rows-a", "rows-b"].map(async (id) => (await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, id)))[0] as Waitlist));
  // the waitlist as a request that read it before a settings change would carry it: more sign-up points
  const richer = { ...a, signupPoints: 20 };
  const turn = [
    ...Array.from({ length: 12 }, (_, i) => join(a, { email: `a${i}@x.io` })),
    ...Array.from({ length: 10 }, (_, i) => join(b, { email: `b${i}@x.io` })),
    ...Array.from({ length: 9 }, (_, i) => join(richer, { email: `r${i}@x.io` })),
    ...Array.from({ length: 3 }, (_, i) => join(a, { email: `c${i}@x.io` })),
  ];
  const answers = await Promise.all(turn);
  expect(answers.every((x) => x.is_new_sign_up)).toBe(true);
  // in the order of the turn: a's first 12 at 1..12; b's 10 at 1..10; the richer 9 ahead of all 12 (points 20 > 10)
  // at 1..9; then 3 more of a's behind all 21
  expect(answers.map((x) => x.position)).toEqual([
    ...Array.from({ length: 12 }, (_, i) => i + 1),
    ...Array.from({ length: 10 }, (_, i) => i + 1),
    ...Array.from({ length: 9 }, (_, i) => i + 1),
    22, 23, 24,
  ]);
  await expectCountersOfRows("rows-a", 24);
  await expectCountersOfRows("rows-b", 10);
});

/** The counters the triggers (or a merged INSERT's statements) keep equal what the waitlist's rows make them. */
async function expectCountersOfRows(waitlistId: string, confirmed: number) {
  const num = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])));
  const counted = await db.rows(sql`SELECT level, points, bucket, count FROM rank_counts WHERE waitlist_id = ${waitlistId} AND count <> 0 ORDER BY level, points, bucket`);
  const recounted = await db.rows(sql.raw(recountRanks(`s.waitlist_id = '${waitlistId}'`)));
  expect(num(counted)).toEqual(num(recounted));
  // each day's sign-ups: the UTC date of each confirmed subscriber's confirmation (or joining)
  const days = new Map<string, number>();
  for (const r of await db.rows<{ at: number }>(sql`SELECT coalesce(confirmed_at, joined_at) AS at FROM subscribers WHERE waitlist_id = ${waitlistId} AND seq IS NOT NULL`)) {
    const day = dayOf(Number(r.at));
    days.set(day, (days.get(day) ?? 0) + 1);
  }
  const daily = await db.rows<{ date: string; n: number }>(sql`SELECT date, sign_ups AS n FROM daily_stats WHERE waitlist_id = ${waitlistId} AND sign_ups <> 0 ORDER BY date`);
  expect(daily.map((d) => [d.date, Number(d.n)])).toEqual([...days].sort());
  expect([...days.values()].reduce((a, b) => a + b, 0)).toBe(confirmed);
  // the marker that defers a merged INSERT's counters (embedded file only) never outlives its transaction
  if (db.d.name === "sqlite") expect(await db.rows(sql`SELECT waitlist_id FROM counters_deferred`)).toEqual([]);
  expect(num(await db.rows(sql`SELECT subscribers_count AS n FROM waitlists WHERE id = ${waitlistId}`))).toEqual([{ n: confirmed }]);
  expect(num(await db.rows(sql`SELECT max(seq) AS n FROM subscribers WHERE waitlist_id = ${waitlistId}`))).toEqual(
    num(await db.rows(sql`SELECT last_seq AS n FROM waitlists WHERE id = ${waitlistId}`)),
  );
}
