// Issue 16, items 9 and 10: behind the proxy (/internal/* and the Caddyfile, the byte cap on every body) and
// what visitors meet (custom-domain redirects, signup_url and referral links, the plain form, IPv6).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";

const TOKEN = "internal-token-for-tests-0123456789";
const CADDY = "/usr/bin/caddy";
const hasCaddy = Bun.file(CADDY).size > 0;

let s: TestServer;
let bare: TestServer;
let smtp: Smtp;
beforeAll(async () => {
  smtp = await startSmtp();
  [s, bare] = await Promise.all([
    startServer({ env: { RATE_LIMITS: "off", TRUST_PROXY: "true", INTERNAL_TOKEN: TOKEN, SMTP_URL: smtp.url } }),
    startServer({ env: { RATE_LIMITS: "off", TRUST_PROXY: "true" } }),
  ]);
});
afterAll(async () => {
  await Promise.all([s?.stop(), bare?.stop()]);
  await smtp?.close();
});

const uniq = () => Math.random().toString(36).slice(2, 8);
/** BASE_URL of a test server (it listens on 127.0.0.1; BASE_URL says localhost). */
const own = (server: TestServer) => server.url.replace("127.0.0.1", "localhost");

async function waitlist(settings: Record<string, unknown> = {}, name = `Visitors ${uniq()}`) {
  const { key } = await s.account();
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name, referral_rewards: { enabled: true } } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  if (Object.keys(settings).length) {
    const r = await s.request("PATCH", `${path}/settings`, { key, body: settings });
    expect(r.status, r.text).toBe(200);
  }
  const signUp = async (body: Record<string, unknown>) => s.request("POST", `${path}/sign-up`, { key, body });
  const subscriber = async (email: string) => (await s.request("GET", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).body.data?.subscriber;
  const total = async () => (await s.request("GET", `${path}/subscribers`, { key })).body.data.total as number;
  return { key, w, path, signUp, subscriber, total };
}

const urlencoded = { "content-type": "application/x-www-form-urlencoded" };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A raw HTTP/1.1 request whose body is sent chunked (no Content-Length), all in one write; the whole answer as text. */
function chunkedPost(url: string, path: string, headers: Record<string, string>, chunks: Uint8Array[]): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    let answer = "";
    socket.on("data", (d) => (answer += d.toString()));
    // the server stops reading at the cap and closes: our unsent rest may fail to write, the answer still came
    socket.on("error", () => {});
    socket.on("close", () => resolve(answer));
    socket.on("connect", () => {
      const head = [`POST ${path} HTTP/1.1`, `Host: ${u.host}`, "Transfer-Encoding: chunked", "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
      const framed = chunks.map((c) => Buffer.concat([Buffer.from(`${c.byteLength.toString(16)}\r\n`), c, Buffer.from("\r\n")]));
      socket.write(Buffer.concat([Buffer.from(head), ...framed, Buffer.from("0\r\n\r\n")]));
    });
  });
}

/** 2 MB in 64 KB chunks after `prefix`. */
const twoMegabytes = (prefix: string) => [new TextEncoder().encode(prefix), ...Array.from({ length: 32 }, () => new Uint8Array(65_536).fill(120))];
const statusOf = (raw: string) => Number(raw.split(" ")[1]);
const bodyOf = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4);

describe("item 9: /internal/custom-domain cannot be asked from outside", () => {
  test("with INTERNAL_TOKEN only the token opens it: none or a wrong one is 403 even from loopback", async () => {
    const { key, w } = await waitlist();
    const domain = `join-${uniq()}.example.org`;
    expect((await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { custom_domain: domain } })).status).toBe(200);
    const ask = (query: string) => fetch(`${s.url}/internal/custom-domain?${query}`);
    expect((await ask(`domain=${domain}`)).status).toBe(403);
    expect((await ask(`domain=${domain}&token=wrong-${TOKEN}`)).status).toBe(403);
    expect((await ask(`domain=${domain}&token=${TOKEN.slice(0, -1)}`)).status).toBe(403);
    // Caddy puts domain after the token it was configured with (ondemand.go keeps the query string)
    expect((await ask(`token=${TOKEN}&domain=${domain}`)).status).toBe(200);
    expect((await ask(`token=${TOKEN}&domain=other-${uniq()}.example.org`)).status).toBe(404);
  });

  test("behind a proxy (TRUST_PROXY=true) without INTERNAL_TOKEN nobody may ask, loopback included", async () => {
    const r = await fetch(`${bare.url}/internal/custom-domain?domain=anything.example.org`);
    expect(r.status).toBe(403);
    expect((await fetch(`${bare.url}/internal/custom-domain?domain=anything.example.org&token=${TOKEN}`)).status).toBe(403);
  });

  test.skipIf(!hasCaddy)("deploy/Caddyfile is valid (caddy validate)", async () => {
    const home = mkdtempSync(join(tmpdir(), "caddy-validate-"));
    try {
      const proc = Bun.spawn([CADDY, "validate", "--config", join(import.meta.dir, "..", "deploy", "Caddyfile"), "--adapter", "caddyfile"], {
        env: { ...process.env, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect(code, err).toBe(0);
      expect(err + (await new Response(proc.stdout).text())).toContain("Valid configuration");
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test.skipIf(!hasCaddy)("through Caddy with the Caddyfile's site rules, /internal/* is 404 while the rest is proxied", async () => {
    const { key, w } = await waitlist();
    const domain = `shop-${uniq()}.example.org`;
    await s.request("PATCH", `/api/v1/waitlist/${w.key}/settings`, { key, body: { custom_domain: domain } });
    const home = mkdtempSync(join(tmpdir(), "caddy-run-"));
    const port = await freePort();
    // the site snippet exactly as deployed, pointed at this test's server, on plain HTTP
    const snippet = /\(waitlist\) \{[\s\S]*?\n\}/.exec(readFileSync(join(import.meta.dir, "..", "deploy", "Caddyfile"), "utf8"))![0];
    const config = join(home, "Caddyfile");
    writeFileSync(config, `{\n\tadmin off\n\tauto_https off\n\tstorage file_system ${home}/data\n}\n${snippet.replace("127.0.0.1:3000", new URL(s.url).host)}\nhttp://127.0.0.1:${port} {\n\timport waitlist\n}\n`);
    const caddy = Bun.spawn([CADDY, "run", "--config", config, "--adapter", "caddyfile"], {
      env: { ...process.env, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      const via = `http://127.0.0.1:${port}`;
      await until(() => fetch(`${via}/healthz`).then((r) => r.status === 200, () => false), 10_000, "caddy proxying");
      const query = `token=${TOKEN}&domain=${domain}`;
      expect((await fetch(`${s.url}/internal/custom-domain?${query}`)).status).toBe(200);
      for (const path of [`/internal/custom-domain?${query}`, "/internal/custom-domain", "/internal"]) {
        const r = await fetch(via + path);
        expect(r.status, path).toBe(404);
        expect(await r.text(), path).toBe("");
      }
      expect((await fetch(`${via}/healthz`)).status).toBe(200);
    } finally {
      caddy.kill("SIGTERM");
      await caddy.exited;
      rmSync(home, { recursive: true, force: true });
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("item 9: every request body is capped in bytes as it is read", () => {
  test("a 2 MB chunked form post from a browser is 413 (a page) and stores nothing; a small chunked post works", async () => {
    const wl = await waitlist();
    const headers = { ...urlencoded, origin: own(s), accept: "text/html,application/xhtml+xml" };
    const big = await chunkedPost(s.url, `/s/${wl.w.key}`, headers, twoMegabytes("email=big%40example.com&pad="));
    expect(statusOf(big)).toBe(413);
    expect(big.toLowerCase()).toContain("content-type: text/html");
    expect(bodyOf(big)).toContain("larger than 1 MB");
    const small = await chunkedPost(s.url, `/s/${wl.w.key}`, headers, [new TextEncoder().encode("email=small%40"), new TextEncoder().encode("example.com")]);
    expect(statusOf(small)).toBe(303);
    expect(await wl.total()).toBe(1);
    expect(await wl.subscriber("big@example.com")).toBeUndefined();
  });

  test("a JSON client streaming 2 MB to the form gets 413 in the JSON error shape", async () => {
    const wl = await waitlist();
    const chunks = twoMegabytes(`{"email":"json-big@example.com","pad":"`);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    });
    const r = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", body, headers: { "content-type": "application/json", accept: "application/json", origin: own(s) }, duplex: "half" } as RequestInit);
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ statusCode: 413, error: "Payload Too Large", message: "The request body is larger than 1 MB" });
    expect(await wl.total()).toBe(0);
  });

  test("a 2 MB chunked body to the API is 413 in the standard shape and creates nothing", async () => {
    const wl = await waitlist();
    const signUp = await chunkedPost(s.url, `${wl.path}/sign-up`, { "content-type": "application/json", "x-api-key": wl.key }, twoMegabytes(`{"email":"api-big@example.com","name":"`));
    expect(statusOf(signUp)).toBe(413);
    expect(JSON.parse(bodyOf(signUp))).toEqual({ statusCode: 413, error: "Payload Too Large", message: "The request body is larger than 1 MB" });
    expect(await wl.total()).toBe(0);
    const create = await chunkedPost(s.url, "/api/v1/waitlists", { "content-type": "application/json", "x-api-key": wl.key }, twoMegabytes(`{"name":"`));
    expect(statusOf(create)).toBe(413);
    expect((await s.request("GET", "/api/v1/waitlists", { key: wl.key })).body.data.total).toBe(1);
  });
});

describe("item 10: a form posted on a custom domain stays on it", () => {
  test("the 303 goes to /t/{token} on the same host, which serves the thank-you page there", async () => {
    const domain = `shop-${uniq()}.example`;
    const wl = await waitlist({ custom_domain: domain });
    const email = `cd-${uniq()}@example.com`;
    const r = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", redirect: "manual", body: form({ email }), headers: { ...urlencoded, host: domain, origin: `https://${domain}`, accept: "text/html" } });
    expect(r.status).toBe(303);
    const sub = await wl.subscriber(email);
    expect(r.headers.get("location")).toBe(`/t/${sub.sign_up_token}`);
    const page = await fetch(`${s.url}/t/${sub.sign_up_token}`, { headers: { host: domain } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("on the list!");
    // on the service's own host nothing changes
    const home = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", redirect: "manual", body: form({ email: `home-${uniq()}@example.com` }), headers: { ...urlencoded, origin: own(s) } });
    expect(home.headers.get("location")).toStartWith(`${own(s)}/t/`);
  });

  test("with double opt-in it goes to /pending/{waitlistKey} on the same host", async () => {
    const domain = `doi-${uniq()}.example`;
    const wl = await waitlist({ custom_domain: domain, double_opt_in: true });
    const r = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", redirect: "manual", body: form({ email: `doi-${uniq()}@example.com` }), headers: { ...urlencoded, host: domain, origin: `https://${domain}` } });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(`/pending/${wl.w.key}`);
  });
});

describe("item 10: signup_url and referral links", () => {
  test("GET and PATCH signup_url: an absolute http(s) URL or null; anything else is 400 naming it and changes nothing", async () => {
    const wl = await waitlist();
    const settings = () => s.request("GET", `${wl.path}/settings`, { key: wl.key });
    expect((await settings()).body.data.settings.signup_url).toBeNull();
    const ok = await s.request("PATCH", `${wl.path}/settings`, { key: wl.key, body: { signup_url: "https://www.example.com/join?utm_source=wl" } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.settings.signup_url).toBe("https://www.example.com/join?utm_source=wl");
    for (const bad of ["ftp://example.com/join", "www.example.com/join", "/join", "", "javascript:alert(1)", "https://user:secret@example.com/", `https://example.com/${"x".repeat(2100)}`, 42, true, {}]) {
      const r = await s.request("PATCH", `${wl.path}/settings`, { key: wl.key, body: { signup_url: bad, position_offset: 9 } });
      expect(r.status, JSON.stringify(bad).slice(0, 40)).toBe(400);
      expect(r.body.message, JSON.stringify(bad).slice(0, 40)).toContain("signup_url");
    }
    const after = (await settings()).body.data.settings;
    expect([after.signup_url, after.position_offset]).toEqual(["https://www.example.com/join?utm_source=wl", 0]);
    const cleared = await s.request("PATCH", `${wl.path}/settings`, { key: wl.key, body: { signup_url: null } });
    expect(cleared.body.data.settings.signup_url).toBeNull();
  });

  test("the thank-you page's link and share buttons follow signup_url (query kept), else the custom domain, else /p/{slug}", async () => {
    const wl = await waitlist();
    const me = (await wl.signUp({ email: `me-${uniq()}@example.com` })).body;
    const linkOn = async () => /id="referral-link" type="text" readonly value="([^"]*)"/.exec(await (await fetch(`${s.url}/t/${me.sign_up_token}`)).text())![1].replaceAll("&amp;", "&");
    const patch = (body: Record<string, unknown>) => s.request("PATCH", `${wl.path}/settings`, { key: wl.key, body });

    expect(await linkOn()).toBe(`${own(s)}/p/${wl.w.slug}?ref=${me.referral_code}`);
    const domain = `launch-${uniq()}.example`;
    await patch({ custom_domain: domain });
    // as hosted_page_url builds a custom-domain URL: BASE_URL's scheme (http in these tests), the domain's root
    expect(await linkOn()).toBe(`http://${domain}/?ref=${me.referral_code}`);
    await patch({ signup_url: "https://www.example.com/join?utm_source=wl&ref=old#form" });
    const link = await linkOn();
    expect(link).toBe(`https://www.example.com/join?utm_source=wl&ref=${me.referral_code}#form`);
    const page = await (await fetch(`${s.url}/t/${me.sign_up_token}`)).text();
    expect(page).toContain(`https://twitter.com/intent/tweet?text=`);
    expect(page).toContain(encodeURIComponent(link));
  });

  test("the welcome email's {{referral_link}} is the same link", async () => {
    const wl = await waitlist({ signup_url: "https://www.example.com/join?lang=en", welcome_email: { enabled: true, subject: "Welcome {{name}}", body: "Share {{referral_link}} now" } });
    const email = `mail-${uniq()}@example.com`;
    const me = (await wl.signUp({ email, name: "Mo" })).body;
    const mail = await until(() => smtp.messages.find((m) => m.to && JSON.stringify(m.to).includes(email)), 10_000, "welcome email");
    expect(mail.text).toContain(`Share https://www.example.com/join?lang=en&ref=${me.referral_code} now`);
  });
});

describe("item 10: a referral link never leads nowhere", () => {
  test("/p/{slug} without a published page is 200 with a plain form: escaped name, posting to /s/{key}, the ref carried", async () => {
    const wl = await waitlist({}, `Cafe <b>&"Bar" ${uniq()}`);
    const referrerEmail = `ref-${uniq()}@example.com`;
    const referrer = (await wl.signUp({ email: referrerEmail })).body;
    const r = await fetch(`${s.url}/p/${wl.w.slug}?ref=${referrer.referral_code}`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("content-security-policy")).toContain("form-action 'self'");
    const html = await r.text();
    expect(html).toContain(`Join the Cafe &lt;b&gt;&amp;&quot;Bar&quot;`);
    expect(html).not.toContain("<b>");
    expect(html).toContain(`<form method="post" action="/s/${wl.w.key}">`);
    expect(html).toContain(`<input type="hidden" name="ref" value="${referrer.referral_code}">`);
    expect(html).toContain(`name="email"`);

    // the form works: the visitor joins and the referrer is credited
    const email = `friend-${uniq()}@example.com`;
    const post = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", redirect: "manual", body: form({ email, ref: referrer.referral_code, website: "" }), headers: { ...urlencoded, origin: own(s), "x-forwarded-for": "203.0.113.9" } });
    expect(post.status).toBe(303);
    expect((await wl.subscriber(email)).referred_by).toBe(referrer.referral_code);
    expect((await wl.subscriber(referrerEmail)).referral_count).toBe(1);

    const unknown = await fetch(`${s.url}/p/nothing-${uniq()}`);
    expect(unknown.status).toBe(404);
  });

  test("a custom domain without a published page shows the same form at /", async () => {
    const domain = `soon-${uniq()}.example`;
    const wl = await waitlist({ custom_domain: domain });
    const r = await fetch(`${s.url}/?ref=ABC123`, { headers: { host: domain } });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain(`<form method="post" action="/s/${wl.w.key}">`);
    expect(html).toContain(`<input type="hidden" name="ref" value="ABC123">`);
    expect((await fetch(`${s.url}/`, { headers: { host: `nobody-${uniq()}.example` } })).status).toBe(404);
  });
});

describe("item 10: IPv6 wherever an IP is taken", () => {
  test("metadata.client_ip takes IPv6, stored compressed and lowercase and geolocated; IPv4-mapped is stored as IPv4", async () => {
    const wl = await waitlist();
    const a = await wl.signUp({ email: "v6@example.com", metadata: { client_ip: "2A00:1450:4001:080B:0000:0000:0000:200E" } });
    expect(a.status, a.text).toBe(200);
    expect(await wl.subscriber("v6@example.com")).toMatchObject({ ip_address: "2a00:1450:4001:80b::200e", country: "DE", city: "Frankfurt am Main", timezone: "Europe/Berlin" });
    expect((await wl.signUp({ email: "mapped@example.com", metadata: { client_ip: "::ffff:81.2.69.160" } })).status).toBe(200);
    expect(await wl.subscriber("mapped@example.com")).toMatchObject({ ip_address: "81.2.69.160", country: "GB" });
    for (const bad of ["fe80::1%eth0", "2001:db8::g", "1.2.3", "::ffff:1.2.3.256"]) {
      const r = await wl.signUp({ email: `bad-${uniq()}@example.com`, metadata: { client_ip: bad } });
      expect(r.status, bad).toBe(400);
      expect(r.body, bad).toEqual({ statusCode: 400, message: "metadata.client_ip must be a valid IPv4 or IPv6 address" });
    }
    expect(await wl.total()).toBe(2);
  });

  test("the fraud rules match one IPv6 address in any of its spellings (self-referral and duplicate_ip)", async () => {
    const wl = await waitlist();
    const referrerEmail = `r-${uniq()}@example.com`;
    const referrer = (await wl.signUp({ email: referrerEmail, metadata: { client_ip: "2001:db8:1::1" } })).body;
    const referrerCount = async () => (await wl.subscriber(referrerEmail)).referral_count;
    // the referrer's own address, spelled out in full and in capitals: self-referral, no credit
    await wl.signUp({ email: `self-${uniq()}@example.com`, metadata: { client_ip: "2001:DB8:1:0:0:0:0:1", referred_by: referrer.referral_code } });
    expect(await referrerCount()).toBe(0);
    // three sign-ups from one address in three spellings, then a fourth with a referral: duplicate_ip, no credit
    for (const spelling of ["2001:db8:2::7", "2001:0db8:0002:0000:0000:0000:0000:0007", "2001:DB8:2:0::7"]) {
      expect((await wl.signUp({ email: `dup-${uniq()}@example.com`, metadata: { client_ip: spelling } })).status).toBe(200);
    }
    await wl.signUp({ email: `dup4-${uniq()}@example.com`, metadata: { client_ip: "2001:db8:2:0:0:0:0:7", referred_by: referrer.referral_code } });
    expect(await referrerCount()).toBe(0);
    // a different IPv6 address is credited
    await wl.signUp({ email: `ok-${uniq()}@example.com`, metadata: { client_ip: "2001:db8:3::9", referred_by: referrer.referral_code } });
    expect(await referrerCount()).toBe(1);
  });

  test("a form post's IPv6 X-Forwarded-For (TRUST_PROXY) is stored in the same form", async () => {
    const wl = await waitlist();
    const email = `xff-${uniq()}@example.com`;
    const r = await fetch(`${s.url}/s/${wl.w.key}`, { method: "POST", redirect: "manual", body: form({ email }), headers: { ...urlencoded, origin: own(s), "x-forwarded-for": "2A00:1450:4001:80B:0:0:0:200E, 10.0.0.1" } });
    expect(r.status).toBe(303);
    expect(await wl.subscriber(email)).toMatchObject({ ip_address: "2a00:1450:4001:80b::200e", country: "DE" });
  });
});
