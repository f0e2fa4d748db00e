// The client against the real server, which this test starts itself from the repository (`npm test` in
// clients/typescript): an account from the CLI, a waitlist, a sign-up through the typed client, and the webhook it
// causes verified with verifyWebhook.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWaitlistClient, verifyWebhook } from "../src/index";

const MAIN = join(import.meta.dir, "..", "..", "..", "src", "main.ts");
const dir = mkdtempSync(join(tmpdir(), "waitlist-client-test-"));
const db = `file:${join(dir, "waitlist.db")}`;
let server: ReturnType<typeof Bun.spawn> | null = null;
let baseUrl = "";
const deliveries: { raw: string; headers: Headers }[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    deliveries.push({ raw: await request.text(), headers: request.headers });
    return new Response("ok");
  },
});

beforeAll(async () => {
  server = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0", "--host", "127.0.0.1", "--db", db], {
    env: { ...process.env, LOG_LEVEL: "info", RATE_LIMITS: "off", WEBHOOK_BLOCK_PRIVATE: "off" },
    stdout: "pipe",
    stderr: "ignore",
  });
  // its log read to the end (a pipe left unread would stop the server once full)
  const listening = new Promise<string>((resolve, reject) => {
    (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of server!.stdout as ReadableStream<Uint8Array>) {
        buffer += decoder.decode(chunk);
        const line = buffer.split("\n").find((l) => l.includes('"msg":"listening"'));
        if (line && !baseUrl) resolve(`http://127.0.0.1:${JSON.parse(line).port}`);
        if (buffer.length > 100_000) buffer = buffer.slice(-1_000);
      }
      reject(new Error(`the server exited before listening: ${buffer}`));
    })();
  });
  const timer = setTimeout(() => server?.kill(), 20_000);
  baseUrl = await listening;
  clearTimeout(timer);
});

afterAll(async () => {
  server?.kill();
  await server?.exited;
  receiver.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test("sign someone up with the typed client, and verify the webhook it causes", async () => {
  const cli = Bun.spawnSync([process.execPath, MAIN, "account", "create", "--username", `client${Date.now()}`, "--db", db, "--json"]);
  const { api_key: apiKey } = JSON.parse(cli.stdout.toString());
  const client = createWaitlistClient({ baseUrl, apiKey });

  const created = await client.POST("/api/v1/waitlists", { body: { name: `Client ${Date.now()}` } });
  expect(created.response.status).toBe(201);
  const waitlistKey = created.data!.data.waitlist.key;
  const params = { path: { waitlistKey } };
  const settings = await client.PATCH("/api/v1/waitlist/{waitlistKey}/settings", { params, body: { webhook: { url: `http://127.0.0.1:${receiver.port}/hooks`, enabled: true } } });
  expect(settings.response.status).toBe(200);
  const secret = settings.data!.data.settings.webhook.signing_secret;

  const signedUp = await client.POST("/api/v1/waitlist/{waitlistKey}/sign-up", { params, body: { email: "ada@example.com", name: "Ada" } });
  expect(signedUp.response.status).toBe(200);
  expect(signedUp.data!.position).toBe(1);
  const one = await client.GET("/api/v1/waitlist/{waitlistKey}/subscribers/{idOrEmail}", { params: { path: { waitlistKey, idOrEmail: "ada@example.com" } } });
  expect(one.data!.data.subscriber.name).toBe("Ada");
  // an error answer is typed too, and nothing is thrown
  const refused = await client.POST("/api/v1/waitlist/{waitlistKey}/sign-up", { params, body: { email: "not an email" } });
  expect(refused.response.status).toBe(400);

  const deadline = Date.now() + 10_000;
  while (!deliveries.length) {
    if (Date.now() > deadline) throw new Error("no webhook delivery in 10 s");
    await Bun.sleep(20);
  }
  const event = verifyWebhook(secret, deliveries[0]!.raw, deliveries[0]!.headers);
  expect(event.type).toBe("subscriber.created");
  expect((event.data.subscriber as { email: string }).email).toBe("ada@example.com");
  expect(() => verifyWebhook(secret, deliveries[0]!.raw.replace("Ada", "Eve"), deliveries[0]!.headers)).toThrow();
});
