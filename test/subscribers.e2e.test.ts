// spec: Subscriber, States and transitions (Subscriber), Subscribers endpoints, Errors, Limits; DESIGN §4 (subscribers and
// positions, fraud rules, Tags and Export extensions) and §5; decisions "Keys, plans and limits". Over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { startServer, until, type Response, type TestServer } from "./support/server";
import { parseCsv } from "./support/csv";
import { inOneWindow } from "./support/windows";

const BASE_URL = "https://wl.example.com";

let s: TestServer; // RATE_LIMITS=off: everything but the rate-limit test
let limited: TestServer; // default limits
let biz: string; // a business account key shared by tests that do not depend on the plan
beforeAll(async () => {
  [s, limited] = await Promise.all([startServer({ env: { BASE_URL, RATE_LIMITS: "off" } }), startServer({ env: { BASE_URL } })]);
  biz = (await s.account("business")).key;
});
afterAll(() => Promise.all([s.stop(), limited.stop()]));

const uniq = () => Math.random().toString(36).slice(2, 8);
const enc = encodeURIComponent;

const NEW_CONFIRMED_KEYS = ["inflated_position", "is_new_sign_up", "is_pending_confirmation", "message", "points", "position", "redirect_url", "referral_code", "sign_up_token", "success"];
const ALREADY_REGISTERED_KEYS = NEW_CONFIRMED_KEYS.filter((k) => k !== "points");
const PENDING_KEYS = ["is_new_sign_up", "is_pending_confirmation", "message", "redirect_url", "success"];
const SUBSCRIBER_KEYS = [
  "answers", "city", "country", "deliverability", "email", "email_status", "id", "inflated_position", "ip_address", "joined_at", "joined_with", "metadata", "name", "phone",
  "points", "position", "referral_code", "referral_count", "referred_by", "referrer_host", "referring_domain", "sign_up_token", "status", "tags", "thank_you_url", "timezone",
  "unsubscribed_at", "utm",
];
const UPDATE_KEYS = ["email", "id", "metadata", "name", "phone", "points", "sign_up_token", "thank_you_url", "updated_at"];
const REFERRALS = { enabled: true, signup_points: 50, referral_points: 30 };

const keysOf = (o: object) => Object.keys(o).sort();
const badRequest = (field: string) => ({ statusCode: 400, error: "Bad Request", message: expect.stringContaining(field) });
const notFound = { statusCode: 404, error: "Not Found", message: expect.any(String) };
const forbidden = { statusCode: 403, error: "Forbidden", message: expect.any(String) };

/** A waitlist of `key`'s account and small helpers bound to it. */
async function waitlist(opts: { key?: string; server?: TestServer; body?: Record<string, unknown> } = {}) {
  const server = opts.server ?? s;
  const key = opts.key ?? biz;
  const r = await server.request("POST", "/api/v1/waitlists", { key, body: { name: `Subs ${uniq()} ${uniq()}`, ...opts.body } });
  expect(r.status, r.text).toBe(201);
  const w = r.body.data.waitlist as { id: string; key: string; slug: string; name: string };
  const base = `/api/v1/waitlist/${w.key}`;
  let lastSignUp = 0;
  const wl = {
    w,
    key,
    base,
    signUp: async (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) => {
      // joined_at has millisecond resolution: keep sequential sign-ups in distinct milliseconds so date order is total
      await until(() => Date.now() > lastSignUp, 1_000);
      const res = await server.request("POST", `${base}/sign-up`, { key: o.key ?? key, body, headers: o.headers });
      lastSignUp = Date.now();
      return res;
    },
    get: (ref: string) => server.request("GET", `${base}/subscribers/${enc(ref)}`, { key }),
    put: (ref: string, body: unknown) => server.request("PUT", `${base}/subscribers/${enc(ref)}`, { key, body }),
    del: (ref: string) => server.request("DELETE", `${base}/subscribers/${enc(ref)}`, { key }),
    list: (query = "") => server.request("GET", `${base}/subscribers${query ? `?${query}` : ""}`, { key }),
    settings: async (body: Record<string, unknown>) => {
      const p = await server.request("PATCH", `${base}/settings`, { key, body });
      expect(p.status, p.text).toBe(200);
    },
    total: async () => (await server.request("GET", `${base}/stats`, { key })).body.data.subscribers_total as number,
    /** The subscriber as GET returns it (200 asserted). */
    one: async (ref: string) => {
      const g = await server.request("GET", `${base}/subscribers/${enc(ref)}`, { key });
      expect(g.status, g.text).toBe(200);
      return g.body.data.subscriber;
    },
  };
  return wl;
}

/** Signs up and asserts a new confirmed sign-up. */
async function joined(wl: Awaited<ReturnType<typeof waitlist>>, body: Record<string, unknown>) {
  const r = await wl.signUp(body);
  expect(r.status, r.text).toBe(200);
  expect(r.body.is_new_sign_up).toBe(true);
  return r.body as { position: number; inflated_position: number; points: number; referral_code: string; sign_up_token: string };
}


describe("sign-up responses", () => {
  test("a new confirmed sign-up has exactly success, is_new_sign_up, is_pending_confirmation, message, position, inflated_position, points, referral_code, sign_up_token, redirect_url (thank-you page)", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const r = await wl.signUp({ email: "alice@example.com" });
    expect(r.status).toBe(200);
    expect(keysOf(r.body)).toEqual(NEW_CONFIRMED_KEYS);
    expect(r.body).toEqual({
      success: true,
      is_new_sign_up: true,
      is_pending_confirmation: false,
      message: expect.any(String),
      position: 1,
      inflated_position: 1,
      points: 50,
      referral_code: expect.any(String),
      sign_up_token: expect.any(String),
      redirect_url: `${BASE_URL}/t/${r.body.sign_up_token}`,
    });
    expect(r.body.message.length).toBeGreaterThan(0);
    expect(r.body.referral_code.length).toBeGreaterThan(0);
    expect(r.body.sign_up_token.length).toBeGreaterThan(0);
  });

  test("the same email again (any case, with spaces) is 200 already registered: is_new_sign_up false, no points key, same position, referral_code and sign_up_token", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const first = await joined(wl, { email: "alice@example.com" });
    await joined(wl, { email: "bob@example.com" });
    const again = await wl.signUp({ email: "  ALICE@Example.COM  ", name: "Someone Else" });
    expect(again.status).toBe(200);
    expect(keysOf(again.body)).toEqual(ALREADY_REGISTERED_KEYS);
    expect("points" in again.body).toBe(false);
    expect(again.body).toEqual({
      success: true,
      is_new_sign_up: false,
      is_pending_confirmation: false,
      message: expect.any(String),
      position: first.position,
      inflated_position: first.inflated_position,
      referral_code: first.referral_code,
      sign_up_token: first.sign_up_token,
      redirect_url: `${BASE_URL}/t/${first.sign_up_token}`,
    });
    // spec: "No change" for a confirmed subscriber signing up again
    expect((await wl.one("alice@example.com")).name).toBeNull();
    expect(await wl.total()).toBe(2);
  });

  test("with double opt-in a new sign-up has exactly success, is_new_sign_up, is_pending_confirmation, message, redirect_url (confirm-pending page); a repeat is is_new_sign_up false, still pending", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    await joined(wl, { email: "before@example.com" });
    await wl.settings({ double_opt_in: true });
    const r = await wl.signUp({ email: "Pending@Example.com" });
    expect(r.status).toBe(200);
    expect(keysOf(r.body)).toEqual(PENDING_KEYS);
    expect(r.body).toEqual({ success: true, is_new_sign_up: true, is_pending_confirmation: true, message: expect.any(String), redirect_url: `${BASE_URL}/pending/${wl.w.key}` });
    const again = await wl.signUp({ email: " pending@example.COM" });
    expect(again.status).toBe(200);
    expect(keysOf(again.body)).toEqual(PENDING_KEYS);
    expect(again.body).toEqual({ success: true, is_new_sign_up: false, is_pending_confirmation: true, message: expect.any(String), redirect_url: `${BASE_URL}/pending/${wl.w.key}` });
  });

  test("pending subscribers do not count in stats subscribers_total, have no position, points, referral_code or sign_up_token, and give no referral credit yet", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "confirmed1@example.com" });
    await joined(wl, { email: "confirmed2@example.com" });
    await wl.settings({ double_opt_in: true });
    for (const email of ["p1@example.com", "p2@example.com", "p3@example.com"]) {
      const r = await wl.signUp({ email, metadata: { referred_by: ref.referral_code } });
      expect(r.body.is_pending_confirmation).toBe(true);
    }
    expect(await wl.total()).toBe(2);
    const pending = await wl.one("p1@example.com");
    for (const absent of ["position", "inflated_position", "points", "referral_code", "sign_up_token"]) expect(Object.keys(pending)).not.toContain(absent);
    const referrer = await wl.one("confirmed1@example.com");
    expect([referrer.referral_count, referrer.points, referrer.position]).toEqual([0, 50, 1]);
  });
});

describe("emails", () => {
  test("emails are stored lowercase and trimmed; lookups by email are case-insensitive", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "  Alice@Example.COM " });
    const g = await s.request("GET", `${wl.base}/subscribers/ALICE%40Example.com`, { key: wl.key });
    expect(g.status).toBe(200);
    expect(g.body.data.subscriber.email).toBe("alice@example.com");
    const list = await wl.list();
    expect(list.body.data.subscribers.map((x: any) => x.email)).toEqual(["alice@example.com"]);
  });

  test("20 concurrent sign-ups of one email make exactly one subscriber, and exactly one response is is_new_sign_up true", async () => {
    const wl = await waitlist();
    const email = `race-${uniq()}@example.com`;
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.request("POST", `${wl.base}/sign-up`, { key: wl.key, body: { email: i % 2 ? email.toUpperCase() : email } })),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(rs.filter((r) => r.body.is_new_sign_up === true).length).toBe(1);
    expect(new Set(rs.map((r) => r.body.sign_up_token)).size).toBe(1);
    expect(rs.every((r) => r.body.position === 1)).toBe(true);
    const list = await wl.list();
    expect(list.body.data.total).toBe(1);
    expect(await wl.total()).toBe(1);
  });
});

describe("sign-up validation", () => {
  test("invalid sign-ups are 400 {statusCode, message} naming the field, and create nothing", async () => {
    const wl = await waitlist();
    const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    const cases: [unknown, string][] = [
      [{}, "email"],
      [{ name: "No Email" }, "email"],
      [{ email: "a@b" }, "email"],
      [{ email: "no-at" }, "email"],
      [{ email: "x@y..com" }, "email"],
      [{ email: `${"a".repeat(243)}@example.com` }, "email"], // 255 characters
      [{ email: "ok1@example.com", name: "n".repeat(201) }, "name"],
      [{ email: "ok2@example.com", phone: "1".repeat(201) }, "phone"],
      [{ email: "ok3@example.com", metadata: manyKeys }, "metadata"],
      [{ email: "ok4@example.com", metadata: { blob: "x".repeat(16 * 1024 + 1) } }, "metadata"],
      [{ email: "ok5@example.com", metadata: { client_ip: "999.1.1.1" } }, "client_ip"],
      [{ email: "ok6@example.com", metadata: { client_ip: "fe80::1%eth0" } }, "client_ip"], // issue 16: IPv6 is accepted, a zone is not
      [{ email: "ok7@example.com", nickname: "x" }, "nickname"],
    ];
    for (const [body, field] of cases) {
      const r = await wl.signUp(body);
      const what = JSON.stringify(body).slice(0, 80);
      expect(r.status, what).toBe(400);
      expect(keysOf(r.body), what).toEqual(["message", "statusCode"]);
      expect(r.body, what).toEqual({ statusCode: 400, message: expect.stringContaining(field) });
    }
    expect((await wl.list()).body.data.total).toBe(0);
    expect(await wl.total()).toBe(0);
  });

  test("with validate_emails on (default) a disposable domain is 400 and a normal address is stored as unconfirmed", async () => {
    const wl = await waitlist();
    const r = await wl.signUp({ email: "someone@mailinator.com" });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ statusCode: 400, message: expect.stringContaining("email") });
    await joined(wl, { email: "normal@example.com" });
    expect((await wl.one("normal@example.com")).deliverability).toBe("unconfirmed");
    expect((await wl.list()).body.data.total).toBe(1);
  });

  test("with validate_emails off a disposable or role address is accepted as risky, a normal one as unknown; syntax is still checked", async () => {
    const wl = await waitlist();
    await wl.settings({ validate_emails: false });
    await joined(wl, { email: "someone@mailinator.com" });
    await joined(wl, { email: "admin@example.com" });
    await joined(wl, { email: "normal@example.com" });
    expect((await wl.one("someone@mailinator.com")).deliverability).toBe("risky");
    expect((await wl.one("admin@example.com")).deliverability).toBe("risky");
    expect((await wl.one("normal@example.com")).deliverability).toBe("unknown");
    const bad = await wl.signUp({ email: "no-at" });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ statusCode: 400, message: expect.stringContaining("email") });
  });
});

describe("sign-up metadata", () => {
  test("reserved keys are not stored in metadata; custom keys are; client_ip becomes ip_address and referring_domain sets the field", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const referrer = await joined(wl, { email: "ref@example.com" });
    await joined(wl, {
      email: "meta@example.com",
      metadata: { client_ip: "81.2.69.160", referring_domain: "news.example.net", referred_by: referrer.referral_code, fingerprint: "fp-meta-1", plan: "pro", utm: { source: "hn" } },
    });
    const sub = await wl.one("meta@example.com");
    expect(sub.metadata).toEqual({ plan: "pro", utm: { source: "hn" } });
    expect(sub.ip_address).toBe("81.2.69.160");
    expect(sub.referring_domain).toBe("news.example.net");
    expect(sub.referred_by).toBe(referrer.referral_code);
  });

  test("without metadata.referring_domain the referring domain is the HTTP Referer's host; metadata overrides it", async () => {
    const wl = await waitlist();
    await wl.signUp({ email: "plain@example.com" }, { headers: { referer: "https://blog.example.org/post/1" } });
    await wl.signUp({ email: "override@example.com", metadata: { referring_domain: "twitter.com" } }, { headers: { referer: "https://blog.example.org/post/1" } });
    expect((await wl.one("plain@example.com")).referring_domain).toBe("blog.example.org");
    expect((await wl.one("override@example.com")).referring_domain).toBe("twitter.com");
  });

  test("country, city and timezone come from the offline IP database: 81.2.69.160 is GB/Europe/London, 8.8.8.8 is US, a private IP leaves them null", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "gb@example.com", metadata: { client_ip: "81.2.69.160" } });
    await joined(wl, { email: "us@example.com", metadata: { client_ip: "8.8.8.8" } });
    await joined(wl, { email: "lan@example.com", metadata: { client_ip: "10.0.0.1" } });
    const gb = await wl.one("gb@example.com");
    expect(gb.country).toBe("GB");
    expect(gb.timezone).toBe("Europe/London");
    expect(typeof gb.city).toBe("string");
    expect(gb.city.length).toBeGreaterThan(0);
    expect((await wl.one("us@example.com")).country).toBe("US");
    const lan = await wl.one("lan@example.com");
    expect(lan.ip_address).toBe("10.0.0.1");
    expect([lan.country, lan.city, lan.timezone]).toEqual([null, null, null]);
  });
});

describe("points and positions", () => {
  test("with the referral program on, the first sign-up is position 1 with signup_points; a referred sign-up credits the referrer referral_points and one referral_count", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const first = await joined(wl, { email: "first@example.com" });
    expect([first.position, first.points]).toEqual([1, 50]);
    const second = await joined(wl, { email: "second@example.com", metadata: { referred_by: first.referral_code } });
    expect([second.position, second.points]).toEqual([2, 50]);
    const referrer = await wl.one("first@example.com");
    expect([referrer.referral_count, referrer.points, referrer.position]).toEqual([1, 80, 1]);
    const referee = await wl.one("second@example.com");
    expect([referee.referred_by, referee.referral_count, referee.points]).toEqual([first.referral_code, 0, 50]);
  });

  test("inflated_position is position + position_offset in sign-up responses, already-registered responses, GET and the list", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    await joined(wl, { email: "a@example.com" });
    await wl.settings({ position_offset: 1000 });
    const b = await joined(wl, { email: "b@example.com" });
    expect([b.position, b.inflated_position]).toEqual([2, 1002]);
    const again = await wl.signUp({ email: "a@example.com" });
    expect([again.body.position, again.body.inflated_position]).toEqual([1, 1001]);
    const a = await wl.one("a@example.com");
    expect([a.position, a.inflated_position]).toEqual([1, 1001]);
    const list = await wl.list("sort_by=position&sort_dir=asc");
    expect(list.body.data.subscribers.map((x: any) => [x.position, x.inflated_position])).toEqual([[1, 1001], [2, 1002]]);
  });

  test("with the referral program disabled everyone has 0 points and position is join order, referrals included", async () => {
    const wl = await waitlist();
    const first = await joined(wl, { email: "one@example.com" });
    const second = await joined(wl, { email: "two@example.com" });
    const third = await joined(wl, { email: "three@example.com", metadata: { referred_by: second.referral_code } });
    const fourth = await joined(wl, { email: "four@example.com", metadata: { referred_by: second.referral_code } });
    expect([first, second, third, fourth].map((r) => [r.position, r.points])).toEqual([[1, 0], [2, 0], [3, 0], [4, 0]]);
    const list = await wl.list("sort_by=position&sort_dir=asc");
    expect(list.body.data.subscribers.map((x: any) => [x.email, x.position, x.points])).toEqual([
      ["one@example.com", 1, 0],
      ["two@example.com", 2, 0],
      ["three@example.com", 3, 0],
      ["four@example.com", 4, 0],
    ]);
    expect((await wl.one("two@example.com")).points).toBe(0);
    expect((await s.request("GET", `${wl.base}/stats`, { key: wl.key })).body.data.referral_program_enabled).toBe(false);
  });

  test("PUT points re-ranks at once: GET and the list by position reflect it immediately", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    for (const e of ["a", "b", "c", "d"]) await joined(wl, { email: `${e}@example.com` });
    const up = await wl.put("c@example.com", { points: 500 });
    expect(up.status).toBe(200);
    expect(up.body.data.subscriber.points).toBe(500);
    expect((await wl.one("c@example.com")).position).toBe(1);
    expect((await wl.one("a@example.com")).position).toBe(2);
    expect((await wl.put("a@example.com", { points: 0 })).status).toBe(200);
    const order = (await wl.list("sort_by=position&sort_dir=asc")).body.data.subscribers.map((x: any) => [x.email, x.position, x.points]);
    expect(order).toEqual([
      ["c@example.com", 1, 500],
      ["b@example.com", 2, 50],
      ["d@example.com", 3, 50],
      ["a@example.com", 4, 0],
    ]);
    // a sign-up after the change gets the exact next position
    const e = await joined(wl, { email: "e@example.com" });
    expect(e.position).toBe(4);
    expect((await wl.one("a@example.com")).position).toBe(5);
  });

  test("a referred sign-up's position counts its referrer when the credit moves the referrer ahead of it", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const r = await joined(wl, { email: "behind@example.com" });
    await joined(wl, { email: "other@example.com" });
    expect((await wl.put("behind@example.com", { points: 40 })).status).toBe(200); // last, with 40
    const referee = await joined(wl, { email: "referee@example.com", metadata: { referred_by: r.referral_code } });
    // the referrer now has 70: ahead of other (50) and of the referee (50, joined after other)
    expect([referee.position, referee.points]).toEqual([3, 50]);
    expect((await wl.one("referee@example.com")).position).toBe(3);
    expect([(await wl.one("behind@example.com")).position, (await wl.one("other@example.com")).position]).toEqual([1, 2]);
  });

  test("DELETE of a referee takes back exactly that referral's points and one referral_count; positions behind it close up at once", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com" });
    await joined(wl, { email: "kid1@example.com", metadata: { referred_by: ref.referral_code } });
    // the program's referral_points changes later: deletion takes back what was awarded (30), not the new value
    await wl.settings({ referral_rewards: { referral_points: 100 } });
    await joined(wl, { email: "kid2@example.com", metadata: { referred_by: ref.referral_code } });
    await joined(wl, { email: "tail@example.com" });
    const before = await wl.one("ref@example.com");
    expect([before.points, before.referral_count]).toEqual([180, 2]);
    expect((await wl.one("tail@example.com")).position).toBe(4);

    const d = await wl.del("kid1@example.com");
    expect(d.status).toBe(200);
    const after = await wl.one("ref@example.com");
    expect([after.points, after.referral_count, after.position]).toEqual([150, 1, 1]);
    expect((await wl.one("kid2@example.com")).position).toBe(2);
    expect((await wl.one("tail@example.com")).position).toBe(3);
    expect(await wl.total()).toBe(3);
    const list = await wl.list("sort_by=position&sort_dir=asc");
    expect(list.body.data.subscribers.map((x: any) => [x.email, x.position])).toEqual([
      ["ref@example.com", 1],
      ["kid2@example.com", 2],
      ["tail@example.com", 3],
    ]);
  });
  test("a referrer deleted while its referees sign up (concurrently, many times): every sign-up is 200, without credit once the delete came first", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const rounds = 25;
    const perRound = 8;
    for (let i = 0; i < rounds; i++) {
      const ref = await joined(wl, { email: `gone${i}@example.com` });
      // sign-ups spread over a few milliseconds around the delete: some read the referrer before it goes and write after
      const ups = Array.from({ length: perRound }, (_, k) =>
        Bun.sleep(k % 4).then(() => wl.signUp({ email: `orphan${i}-${k}@example.com`, metadata: { referred_by: ref.referral_code } })),
      );
      const del = Bun.sleep(1 + (i % 3)).then(() => wl.del(`gone${i}@example.com`));
      for (const up of await Promise.all(ups)) {
        expect(up.status, up.text).toBe(200);
        expect([up.body.is_new_sign_up, up.body.points]).toEqual([true, 50]);
      }
      expect((await del).status).toBe(200);
    }
    // the referees alone remain, each with its sign-up points, no credit left anywhere, ranked 1..n
    expect(await wl.total()).toBe(rounds * perRound);
    const list = await wl.list(`sort_by=position&sort_dir=asc&limit=100`);
    expect(list.body.data.total).toBe(rounds * perRound);
    for (const [n, x] of (list.body.data.subscribers as any[]).entries()) {
      expect([x.email.startsWith("orphan"), x.position, x.points, x.referral_count]).toEqual([true, n + 1, 50, 0]);
    }
  });
});

describe("referral fraud rules (API sign-ups with client_ip or fingerprint)", () => {
  test("a referee with the referrer's client_ip signs up (is_new_sign_up true) but the referrer is not credited", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com", metadata: { client_ip: "81.2.69.160" } });
    const r = await wl.signUp({ email: "self@example.com", metadata: { referred_by: ref.referral_code, client_ip: "81.2.69.160" } });
    expect(r.status).toBe(200);
    expect(r.body.is_new_sign_up).toBe(true);
    expect(r.body.points).toBe(50);
    const after = await wl.one("ref@example.com");
    expect([after.referral_count, after.points]).toEqual([0, 50]);
    expect(await wl.total()).toBe(2);
  });

  test("a referee with the referrer's fingerprint (different IP) is not credited; a different fingerprint and IP is", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com", metadata: { client_ip: "81.2.69.160", fingerprint: "fp-shared" } });
    const same = await wl.signUp({ email: "twin@example.com", metadata: { referred_by: ref.referral_code, client_ip: "8.8.4.4", fingerprint: "fp-shared" } });
    expect(same.status).toBe(200);
    expect(same.body.is_new_sign_up).toBe(true);
    expect((await wl.one("ref@example.com")).referral_count).toBe(0);
    await joined(wl, { email: "friend@example.com", metadata: { referred_by: ref.referral_code, client_ip: "8.8.8.8", fingerprint: "fp-other" } });
    const after = await wl.one("ref@example.com");
    expect([after.referral_count, after.points]).toEqual([1, 80]);
  });

  test("the 4th sign-up from one IP within 24 h is not credited while the first 3 are", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com", metadata: { client_ip: "81.2.69.160" } });
    for (let i = 1; i <= 3; i++) {
      await joined(wl, { email: `ip${i}@example.com`, metadata: { referred_by: ref.referral_code, client_ip: "9.9.9.9" } });
      const now = await wl.one("ref@example.com");
      expect([now.referral_count, now.points], `after sign-up ${i}`).toEqual([i, 50 + 30 * i]);
    }
    const fourth = await wl.signUp({ email: "ip4@example.com", metadata: { referred_by: ref.referral_code, client_ip: "9.9.9.9" } });
    expect(fourth.status).toBe(200);
    expect(fourth.body.is_new_sign_up).toBe(true);
    const after = await wl.one("ref@example.com");
    expect([after.referral_count, after.points]).toEqual([3, 140]);
  });

  test("with double opt-in, the IP rule judges a referee by the sign-ups before its own: later ones from the same IP do not take its credit away", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com", metadata: { client_ip: "81.2.69.160" } });
    await wl.settings({ double_opt_in: true });
    // the referee is the first from its IP; three more sign up from it before it confirms
    const first = `first-${uniq()}@example.com`;
    expect((await wl.signUp({ email: first, metadata: { referred_by: ref.referral_code, client_ip: "203.0.113.50" } })).status).toBe(200);
    for (let i = 2; i <= 4; i++) expect((await wl.signUp({ email: `later${i}@example.com`, metadata: { client_ip: "203.0.113.50" } })).status).toBe(200);
    const [{ confirm_token }] = await s.query<{ confirm_token: string }>(sql`SELECT confirm_token FROM subscribers WHERE email = ${first}`);
    expect((await fetch(`${s.url}/confirm/${confirm_token}`, { method: "POST", redirect: "manual" })).status).toBe(303);
    const after = await wl.one("ref@example.com");
    expect([after.referral_count, after.points]).toEqual([1, 80]);
  });

  test("without client_ip or fingerprint no fraud check applies: two referred API sign-ups from the same machine are both credited", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const ref = await joined(wl, { email: "ref@example.com" });
    await joined(wl, { email: "k1@example.com", metadata: { referred_by: ref.referral_code } });
    await joined(wl, { email: "k2@example.com", metadata: { referred_by: ref.referral_code } });
    const after = await wl.one("ref@example.com");
    expect([after.referral_count, after.points]).toEqual([2, 110]);
  });
});

describe("GET .../subscribers", () => {
  // carol 110 (2 referrals), dave 95 (PUT), alice 80 (1 referral), eve 50, bob 50; joined carol, alice, eve, bob, dave
  let wl: Awaited<ReturnType<typeof waitlist>>;
  let tagIds: Record<string, string>;
  beforeAll(async () => {
    wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const carol = await joined(wl, { email: "carol@example.com", name: "Carol Jones" });
    const alice = await joined(wl, { email: "alice@example.com", name: "Alice Smith", metadata: { referred_by: carol.referral_code } });
    await joined(wl, { email: "eve@example.com", name: "Eve", metadata: { referred_by: carol.referral_code } });
    await joined(wl, { email: "bob@example.com", name: "Bob", metadata: { referred_by: alice.referral_code } });
    await joined(wl, { email: "dave@example.com", name: "Dave" });
    expect((await wl.put("dave@example.com", { points: 95 })).status).toBe(200);
    tagIds = {};
    for (const name of ["VIP", "Beta"]) {
      const t = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name } });
      expect(t.status, t.text).toBe(201);
      tagIds[name] = t.body.data.tag.id;
    }
    for (const email of ["carol@example.com", "dave@example.com"]) {
      expect((await s.request("POST", `${wl.base}/subscribers/${enc(email)}/tags`, { key: wl.key, body: { tags: ["VIP"] } })).status).toBe(200);
    }
  });
  const emails = (r: Response) => r.body.data.subscribers.map((x: any) => x.email.split("@")[0]);

  test("defaults: page 1, limit 20, sorted by date descending, with exact total and pages", async () => {
    const r = await wl.list();
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(keysOf(r.body.data)).toEqual(["limit", "page", "pages", "subscribers", "total"]);
    expect([r.body.data.total, r.body.data.page, r.body.data.limit, r.body.data.pages]).toEqual([5, 1, 20, 1]);
    expect(emails(r)).toEqual(["dave", "bob", "eve", "alice", "carol"]);
    expect(keysOf(r.body.data.subscribers[0])).toEqual(SUBSCRIBER_KEYS);
    expect(emails(await wl.list("sort_by=date&sort_dir=asc"))).toEqual(["carol", "alice", "eve", "bob", "dave"]);
  });

  test("sort_by position asc and desc, points, email and referral_count", async () => {
    expect(emails(await wl.list("sort_by=position&sort_dir=asc"))).toEqual(["carol", "dave", "alice", "eve", "bob"]);
    expect(emails(await wl.list("sort_by=position&sort_dir=desc"))).toEqual(["bob", "eve", "alice", "dave", "carol"]);
    expect((await wl.list("sort_by=position")).body.data.subscribers.map((x: any) => x.position)).toEqual([5, 4, 3, 2, 1]);
    const byPoints = await wl.list("sort_by=points&sort_dir=desc");
    expect(byPoints.body.data.subscribers.map((x: any) => x.points)).toEqual([110, 95, 80, 50, 50]);
    expect(emails(byPoints).slice(0, 3)).toEqual(["carol", "dave", "alice"]);
    expect((await wl.list("sort_by=points&sort_dir=asc")).body.data.subscribers.map((x: any) => x.points)).toEqual([50, 50, 80, 95, 110]);
    expect(emails(await wl.list("sort_by=email&sort_dir=asc"))).toEqual(["alice", "bob", "carol", "dave", "eve"]);
    expect(emails(await wl.list("sort_by=email&sort_dir=desc"))).toEqual(["eve", "dave", "carol", "bob", "alice"]);
    const byReferrals = await wl.list("sort_by=referral_count&sort_dir=desc");
    expect(byReferrals.body.data.subscribers.map((x: any) => x.referral_count)).toEqual([2, 1, 0, 0, 0]);
    expect(emails(byReferrals).slice(0, 2)).toEqual(["carol", "alice"]);
    expect((await wl.list("sort_by=referral_count&sort_dir=asc")).body.data.subscribers.map((x: any) => x.referral_count)).toEqual([0, 0, 0, 1, 2]);
  });

  test("pages split the list exactly; a page beyond the end is an empty array with the same total and pages", async () => {
    const p1 = await wl.list("limit=2&sort_by=position&sort_dir=asc");
    expect([p1.body.data.total, p1.body.data.page, p1.body.data.limit, p1.body.data.pages]).toEqual([5, 1, 2, 3]);
    expect(emails(p1)).toEqual(["carol", "dave"]);
    expect(emails(await wl.list("limit=2&page=2&sort_by=position&sort_dir=asc"))).toEqual(["alice", "eve"]);
    expect(emails(await wl.list("limit=2&page=3&sort_by=position&sort_dir=asc"))).toEqual(["bob"]);
    expect(emails(await wl.list("limit=2&page=2"))).toEqual(["eve", "alice"]);
    for (const q of ["limit=2&page=4", "limit=2&page=4&sort_by=position", "page=99&sort_by=email"]) {
      const r = await wl.list(q);
      expect(r.status, q).toBe(200);
      expect(r.body.data.subscribers, q).toEqual([]);
      expect(r.body.data.total, q).toBe(5);
    }
    const beyond = await wl.list("limit=2&page=4");
    expect([beyond.body.data.page, beyond.body.data.limit, beyond.body.data.pages]).toEqual([4, 2, 3]);
    expect((await wl.list("limit=100")).body.data.pages).toBe(1);
    expect((await wl.list("limit=1")).body.data.pages).toBe(5);
  });

  test("invalid page, limit, sort_by or sort_dir is 400 {statusCode, error: Bad Request, message} naming the parameter", async () => {
    const cases: [string, string][] = [
      ["page=0", "page"],
      ["page=abc", "page"],
      ["page=1.5", "page"],
      ["page=-1", "page"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["sort_by=foo", "sort_by"],
      ["sort_dir=up", "sort_dir"],
    ];
    for (const [q, field] of cases) {
      const r = await wl.list(q);
      expect(r.status, q).toBe(400);
      expect(keysOf(r.body), q).toEqual(["error", "message", "statusCode"]);
      expect(r.body, q).toEqual(badRequest(field));
      expect(r.text, q).not.toMatch(/typebox|elysia|stack|Expected union/i);
    }
  });

  test("tag filters by name (any case) or id, and total and pages count only tagged subscribers", async () => {
    for (const tag of ["vip", "VIP", "Vip", tagIds.VIP]) {
      const r = await wl.list(`tag=${enc(tag)}&sort_by=email&sort_dir=asc`);
      expect(r.status, tag).toBe(200);
      expect(emails(r), tag).toEqual(["carol", "dave"]);
      expect([r.body.data.total, r.body.data.pages], tag).toEqual([2, 1]);
    }
    const paged = await wl.list("tag=vip&limit=1&sort_by=position&sort_dir=asc");
    expect([paged.body.data.total, paged.body.data.pages]).toEqual([2, 2]);
    expect(emails(paged)).toEqual(["carol"]);
    const none = await wl.list(`tag=${tagIds.Beta}`);
    expect([none.body.data.total, none.body.data.pages, none.body.data.subscribers.length]).toEqual([0, 0, 0]);
  });

  test("an unknown tag is 400 whose message lists the waitlist's tag names", async () => {
    const r = await wl.list("tag=nope");
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.any(String) });
    expect(r.body.message).toContain("VIP");
    expect(r.body.message).toContain("Beta");
  });

  test("q matches part of the email or the name, case-insensitively", async () => {
    const byEmail = await wl.list("q=ALI");
    expect(emails(byEmail)).toEqual(["alice"]);
    expect([byEmail.body.data.total, byEmail.body.data.pages]).toEqual([1, 1]);
    const byName = await wl.list("q=jOnEs");
    expect(emails(byName)).toEqual(["carol"]);
    expect((await wl.list("q=EXAMPLE.COM")).body.data.total).toBe(5);
    expect((await wl.list("q=zzz")).body.data).toMatchObject({ total: 0, subscribers: [] });
  });
});

describe("GET, PUT, DELETE .../subscribers/{idOrEmail}", () => {
  test("GET returns the full Subscriber object of a confirmed subscriber, by id or email", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const t0 = Date.now();
    const r = await joined(wl, { email: "full@example.com", name: " Full Name ", phone: "+44 20 7946 0000", metadata: { client_ip: "81.2.69.160", plan: "pro" } });
    const byEmail = await wl.get("full@example.com");
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.success).toBe(true);
    const sub = byEmail.body.data.subscriber;
    expect(keysOf(sub)).toEqual(SUBSCRIBER_KEYS);
    expect(sub).toEqual({
      id: expect.any(String),
      email: "full@example.com",
      status: "waiting",
      deliverability: "unconfirmed",
      name: "Full Name",
      phone: "+44 20 7946 0000",
      position: 1,
      inflated_position: 1,
      points: 50,
      referral_code: r.referral_code,
      referred_by: null,
      referral_count: 0,
      sign_up_token: r.sign_up_token,
      thank_you_url: `${BASE_URL}/t/${r.sign_up_token}`,
      metadata: { plan: "pro" },
      tags: [],
      referring_domain: null,
      ip_address: "81.2.69.160",
      country: "GB",
      city: expect.any(String),
      timezone: "Europe/London",
      joined_with: "api",
      joined_at: expect.any(Number),
      unsubscribed_at: null,
      email_status: "ok",
      answers: {},
      utm: { source: null, medium: null, campaign: null, term: null, content: null },
      referrer_host: null,
    });
    expect(sub.joined_at).toBeGreaterThanOrEqual(t0 - 1_000);
    expect(sub.joined_at).toBeLessThanOrEqual(Date.now() + 1_000);
    const byId = await wl.get(sub.id);
    expect(byId.body.data.subscriber).toEqual(sub);
  });

  test("an unknown id or email is 404 {statusCode, error: Not Found, message} on GET, PUT and DELETE", async () => {
    const wl = await waitlist();
    for (const ref of ["nosuchid123", "nobody@example.com"]) {
      for (const r of [await wl.get(ref), await wl.put(ref, { name: "x" }), await wl.del(ref)]) {
        expect(r.status, ref).toBe(404);
        expect(keysOf(r.body)).toEqual(["error", "message", "statusCode"]);
        expect(r.body).toEqual(notFound);
      }
    }
  });

  test("a subscriber of another waitlist of the same account is 404 on GET, PUT and DELETE, and is left untouched", async () => {
    const mine = await waitlist();
    const other = await waitlist();
    await joined(other, { email: "theirs@example.com", name: "Theirs" });
    const theirs = await other.one("theirs@example.com");
    for (const ref of [theirs.id, "theirs@example.com"]) {
      expect((await mine.get(ref)).body).toEqual(notFound);
      expect((await mine.put(ref, { name: "Hijacked", points: 999 })).status).toBe(404);
      expect((await mine.del(ref)).status).toBe(404);
    }
    expect(await other.one("theirs@example.com")).toEqual(theirs);
    expect(await other.total()).toBe(1);
  });

  test("PUT with no field is 400 {statusCode, error, message}", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "p@example.com" });
    const r = await wl.put("p@example.com", {});
    expect(r.status).toBe(400);
    expect(keysOf(r.body)).toEqual(["error", "message", "statusCode"]);
    expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.any(String) });
  });

  test("PUT merges metadata (keys added or overwritten, others kept, null removes) and answers data.subscriber with exactly id, email, name, phone, points, sign_up_token, thank_you_url, updated_at, metadata", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    const r = await joined(wl, { email: "m@example.com", name: "Old", phone: "123", metadata: { a: 1, b: "x", c: true } });
    const t0 = Date.now();
    const up = await wl.put("M@Example.com", { name: "New", metadata: { b: "y", d: [1, 2], c: null } });
    expect(up.status).toBe(200);
    expect(up.body.success).toBe(true);
    expect(typeof up.body.message).toBe("string");
    const sub = up.body.data.subscriber;
    expect(keysOf(sub)).toEqual(UPDATE_KEYS);
    expect(sub).toEqual({
      id: expect.any(String),
      email: "m@example.com",
      name: "New",
      phone: "123",
      points: 50,
      sign_up_token: r.sign_up_token,
      thank_you_url: `${BASE_URL}/t/${r.sign_up_token}`,
      updated_at: expect.any(Number),
      metadata: { a: 1, b: "y", d: [1, 2] },
    });
    expect(sub.updated_at).toBeGreaterThanOrEqual(t0 - 1_000);
    const got = await wl.one("m@example.com");
    expect(got.metadata).toEqual({ a: 1, b: "y", d: [1, 2] });
    expect([got.name, got.phone, got.points]).toEqual(["New", "123", 50]);
  });

  test("DELETE answers 200 {success: true, message}; the subscriber is then 404", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "gone@example.com" });
    const d = await wl.del("gone@example.com");
    expect(d.status).toBe(200);
    expect(d.body).toEqual({ success: true, message: expect.any(String) });
    expect((await wl.get("gone@example.com")).body).toEqual(notFound);
    expect((await wl.del("gone@example.com")).status).toBe(404);
    expect(await wl.total()).toBe(0);
  });
});

describe("tags", () => {
  test("POST tags is 201 {id, name, color}; an invalid color is 400; a duplicate name in another case is 409; GET lists them with subscriber counts", async () => {
    const wl = await waitlist();
    const created = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "VIP", color: "purple" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ success: true, data: { tag: { id: expect.any(String), name: "VIP", color: "purple" } } });
    const bad = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "Bad", color: "magenta" } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(badRequest("color"));
    const dup = await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: "vip", color: "red" } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ statusCode: 409, error: "Conflict", message: expect.any(String) });
    await joined(wl, { email: "t@example.com" });
    expect((await s.request("POST", `${wl.base}/subscribers/t%40example.com/tags`, { key: wl.key, body: { tags: ["VIP"] } })).status).toBe(200);
    const list = await s.request("GET", `${wl.base}/tags`, { key: wl.key });
    expect(list.status).toBe(200);
    expect(list.body.data.tags).toEqual([{ id: created.body.data.tag.id, name: "VIP", color: "purple", subscribers: 1 }]);
  });

  test("tagging by name (any case) or id sets subscriber.tags [{id, name, color}]; unknown names become gray tags; untagging and deleting a tag remove it", async () => {
    const wl = await waitlist();
    const post = (body: unknown) => s.request("POST", `${wl.base}/tags`, { key: wl.key, body });
    const vip = (await post({ name: "VIP", color: "purple" })).body.data.tag;
    const beta = (await post({ name: "Beta", color: "green" })).body.data.tag;
    await joined(wl, { email: "t@example.com" });
    const tagged = await s.request("POST", `${wl.base}/subscribers/T%40Example.com/tags`, { key: wl.key, body: { tags: ["vip", beta.id, "Early Adopter"] } });
    expect(tagged.status).toBe(200);
    const tags = tagged.body.data.subscriber.tags as { id: string; name: string; color: string }[];
    const early = tags.find((t) => t.name === "Early Adopter")!;
    expect(early).toEqual({ id: expect.any(String), name: "Early Adopter", color: "gray" });
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect([...tags].sort(byName)).toEqual([vip, beta, early].sort(byName));
    expect((await wl.one("t@example.com")).tags.sort(byName)).toEqual([vip, beta, early].sort(byName));

    const untag = await s.request("DELETE", `${wl.base}/subscribers/t%40example.com/tags/VIP`, { key: wl.key });
    expect(untag.status).toBe(200);
    expect(untag.body.data.subscriber.tags.sort(byName)).toEqual([beta, early].sort(byName));

    const delTag = await s.request("DELETE", `${wl.base}/tags/${beta.id}`, { key: wl.key });
    expect(delTag.status).toBe(200);
    expect((await wl.one("t@example.com")).tags).toEqual([early]);
    const list = await s.request("GET", `${wl.base}/tags`, { key: wl.key });
    expect(list.body.data.tags.map((t: any) => [t.name, t.subscribers]).sort()).toEqual([["Early Adopter", 1], ["VIP", 0]]);
  });

  test("a tag list whose last item is bad changes nothing: a blank name is 400 naming it, going over the 100-tag cap is 409 (issue 44)", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "list@example.com" });
    const tagNames = async () => (await s.request("GET", `${wl.base}/tags`, { key: wl.key })).body.data.tags.map((t: any) => t.name).sort();
    const tag = (tags: string[]) => s.request("POST", `${wl.base}/subscribers/list%40example.com/tags`, { key: wl.key, body: { tags } });

    const blank = await tag(["a", "b", "  "]);
    expect(blank.status).toBe(400);
    expect(blank.body.message).toContain("tags.2");
    expect(await tagNames()).toEqual([]);
    expect((await wl.one("list@example.com")).tags).toEqual([]);

    for (let i = 0; i < 98; i++) expect((await s.request("POST", `${wl.base}/tags`, { key: wl.key, body: { name: `t${i}` } })).status).toBe(201);
    const over = await tag(["t0", "new one", "new two", "new three"]);
    expect(over.status).toBe(409);
    expect(over.body.message).toContain("at most 100 tags");
    expect((await tagNames()).length).toBe(98);
    expect((await wl.one("list@example.com")).tags).toEqual([]);
    // at the cap exactly, it goes through
    expect((await tag(["t0", "new one", "new two"])).status).toBe(200);
    expect((await tagNames()).length).toBe(100);
  });
});

describe("CSV export", () => {
  test("GET .../subscribers/export is text/csv: a header row, then one row per subscriber in position order", async () => {
    const wl = await waitlist({ body: { referral_rewards: REFERRALS } });
    await joined(wl, { email: "first@example.com", name: 'Smith, "Jr"' });
    await joined(wl, { email: "second@example.com", name: "Line\nBreak" });
    await joined(wl, { email: "third@example.com" });
    expect((await wl.put("third@example.com", { points: 999 })).status).toBe(200);
    const r = await s.request("GET", `${wl.base}/subscribers/export`, { key: wl.key });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/csv");
    const [header, ...rows] = parseCsv(r.text);
    const col = (name: string) => {
      const i = header.indexOf(name);
      expect(i, `column ${name}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(rows.length).toBe(3);
    expect(rows.every((row) => row.length === header.length)).toBe(true);
    expect(rows.map((row) => row[col("email")])).toEqual(["third@example.com", "first@example.com", "second@example.com"]);
    expect(rows.map((row) => row[col("position")])).toEqual(["1", "2", "3"]);
    expect(rows.map((row) => row[col("name")])).toEqual(["", 'Smith, "Jr"', "Line\nBreak"]);
    expect(rows.map((row) => row[col("unsubscribed_at")])).toEqual(["", "", ""]);
  });

  test("a list longer than a page comes out whole and in line order, ties kept in sign-up order across pages (issue 47)", async () => {
    const wl = await waitlist();
    // pages are sized by time (100 rows first, then as many as take ~1 ms): 260 rows cross several page ends
    const emails = Array.from({ length: 260 }, (_, i) => `page-${String(i).padStart(3, "0")}@example.com`);
    const r0 = await s.request("POST", `${wl.base}/subscribers/bulk`, { key: wl.key, body: { subscribers: emails.map((email) => ({ email })) } });
    expect(r0.status).toBe(200);
    // a second group of equal points, ahead of the rest
    for (const email of [emails[250], emails[10], emails[130]]) expect((await wl.put(email, { points: 50 })).status).toBe(200);
    const r = await s.request("GET", `${wl.base}/subscribers/export?format=jsonl`, { key: wl.key });
    expect(r.status).toBe(200);
    const lines = r.text.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((l) => l.position)).toEqual(Array.from({ length: 260 }, (_, i) => i + 1));
    const expected = [emails[10], emails[130], emails[250], ...emails.filter((_, i) => ![10, 130, 250].includes(i))];
    expect(lines.map((l) => l.email)).toEqual(expected);
  });

  test("an unsubscribed subscriber's row carries when, as an ISO time (issue 16)", async () => {
    const wl = await waitlist();
    const { sign_up_token: token } = await joined(wl, { email: "quiet@example.com" });
    const before = Date.now();
    expect((await s.request("POST", `/u/${token}`, { raw: "List-Unsubscribe=One-Click", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(200);
    const [header, row] = parseCsv((await s.request("GET", `${wl.base}/subscribers/export`, { key: wl.key })).text);
    const at = Date.parse(row[header.indexOf("unsubscribed_at")]);
    expect(at).toBeGreaterThanOrEqual(before - 1_000);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  test("a cell a spreadsheet would run as a formula is exported with a leading apostrophe", async () => {
    const wl = await waitlist();
    await joined(wl, { email: "evil@example.com", name: '=HYPERLINK("x")' });
    const r = await s.request("GET", `${wl.base}/subscribers/export`, { key: wl.key });
    expect(r.status).toBe(200);
    const [header, row] = parseCsv(r.text);
    expect(row[header.indexOf("name")]).toBe(`'=HYPERLINK("x")`);
  });

  test("export on a launch-plan account is 403", async () => {
    const { key } = await s.account("launch");
    const wl = await waitlist({ key });
    const r = await s.request("GET", `${wl.base}/subscribers/export`, { key });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(forbidden);
  });
});

describe("plan gates and rate-limit buckets", () => {
  test("a free-plan account key can sign up (X-RateLimit-Limit 10) but list, get, put, delete, tags and export are 403 {statusCode, error: Forbidden, message}", async () => {
    const { key } = await s.account("free");
    const wl = await waitlist({ key });
    const r = await wl.signUp({ email: "free@example.com" });
    expect(r.status).toBe(200);
    expect(r.body.is_new_sign_up).toBe(true);
    expect(r.headers.get("x-ratelimit-limit")).toBe("10");
    const e = enc("free@example.com");
    const gated: [string, string, unknown?][] = [
      ["GET", `${wl.base}/subscribers`],
      ["GET", `${wl.base}/subscribers/${e}`],
      ["PUT", `${wl.base}/subscribers/${e}`, { name: "x" }],
      ["DELETE", `${wl.base}/subscribers/${e}`],
      ["GET", `${wl.base}/tags`],
      ["POST", `${wl.base}/tags`, { name: "VIP" }],
      ["POST", `${wl.base}/subscribers/${e}/tags`, { tags: ["VIP"] }],
      ["GET", `${wl.base}/subscribers/export`],
    ];
    for (const [method, path, body] of gated) {
      const g = await s.request(method, path, { key, body });
      expect(g.status, `${method} ${path}`).toBe(403);
      expect(keysOf(g.body)).toEqual(["error", "message", "statusCode"]);
      expect(g.body).toEqual(forbidden);
    }
    expect(await wl.total()).toBe(1);
  });

  test("a business key shows X-RateLimit-Limit 120 on sign-up and list", async () => {
    const wl = await waitlist();
    const r = await wl.signUp({ email: "b@example.com" });
    expect(r.headers.get("x-ratelimit-limit")).toBe("120");
    expect((await wl.list()).headers.get("x-ratelimit-limit")).toBe("120");
  });

  test("a per-waitlist key on a growth account works for sign-up and list", async () => {
    const { key } = await s.account("growth");
    const wl = await waitlist({ key });
    const made = await s.request("POST", `${wl.base}/api-key`, { key });
    expect(made.status).toBe(201);
    const wkey = made.body.data.api_key.api_key as string;
    expect(wkey).toStartWith("wl_");
    expect(wkey).not.toStartWith("wl_acct_");
    const r = await s.request("POST", `${wl.base}/sign-up`, { key: wkey, body: { email: "w@example.com" } });
    expect(r.status).toBe(200);
    expect(r.body.is_new_sign_up).toBe(true);
    expect(r.headers.get("x-ratelimit-limit")).toBe("60");
    const list = await s.request("GET", `${wl.base}/subscribers`, { key: wkey });
    expect(list.status).toBe(200);
    expect(list.body.data.subscribers.map((x: any) => x.email)).toEqual(["w@example.com"]);
  });

  test("the 11th sign-up in a minute on a free key is 429 {statusCode, message, data: {retry_after}} and creates nothing", async () => {
    // fixed one-minute windows: if the requests straddled two windows, run once more with a fresh account
    await inOneWindow(async (track) => {
      const acct = await limited.account("free");
      const wl = await waitlist({ key: acct.key, server: limited });
      for (let i = 1; i <= 10; i++) {
        const r = track(await wl.signUp({ email: `burst${i}@example.com` }));
        expect(r.status, `sign-up #${i}`).toBe(200);
        expect(r.headers.get("x-ratelimit-limit")).toBe("10");
        expect(r.headers.get("x-ratelimit-remaining")).toBe(String(10 - i));
      }
      const refused = track(await wl.signUp({ email: "burst11@example.com" }));
      expect(refused.status).toBe(429);
      expect(keysOf(refused.body)).toEqual(["data", "message", "statusCode"]);
      expect(refused.body).toEqual({ statusCode: 429, message: expect.any(String), data: { retry_after: expect.any(Number) } });
      expect(Number.isInteger(refused.body.data.retry_after)).toBe(true);
      expect(refused.body.data.retry_after).toBeGreaterThanOrEqual(1);
      expect(refused.body.data.retry_after).toBeLessThanOrEqual(60);
      expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
      // stats has its own bucket; then lift the plan to read the list
      expect(await wl.total()).toBe(10);
      const lifted = await limited.cli("account", "set-plan", "--username", acct.username, "--plan", "business", "--json");
      expect(lifted.code, lifted.stderr).toBe(0);
      expect((await wl.get("burst11@example.com")).status).toBe(404);
      expect((await wl.list()).body.data.total).toBe(10);
    });
  });
});
