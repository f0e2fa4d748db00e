// Issue 48 items 1-3 over HTTP, on either engine: users made by the CLI and invited by an owner (single-use links,
// emailed for real), passwords (length, the common list, Argon2id), sessions in a cookie with a CSRF token, roles
// enforced on the server with a 403 naming the role, sessions listed and revoked, failed sign-ins throttled, TOTP
// with recovery codes, password reset; every change recorded with its user.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import * as OTPAuth from "otpauth";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";

let s: TestServer;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  s = await startServer({ env: { RATE_LIMITS: "off", SMTP_URL: smtp.url, MAIL_FROM: "Team <team@example.com>" } });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
const PASSWORD = "correct horse battery staple";

/** A browser's session: its cookie and CSRF token. */
interface Browser {
  cookie: string;
  csrf: string;
  user: any;
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);

async function acceptLink(url: string, password = PASSWORD, name?: string): Promise<Browser> {
  const r = await s.request("POST", "/api/v1/session/password", { body: { token: tokenOf(url), password, ...(name ? { name } : {}) } });
  expect(r.status).toBe(200);
  return fromSignIn(r);
}

function fromSignIn(r: { headers: Headers; body: any }): Browser {
  const set = r.headers.get("set-cookie")!;
  return { cookie: set.split(";")[0]!, csrf: r.body.data.csrf_token, user: r.body.data.user };
}

/** A request as the dashboard sends it: the cookie, and the CSRF token on a change. */
const as = (b: Browser, method: string, path: string, body?: unknown, csrf = true) =>
  s.request(method, path, { body, headers: { cookie: b.cookie, ...(csrf && method !== "GET" ? { "x-csrf-token": b.csrf } : {}) } });

/** An account, a waitlist, and its owner signed in (made with the CLI, as an operator does). */
async function team() {
  const a = await s.account("business");
  const w = (await s.request("POST", "/api/v1/waitlists", { key: a.key, body: { name: `Team ${uniq()}` } })).body.data.waitlist;
  const email = `owner-${uniq()}@example.com`;
  const made = await s.cli("user", "create", "--username", a.username, "--email", email, "--role", "owner", "--json");
  expect(made.code).toBe(0);
  const owner = await acceptLink(made.json.sign_in_url, PASSWORD, "Olivia Owner");
  return { a, w, email, owner };
}

async function invite(owner: Browser, role: string) {
  const email = `${role}-${uniq()}@example.com`;
  const r = await as(owner, "POST", "/api/v1/account/users", { email, role });
  expect(r.status).toBe(201);
  // the invitation is emailed for real, with the same link
  await until(() => smtp.messages.some((m) => m.to && JSON.stringify(m.to).includes(email)), 10_000, `the invitation to ${email}`);
  const mail = smtp.messages.find((m) => JSON.stringify(m.to).includes(email))!;
  expect(mail.text).toContain(r.body.data.invite_url);
  return { email, url: r.body.data.invite_url as string, user: r.body.data.user };
}

describe("users and sessions", () => {
  test("user create prints the user and a one-time link; the password is checked; the link signs in once and sets the cookie", async () => {
    const a = await s.account("business");
    const email = `Ada.${uniq()}@Example.com`;
    const made = await s.cli("user", "create", "--username", a.username, "--email", email, "--role", "owner", "--json");
    expect(made.code).toBe(0);
    expect(Object.keys(made.json).sort()).toEqual(["sign_in_url", "user"]);
    expect(made.json.user).toMatchObject({ email: email.toLowerCase(), role: "owner", active: false, totp: false });
    expect(made.json.sign_in_url).toMatch(/^http:\/\/localhost:\d+\/dashboard#\/welcome\/[A-Za-z0-9]{43}$|\/dashboard#\/welcome\/[A-Za-z0-9]{43}$/);
    // the same address again is refused (exit 2, one line)
    const again = await s.cli("user", "create", "--username", a.username, "--email", email, "--json");
    expect(again.code).toBe(2);
    const token = tokenOf(made.json.sign_in_url);
    for (const [password, says] of [
      ["short", "at least 10"],
      ["password1234", "common"],
      ["qwertyuiop", "common"],
      ["zqzqzqzqzqzq", "too few"],
    ]) {
      const r = await s.request("POST", "/api/v1/session/password", { body: { token, password } });
      expect(r.status).toBe(400);
      expect(r.text).toContain("password");
      expect(r.text).toContain(says);
    }
    const r = await s.request("POST", "/api/v1/session/password", { body: { token, password: PASSWORD } });
    expect(r.status).toBe(200);
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^wl_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000$/);
    expect(r.body.data).toMatchObject({ user: { active: true, role: "owner" }, account: { username: a.username } });
    expect(r.text).not.toContain(PASSWORD);
    // used up
    expect((await s.request("POST", "/api/v1/session/password", { body: { token, password: "another long passphrase" } })).status).toBe(400);
    // the password is stored as Argon2id, never as given
    const [row] = await s.query<{ password_hash: string }>(sql`SELECT password_hash FROM users WHERE email = ${email.toLowerCase()}`);
    expect(row.password_hash.startsWith("$argon2id$")).toBe(true);
    // sign in with the password
    const signed = await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD } });
    expect(signed.status).toBe(200);
    const b = fromSignIn(signed);
    const me = await as(b, "GET", "/api/v1/session");
    expect(me.body.data).toMatchObject({ user: { email: email.toLowerCase() }, csrf_token: b.csrf });
    expect((await as(b, "GET", "/api/v1/waitlists")).status).toBe(200);
  });

  test("a change over the cookie needs the CSRF token; with it the change is made and recorded as the user's", async () => {
    const { a, w, owner } = await team();
    const path = `/api/v1/waitlist/${w.key}/settings`;
    const refused = await as(owner, "PATCH", path, { description: "no token" }, false);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain("CSRF");
    expect((await as(owner, "PATCH", path, { description: "no token" }, false)).status).toBe(403);
    const wrong = await s.request("PATCH", path, { body: { description: "wrong" }, headers: { cookie: owner.cookie, "x-csrf-token": "nope" } });
    expect(wrong.status).toBe(403);
    expect((await as(owner, "PATCH", path, { description: "with token" })).status).toBe(200);
    const entries = (await s.request("GET", "/api/v1/account/audit", { key: a.key })).body.data.entries;
    expect(entries[0]).toMatchObject({ action: "settings.update", actor: { type: "user", id: owner.user.id, name: "Olivia Owner" } });
    expect(entries.filter((e: any) => e.action === "settings.update")).toHaveLength(1);
  });

  test("an owner invites an editor: the editor edits subscribers, gets 403 naming the role on settings and keys; the owner revokes the editor's session", async () => {
    const { a, w, owner } = await team();
    const { email, url } = await invite(owner, "editor");
    // the invitation's link shows nothing to a robot: it is the dashboard's page, the token after '#'
    expect(url).toContain("/dashboard#/welcome/");
    const editor = await acceptLink(url, "editor's own long passphrase");
    expect(editor.user).toMatchObject({ email, role: "editor", active: true });
    const p = `/api/v1/waitlist/${w.key}`;
    await s.request("POST", `${p}/sign-up`, { key: a.key, body: { email: "sub@example.com" } });
    expect((await as(editor, "PUT", `${p}/subscribers/sub@example.com`, { name: "Edited" })).status).toBe(200);
    const settings = await as(editor, "PATCH", `${p}/settings`, { description: "editor" });
    expect(settings.status).toBe(403);
    expect(settings.text).toContain("needs role admin");
    for (const [method, path] of [
      ["GET", "/api/v1/account/keys"],
      ["POST", "/api/v1/account/keys"],
      ["POST", "/api/v1/account/users"],
    ]) {
      const r = await as(editor, method, path, method === "POST" ? { name: "x", email: "x@example.com", role: "viewer" } : undefined);
      expect(r.status).toBe(403);
      expect(r.text).toMatch(/needs role (admin|owner)/);
    }
    // the owner sees the editor's session and revokes it; the editor's next request is refused
    const sessions = (await as(owner, "GET", `/api/v1/account/sessions?user_id=${editor.user.id}`)).body.data.sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ user_id: editor.user.id, user_email: email, ip: "127.0.0.1" });
    expect(JSON.stringify(sessions)).not.toContain(editor.cookie.split("=")[1]);
    expect((await as(owner, "DELETE", `/api/v1/account/sessions/${sessions[0].id}`)).status).toBe(200);
    const after = await as(editor, "GET", "/api/v1/waitlists");
    expect(after.status).toBe(401);
    // every change once, with its actor
    const log = (await s.request("GET", "/api/v1/account/audit", { key: a.key })).body.data.entries;
    expect(log.slice(0, 3).map((e: any) => [e.action, e.actor.type, e.actor.id])).toEqual([
      ["session.revoke", "user", owner.user.id],
      ["subscriber.update", "user", editor.user.id],
      ["user.invite", "user", owner.user.id],
    ]);
    expect(JSON.stringify(log)).not.toContain("sub@example.com");
  });

  test("a viewer reads and changes nothing; an admin can't change users or revoke a key someone else made", async () => {
    const { a, w, owner } = await team();
    const viewer = await acceptLink((await invite(owner, "viewer")).url);
    const admin = await acceptLink((await invite(owner, "admin")).url);
    expect((await as(viewer, "GET", `/api/v1/waitlist/${w.key}/subscribers`)).status).toBe(200);
    const r = await as(viewer, "POST", `/api/v1/waitlist/${w.key}/tags`, { name: "vip" });
    expect(r.status).toBe(403);
    expect(r.text).toContain("needs role editor");
    expect((await as(admin, "PATCH", `/api/v1/waitlist/${w.key}/settings`, { description: "admin" })).status).toBe(200);
    const role = await as(admin, "PATCH", `/api/v1/account/users/${viewer.user.id}`, { role: "admin" });
    expect(role.status).toBe(403);
    expect(role.text).toContain("needs role owner");
    const firstKey = (await as(admin, "GET", "/api/v1/account/keys")).body.data.keys[0];
    const revoke = await as(admin, "DELETE", `/api/v1/account/keys/${firstKey.id}`);
    expect(revoke.status).toBe(403);
    expect(revoke.text).toContain("needs role owner");
    // an admin's own key they may revoke
    const own = (await as(admin, "POST", "/api/v1/account/keys", { name: "admin's" })).body.data.api_key;
    expect((await as(admin, "GET", "/api/v1/account/keys")).body.data.keys.find((k: any) => k.id === own.id).created_by).toBe(admin.user.id);
    expect((await as(admin, "DELETE", `/api/v1/account/keys/${own.id}`)).status).toBe(200);
    expect((await s.request("GET", "/api/v1/me", { key: a.key })).status).toBe(200);
    // the owner changes roles; the last owner can't step down
    expect((await as(owner, "PATCH", `/api/v1/account/users/${viewer.user.id}`, { role: "editor" })).body.data.user.role).toBe("editor");
    const last = await as(owner, "PATCH", `/api/v1/account/users/${owner.user.id}`, { role: "admin" });
    expect(last.status).toBe(409);
    // an API key is no user: a user's own endpoints refuse it
    expect((await s.request("POST", "/api/v1/session/totp", { key: a.key })).status).toBe(403);
  });

  test("TOTP: set up, confirmed with a code; sign-in then needs a code or a recovery code (each once)", async () => {
    const { email, owner } = await team();
    const started = await as(owner, "POST", "/api/v1/session/totp");
    expect(started.status).toBe(200);
    expect(started.body.data.otpauth_url).toStartWith("otpauth://totp/Waitlist:");
    const totp = OTPAuth.URI.parse(started.body.data.otpauth_url) as OTPAuth.TOTP;
    expect((await as(owner, "POST", "/api/v1/session/totp/confirm", { code: "000000" === totp.generate() ? "111111" : "000000" })).status).toBe(400);
    const confirmed = await as(owner, "POST", "/api/v1/session/totp/confirm", { code: totp.generate() });
    expect(confirmed.status).toBe(200);
    const codes = confirmed.body.data.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    const without = await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD } });
    expect(without.status).toBe(401);
    expect(without.text).toContain("totp_required");
    expect((await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD, totp_code: totp.generate() } })).status).toBe(200);
    expect((await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD, totp_code: codes[0] } })).status).toBe(200);
    expect((await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD, totp_code: codes[0] } })).status).toBe(401);
  });

  test("a password reset link is emailed (the same answer for an unknown address), sets a new password once, and ends the other sessions", async () => {
    const { email, owner } = await team();
    const unknown = await s.request("POST", "/api/v1/session/reset", { body: { email: `nobody-${uniq()}@example.com` } });
    const known = await s.request("POST", "/api/v1/session/reset", { body: { email } });
    expect([unknown.status, known.status]).toEqual([202, 202]);
    expect(unknown.body).toEqual(known.body);
    await until(() => smtp.messages.some((m) => JSON.stringify(m.to).includes(email) && m.subject?.includes("Reset")), 10_000, "the reset email");
    const mail = smtp.messages.find((m) => JSON.stringify(m.to).includes(email) && m.subject?.includes("Reset"))!;
    const link = mail.text!.match(/\S+\/dashboard#\/reset\/[A-Za-z0-9]{43}/)![0];
    const fresh = await acceptLink(link, "a brand new long passphrase");
    expect((await as(fresh, "GET", "/api/v1/session")).status).toBe(200);
    // the session from before the reset is over; the old password no longer works
    expect((await as(owner, "GET", "/api/v1/session")).status).toBe(401);
    expect((await s.request("POST", "/api/v1/session", { body: { email, password: PASSWORD } })).status).toBe(401);
    expect((await s.request("POST", "/api/v1/session/password", { body: { token: tokenOf(link), password: "yet another long passphrase" } })).status).toBe(400);
  });

  test("sign out ends the session and clears the cookie", async () => {
    const { owner } = await team();
    const out = await as(owner, "DELETE", "/api/v1/session");
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/^wl_session=; .*Max-Age=0/);
    expect((await as(owner, "GET", "/api/v1/session")).status).toBe(401);
  });
});

describe("the sign-in throttle (a server of its own: every test here signs in from 127.0.0.1)", () => {
  test("more than 10 failed sign-ins for an address answer 429 with Retry-After, even with the right password", async () => {
    const own = await startServer({ env: { RATE_LIMITS: "off" } });
    try {
      const a = await own.account("business");
      const email = `locked-${uniq()}@example.com`;
      const made = await own.cli("user", "create", "--username", a.username, "--email", email, "--json");
      expect((await own.request("POST", "/api/v1/session/password", { body: { token: tokenOf(made.json.sign_in_url), password: PASSWORD } })).status).toBe(200);
      for (let i = 0; i < 10; i++) expect((await own.request("POST", "/api/v1/session", { body: { email, password: `wrong password ${i}` } })).status).toBe(401);
      const locked = await own.request("POST", "/api/v1/session", { body: { email, password: PASSWORD } });
      expect(locked.status).toBe(429);
      const wait = Number(locked.headers.get("retry-after"));
      expect(wait).toBeGreaterThan(800);
      expect(wait).toBeLessThanOrEqual(900);
      // the IP too: another address from it is held back as well
      const other = await own.request("POST", "/api/v1/session", { body: { email: `nobody-${uniq()}@example.com`, password: PASSWORD } });
      expect(other.status).toBe(429);
    } finally {
      await own.stop();
    }
  });

  test("an unknown address answers as a wrong password does", async () => {
    const r = await s.request("POST", "/api/v1/session", { body: { email: `nobody-${uniq()}@example.com`, password: PASSWORD } });
    expect([r.status, r.body.message ?? r.body.error?.message]).toEqual([401, "Wrong email or password"]);
  });
});

describe("the cookie on https (a server of its own: BASE_URL https)", () => {
  test("with BASE_URL on https the session cookie is Secure too", async () => {
    const own = await startServer({ env: { RATE_LIMITS: "off", BASE_URL: "https://waitlist.example.com" } });
    try {
      const a = await own.account("business");
      const made = await own.cli("user", "create", "--username", a.username, "--email", `secure-${uniq()}@example.com`, "--json");
      const r = await own.request("POST", "/api/v1/session/password", { body: { token: tokenOf(made.json.sign_in_url), password: PASSWORD } });
      expect(r.status).toBe(200);
      expect(r.headers.get("set-cookie")).toMatch(/^wl_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000; Secure$/);
    } finally {
      await own.stop();
    }
  });
});
