// Email a provider accepts (issue 45 item 3): DKIM-signed when DKIM_* is set (verified with mailauth against the
// public key as its DNS record would publish it), multipart with a text part, in the waitlist's look (name or logo,
// link colour, footer with the postal address), and a start-up warning when MAIL_FROM would be on localhost.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { dkimVerify } from "mailauth/lib/dkim/verify";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";
import { removeDir, tempDir } from "./support/cleanup";

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
/** The TXT record the domain publishes at wl1._domainkey.rocket.example. */
const RECORD = `v=DKIM1; k=rsa; p=${publicKey.export({ type: "spki", format: "der" }).toString("base64")}`;

let s: TestServer;
let smtp: Smtp;
let dir: string;
beforeAll(async () => {
  smtp = await startSmtp();
  dir = tempDir("waitlist-dkim-");
  const keyFile = join(dir, "dkim.pem");
  writeFileSync(keyFile, PEM);
  s = await startServer({
    env: { BASE_URL: "https://wl.rocket.example", MAIL_FROM: "Rocket <hello@rocket.example>", SMTP_URL: smtp.url, RATE_LIMITS: "off", DKIM_DOMAIN: "rocket.example", DKIM_SELECTOR: "wl1", DKIM_PRIVATE_KEY_FILE: keyFile },
  });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
  removeDir(dir);
});

const resolver = async (name: string, rr: string) => {
  if (name === "wl1._domainkey.rocket.example" && rr === "TXT") return [[RECORD]];
  throw Object.assign(new Error(`no ${rr} record for ${name}`), { code: "ENOTFOUND" });
};

test("every email is DKIM-signed for DKIM_DOMAIN, multipart with a text part, in the waitlist's look", async () => {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Look ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const footer = "Rocket Inc., 1 Launch Pad, Cape Canaveral, FL 32920";
  const patched = await s.request("PATCH", `${path}/settings`, {
    key,
    body: { welcome_email: { enabled: true, body: "Hi {{first_name}}, you are **#{{position}}**.\n\n<script>x</script>" }, email_template: { logo_url: "https://rocket.example/logo.png", color: "#FF5500", footer } },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.data.settings.email_template).toEqual({ sender_name: null, logo_url: "https://rocket.example/logo.png", color: "#ff5500", footer });
  // objects merge one level deep: the colour alone leaves the rest
  const merged = await s.request("PATCH", `${path}/settings`, { key, body: { email_template: { sender_name: "Rocket team" } } });
  expect(merged.body.data.settings.email_template).toMatchObject({ sender_name: "Rocket team", color: "#ff5500", footer });
  const bad = await s.request("PATCH", `${path}/settings`, { key, body: { email_template: { color: "orange" } } });
  expect(bad.status).toBe(400);
  expect(bad.body.message).toContain("email_template.color");

  expect((await s.request("POST", `${path}/sign-up`, { key, body: { email: "dkim@example.com", name: "Ada Lovelace" } })).status).toBe(200);
  const mail = await until(() => smtp.messages.find((m) => JSON.stringify(m.to).includes("dkim@example.com")), 5_000, "the welcome email");
  const result = await dkimVerify(mail.raw, { resolver });
  expect(result.results.map((r: { status: { result: string } }) => r.status.result)).toEqual(["pass"]);
  expect(result.results[0].signingDomain).toBe("rocket.example");
  expect(mail.messageId).toMatch(/@rocket\.example>$/);
  // multipart/alternative: a text part and an HTML part
  expect(String(mail.headers.get("content-type") && (mail.headers.get("content-type") as { value: string }).value)).toBe("multipart/alternative");
  expect(mail.text).toContain("Hi Ada, you are **#1**.");
  expect(mail.text).toContain(`-- \n${footer}`);
  expect(mail.html).toContain("<strong>#1</strong>");
  expect(mail.html).toContain('<img src="https://rocket.example/logo.png" alt="Rocket team"');
  expect(mail.html).toContain("a{color:#ff5500}");
  expect(mail.html).toContain(footer);
  expect(mail.html).not.toContain("<script>");
  expect(mail.html).toContain("&lt;script&gt;");
  // a message changed in transit does not verify (mailauth: "neutral", the body hash did not match)
  const tampered = Buffer.from(mail.raw.toString("utf8").replace("Hi Ada", "Hi Eve"));
  const check = (await dkimVerify(tampered, { resolver })).results[0].status;
  expect(check.result).not.toBe("pass");
  expect(JSON.stringify(check)).toMatch(/body hash/i);
});

test("start-up warns when MAIL_FROM would be on localhost, and not when it is on a real domain", async () => {
  expect(s.logs.some((l) => l.includes("MAIL_FROM is not on a real domain"))).toBe(false);
  const local = await startServer({ env: { RATE_LIMITS: "off" } });
  try {
    const line = local.logs.map((l) => JSON.parse(l)).find((e) => e.msg?.startsWith("MAIL_FROM is not on a real domain"));
    expect(line).toMatchObject({ level: "warn", mail_from: "Waitlist <noreply@localhost>" });
  } finally {
    await local.stop();
  }
});
