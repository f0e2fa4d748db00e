// Issue 45, done when: a broadcast to a segment reaches exactly the segment's subscribers once each, over a real SMTP
// server, across a kill -9 and restart in the middle of sending. "Once" is one email, one Message-ID, per subscriber:
// the recipient rows allow no second. The SMTP server may be handed that same email again only if the process died
// between the server's acceptance and the commit that records it (docs/decisions.md), which a receiving server drops
// by its Message-ID; so the test counts Message-IDs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, until, type TestServer } from "./support/server";
import { startSmtp, type Smtp } from "./support/peers";

const SUBSCRIBERS = 60;
const env = (smtp: Smtp) => ({ BASE_URL: "http://wl.crash.example", MAIL_FROM: "Crash <news@crash.example>", SMTP_URL: smtp.url, RATE_LIMITS: "off", MAIL_RATE_PER_MINUTE: "120" });

let smtp: Smtp;
let first: TestServer;
let second: TestServer | undefined;
beforeAll(async () => {
  smtp = await startSmtp();
  first = await startServer({ env: env(smtp) });
});
afterAll(async () => {
  await second?.stop();
  await first.stop();
  await smtp.close();
});

test("a kill -9 in the middle of a broadcast: after the restart every subscriber of the segment has it, once, and nobody else", async () => {
  const { key } = await first.account("growth");
  const w = (await first.request("POST", "/api/v1/waitlists", { key, body: { name: `Crash ${Math.random().toString(36).slice(2, 8)}` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const members = Array.from({ length: SUBSCRIBERS }, (_, i) => `member${i}@example.com`);
  for (const email of members) expect((await first.request("POST", `${path}/sign-up`, { key, body: { email } })).status).toBe(200);
  for (const email of members.slice(0, SUBSCRIBERS / 2)) expect((await first.request("POST", `${path}/subscribers/${email}/tags`, { key, body: { tags: ["early"] } })).status).toBe(200);
  const outsider = "outsider@example.com";
  await first.request("POST", `${path}/sign-up`, { key, body: { email: outsider } });
  const segment = members.slice(0, SUBSCRIBERS / 2);

  const subject = "We launch on Monday";
  const b = (await first.request("POST", `${path}/broadcasts`, { key, body: { subject, body_markdown: "Hi {{first_name}}, see you there.", segment: { tags_any: ["early"] } } })).body.data.broadcast;
  expect(b.recipients).toBe(segment.length);
  expect((await first.request("POST", `${path}/broadcasts/${b.id}/send`, { key })).status).toBe(200);
  const ours = () => smtp.messages.filter((m) => m.subject === subject);
  // two a second, leaving at each 5-second run of the outbox job: the first run's, of 30
  await until(() => ours().length >= 5, 30_000, "the first emails");
  first.proc.kill("SIGKILL");
  await first.proc.exited;
  const before = ours().length;
  expect(before).toBeLessThan(segment.length);

  second = await startServer({ dbUrl: first.dbUrl, env: env(smtp) });
  // a send cut short holds its claim for a minute (outbox CLAIM_MS), then is taken up again
  const done = await until(
    async () => {
      const x = (await second!.request("GET", `${path}/broadcasts/${b.id}`, { key })).body.data.broadcast;
      return x.status === "sent" && x;
    },
    90_000,
    "the broadcast to finish after the restart",
  );
  expect(done).toMatchObject({ recipients: segment.length, sent: segment.length, failed: 0, bounced: 0, skipped: 0 });
  const to = (m: (typeof smtp.messages)[number]) => (Array.isArray(m.to) ? m.to[0] : m.to)!.value[0].address!;
  const idsByAddress = new Map<string, Set<string>>();
  for (const m of ours()) idsByAddress.set(to(m), (idsByAddress.get(to(m)) ?? new Set()).add(m.messageId!));
  expect([...idsByAddress.keys()].sort()).toEqual([...segment].sort());
  for (const [address, ids] of idsByAddress) expect({ address, messageIds: ids.size }).toEqual({ address, messageIds: 1 });
  expect(smtp.messages.some((m) => to(m) === outsider)).toBe(false);
}, 150_000);
