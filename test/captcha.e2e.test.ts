// The ALTCHA captcha of the public form (issue 16): the setting, the challenge, and a solution accepted
// once (replays refused, on one instance and across two on one database). Solutions are real: this
// process solves each challenge with altcha-lib, as the widget does in a browser.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { sql } from "drizzle-orm";
import { openDatabase } from "../src/db/open";
import { createChallenge, solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
let twin: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
  // a second instance on the same database file (DESIGN §6)
  twin = await startServer({ env: { RATE_LIMITS: "off" }, dbUrl: s.dbUrl });
});
afterAll(async () => {
  await twin?.stop();
  await s?.stop();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const own = (server: TestServer) => server.url.replace("127.0.0.1", "localhost");
const json = (server: TestServer) => ({ "content-type": "application/json", accept: "application/json", origin: own(server) });

async function waitlist(settings: Record<string, unknown> = { captcha: "altcha" }) {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Captcha ${uniq()}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (Object.keys(settings).length) expect((await s.request("PATCH", `${path}/settings`, { key, body: settings })).status).toBe(200);
  const total = async () => (await s.request("GET", `${path}/subscribers`, { key })).body.data.total as number;
  return { key, w, path, total };
}

/** What the widget sends: base64 of {challenge, solution}, solved here with altcha-lib. */
async function solve(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  expect(solution).not.toBeNull();
  return btoa(JSON.stringify({ challenge: { parameters: challenge.parameters, signature: challenge.signature }, solution }));
}

async function solved(server: TestServer, waitlistKey: string): Promise<string> {
  const r = await server.request("GET", `/s/${waitlistKey}/challenge`);
  expect(r.status).toBe(200);
  return solve(r.body);
}

function post(server: TestServer, waitlistKey: string, fields: Record<string, unknown>) {
  return fetch(`${server.url}/s/${waitlistKey}`, { method: "POST", body: JSON.stringify(fields), headers: json(server), redirect: "manual" });
}

describe("the setting", () => {
  test('captcha is "off" by default, PATCH sets "altcha", and any other value is 400 naming the field and changes nothing', async () => {
    const { key, path } = await waitlist({});
    expect((await s.request("GET", `${path}/settings`, { key })).body.data.settings.captcha).toBe("off");
    const on = await s.request("PATCH", `${path}/settings`, { key, body: { captcha: "altcha" } });
    expect(on.status).toBe(200);
    expect(on.body.data.settings.captcha).toBe("altcha");
    for (const bad of ["recaptcha", "", true, null]) {
      const r = await s.request("PATCH", `${path}/settings`, { key, body: { captcha: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body).toEqual({ statusCode: 400, error: "Bad Request", message: "captcha must be one of: off, altcha" });
    }
    expect((await s.request("GET", `${path}/settings`, { key })).body.data.settings.captcha).toBe("altcha");
  });
});

describe("GET /s/{waitlistKey}/challenge", () => {
  test("answers an ALTCHA v2 challenge that expires in 10 minutes, never cached; an unknown key is 404", async () => {
    const { w } = await waitlist();
    const t0 = Date.now();
    const r = await s.request("GET", `/s/${w.key}/challenge`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toEqual({
      parameters: expect.objectContaining({ algorithm: "PBKDF2/SHA-256", nonce: expect.any(String), salt: expect.any(String), keyPrefix: expect.any(String), data: { waitlist: w.key } }),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(Math.abs(r.body.parameters.expiresAt - Math.floor((t0 + 600_000) / 1000))).toBeLessThanOrEqual(2);
    const unknown = await s.request("GET", `/s/nope${uniq()}/challenge`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ statusCode: 404, error: "Not Found", message: "This waitlist does not exist" });
  });
});

describe('POST /s/{waitlistKey} with captcha "altcha"', () => {
  test("without a solved challenge (missing, garbage, or a tampered solution) it is 400 naming altcha and stores nothing", async () => {
    const { w, total } = await waitlist();
    const good = JSON.parse(atob(await solved(s, w.key)));
    // the derived key is the proof of work: one changed digit and it proves nothing
    const key = good.solution.derivedKey as string;
    const tampered = btoa(JSON.stringify({ ...good, solution: { ...good.solution, derivedKey: key.slice(0, -1) + (key.endsWith("0") ? "1" : "0") } }));
    const cases: [string, unknown, RegExp][] = [
      ["missing", undefined, /^altcha is required/],
      ["blank", "  ", /^altcha is required/],
      ["not base64 JSON", "not-a-payload", /^altcha is not a valid captcha payload$/],
      ["a number", 42, /^altcha is required/],
      ["tampered", tampered, /^altcha is not a valid captcha solution$/],
    ];
    for (const [what, altcha, message] of cases) {
      const r = await post(s, w.key, { email: `bot-${uniq()}@example.com`, ...(altcha === undefined ? {} : { altcha }) });
      expect(r.status, what).toBe(400);
      const body = (await r.json()) as any;
      expect(body, what).toEqual({ statusCode: 400, message: expect.stringMatching(message) });
    }
    // a browser gets a readable page
    const page = await fetch(`${s.url}/s/${w.key}`, {
      method: "POST",
      body: new URLSearchParams({ email: `page-${uniq()}@example.com` }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: own(s), accept: "text/html" },
      redirect: "manual",
    });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain("altcha is required");
    expect(await total()).toBe(0);
  });

  test("a solved challenge signs up once; its replay (another email, or the same) is 400 and stores nothing", async () => {
    const { key, w, path, total } = await waitlist();
    const altcha = await solved(s, w.key);
    const first = await post(s, w.key, { email: `first-${uniq()}@example.com`, altcha });
    expect(first.status).toBe(200);
    expect(((await first.json()) as any).is_new_sign_up).toBe(true);
    for (const email of [`replay-${uniq()}@example.com`, `replay2-${uniq()}@example.com`]) {
      const replay = await post(s, w.key, { email, altcha });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toEqual({ statusCode: 400, message: "altcha was already used: solve a new captcha" });
    }
    expect(await total()).toBe(1);
    // the payload is never kept as metadata
    const list = (await s.request("GET", `${path}/subscribers`, { key })).body.data.subscribers;
    expect(list[0].metadata).toEqual({});
  });

  test("a replay on a second instance of the same database is refused; of two uses at once, on two instances, exactly one wins", async () => {
    const { w, total } = await waitlist();
    const altcha = await solved(s, w.key);
    expect((await post(s, w.key, { email: `one-${uniq()}@example.com`, altcha })).status).toBe(200);
    const onTwin = await post(twin, w.key, { email: `two-${uniq()}@example.com`, altcha });
    expect(onTwin.status).toBe(400);
    expect(((await onTwin.json()) as any).message).toContain("already used");

    // solved on the twin (any instance verifies another's challenge), raced on both
    const raced = await solved(twin, w.key);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => post(i % 2 ? twin : s, w.key, { email: `race${i}-${uniq()}@example.com`, altcha: raced }).then((r) => r.status)),
    );
    expect(answers.filter((st) => st === 200)).toHaveLength(1);
    expect(answers.filter((st) => st === 400)).toHaveLength(5);
    expect(await total()).toBe(2);
  });

  test("an expired challenge (issued more than 10 minutes ago) is 400 naming altcha", async () => {
    const { w, total } = await waitlist();
    await solved(s, w.key); // the server has made its secret by now
    // a challenge as the server would have issued it 11 minutes ago: same secret (read from the database), expired
    const db = await openDatabase({ url: s.dbUrl });
    const [{ value: secret }] = await db.rows<{ value: string }>(sql`SELECT value FROM meta WHERE key = 'altcha_hmac_secret'`);
    await db.close();
    const old = await createChallenge({
      algorithm: "PBKDF2/SHA-256",
      cost: 1_000,
      counter: 2_000,
      deriveKey,
      data: { waitlist: w.key },
      expiresAt: Math.floor((Date.now() - 60_000) / 1000),
      hmacSignatureSecret: secret,
      hmacKeySignatureSecret: createHmac("sha256", secret).update("altcha derived-key secret").digest("hex"),
    });
    const r = await post(s, w.key, { email: `late-${uniq()}@example.com`, altcha: await solve(old) });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({ statusCode: 400, message: "altcha has expired: solve a new captcha" });
    expect(await total()).toBe(0);
  });

  test("a solution for another waitlist's form is refused", async () => {
    const a = await waitlist();
    const b = await waitlist();
    const r = await post(s, b.w.key, { email: `cross-${uniq()}@example.com`, altcha: await solved(s, a.w.key) });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).message).toBe("altcha is not a valid captcha solution");
    expect(await b.total()).toBe(0);
  });

  test("a post refused for its email gives the solution back: corrected, the same solution then works once", async () => {
    const { w, total } = await waitlist();
    const altcha = await solved(s, w.key);
    const bad = await post(s, w.key, { email: "not-an-email", altcha });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).message).toContain("email");
    expect((await post(s, w.key, { email: `fixed-${uniq()}@example.com`, altcha })).status).toBe(200);
    expect((await post(s, w.key, { email: `again-${uniq()}@example.com`, altcha })).status).toBe(400);
    expect(await total()).toBe(1);
  });

  test("a filled honeypot is still a silent fake success (no captcha error tells the bot anything)", async () => {
    const { w, total } = await waitlist();
    const r = await post(s, w.key, { email: `hp-${uniq()}@example.com`, website: "http://spam.example" });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).success).toBe(true);
    expect(await total()).toBe(0);
  });
});

describe('"send it again" with captcha "altcha"', () => {
  test("needs a solved challenge too (400 naming altcha without one), and accepts it once", async () => {
    const { w } = await waitlist({ captcha: "altcha", double_opt_in: true });
    const resend = (fields: Record<string, unknown>) =>
      fetch(`${s.url}/pending/${w.key}/resend`, { method: "POST", body: JSON.stringify(fields), headers: json(s) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const email = `again-${uniq()}@example.com`;
    expect(await resend({ email })).toEqual({ status: 400, body: { statusCode: 400, message: expect.stringMatching(/^altcha is required/) } });
    const altcha = await solved(s, w.key);
    expect(await resend({ email, altcha })).toEqual({ status: 200, body: { success: true, message: expect.any(String) } });
    expect((await resend({ email, altcha })).body.message).toBe("altcha was already used: solve a new captcha");
  });
});

describe('captcha "off"', () => {
  test("no altcha is needed, and an altcha field sent anyway is not kept as metadata", async () => {
    const { key, w, path } = await waitlist({});
    const email = `off-${uniq()}@example.com`;
    expect((await post(s, w.key, { email, altcha: "whatever", plan: "pro" })).status).toBe(200);
    const sub = (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data.subscriber;
    expect(sub.metadata).toEqual({ plan: "pro" });
  });
});

describe("pages know the setting", () => {
  test("the hosted page and the confirm-pending page carry the widget (served by this server) only while captcha is altcha", async () => {
    const { key } = await s.account();
    const created = await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Pages ${uniq()}`, landing_page: { headline: "Hello" } } });
    const w = created.body.data.waitlist;
    const path = `/api/v1/waitlist/${w.key}`;
    expect((await s.request("POST", `${path}/landing-page/publish`, { key })).status).toBe(200);
    const widget = `<altcha-widget challenge="/s/${w.key}/challenge" name="altcha"`;
    expect((await s.request("GET", `/p/${w.slug}`)).text).not.toContain("<altcha-widget");
    expect((await s.request("GET", `/pending/${w.key}`)).text).not.toContain("<altcha-widget");
    expect((await s.request("PATCH", `${path}/settings`, { key, body: { captcha: "altcha" } })).status).toBe(200);
    const hosted = await s.request("GET", `/p/${w.slug}`);
    expect(hosted.text).toContain(widget);
    expect(hosted.text).toContain('<script type="module" src="/assets/altcha/captcha.js">');
    // the page's CSP is unchanged: scripts, styles and the worker are all same-origin
    expect(hosted.headers.get("content-security-policy")).toContain("script-src 'self';");
    const pending = await s.request("GET", `/pending/${w.key}`);
    expect(pending.text).toContain(widget);
    expect(pending.text).toContain(`action="/pending/${w.key}/resend"`);
    for (const [file, type] of [
      ["captcha.js", "text/javascript"],
      ["altcha.js", "text/javascript"],
      ["pbkdf2.js", "text/javascript"],
      ["altcha.css", "text/css"],
    ]) {
      const asset = await s.request("GET", `/assets/altcha/${file}`);
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get("content-type"), file).toContain(type);
    }
    expect((await s.request("GET", "/assets/altcha/nope.js")).status).toBe(404);
  });
});
