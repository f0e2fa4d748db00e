// Real peers for the outboxes: an SMTP server (smtp-server + mailparser) and an HTTP webhook receiver.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

export interface Smtp {
  url: string;
  /** Each message parsed, with `raw`: the bytes as received (for signature checks). */
  messages: (ParsedMail & { raw: Buffer })[];
  /** Answer the next `n` messages with a temporary failure (451). */
  failNext(n: number): void;
  /** Refuse this recipient at RCPT TO with a permanent failure (550), as a server does for an address that does not exist. */
  refuse(address: string): void;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<Smtp> {
  const messages: (ParsedMail & { raw: Buffer })[] = [];
  let failures = 0;
  const refused = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refused.has(address.address.toLowerCase())) return callback(Object.assign(new Error("5.1.1 no such user"), { responseCode: 550 }));
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      new Promise<Buffer>((resolve, reject) => stream.on("end", () => resolve(Buffer.concat(chunks))).on("error", reject)).then(async (raw) => Object.assign(await simpleParser(raw), { raw })).then(
        (mail) => {
          if (failures > 0) {
            failures--;
            const err = Object.assign(new Error("try again later"), { responseCode: 451 });
            return callback(err);
          }
          messages.push(mail);
          callback();
        },
        (err) => callback(err),
      );
    },
  });
  // a client that vanishes mid-conversation (a killed server) is not the test's failure
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    failNext: (n) => (failures = n),
    refuse: (address) => void refused.add(address.toLowerCase()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Delivery {
  headers: Record<string, string>;
  raw: string;
  body: any;
}

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** Statuses to answer, in order; after they run out, 200. */
  respondWith(...statuses: number[]): void;
  stop(): void;
}

export function startReceiver(port = 0): Receiver {
  const deliveries: Delivery[] = [];
  let script: number[] = [];
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(req) {
      const raw = await req.text();
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {}
      deliveries.push({ headers: Object.fromEntries(req.headers), raw, body });
      return new Response("ok", { status: script.shift() ?? 200 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    port: server.port!,
    deliveries,
    respondWith: (...statuses) => (script = statuses),
    stop: () => server.stop(true),
  };
}

export interface FakeModel {
  url: string;
  /** Each request: its body (model, messages) and Authorization header. */
  requests: { body: any; authorization: string | null }[];
  /** How the next calls answer: a page object (as JSON text), raw text, a status, a stream, or never. */
  next(...answers: ModelAnswer[]): void;
  stop(): void;
}

export type ModelAnswer =
  | { kind: "json"; page: Record<string, unknown>; wrap?: "plain" | "fenced" | "prose"; /** a slow model */ delayMs?: number }
  | { kind: "stream"; page: Record<string, unknown> }
  | { kind: "status"; status: number; body?: string }
  | { kind: "text"; text: string }
  | { kind: "hang" };

/** An OpenAI-compatible /chat/completions endpoint whose answers the test scripts. */
export function startFakeModel(): FakeModel {
  const requests: FakeModel["requests"] = [];
  let script: ModelAnswer[] = [];
  const completion = (content: string) => ({ id: "cmpl-1", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      if (!new URL(req.url).pathname.endsWith("/chat/completions")) return new Response("not found", { status: 404 });
      requests.push({ body: await req.json(), authorization: req.headers.get("authorization") });
      const answer = script.shift() ?? { kind: "status", status: 500 };
      switch (answer.kind) {
        case "json": {
          if (answer.delayMs) await Bun.sleep(answer.delayMs);
          const json = JSON.stringify(answer.page);
          const content = answer.wrap === "fenced" ? `Here is your page:\n\`\`\`json\n${json}\n\`\`\`\nEnjoy!` : answer.wrap === "prose" ? `Sure! ${json} Let me know.` : json;
          return Response.json(completion(content));
        }
        case "stream": {
          const json = JSON.stringify(answer.page);
          const parts = json.match(/.{1,40}/gs) ?? [];
          const sse = parts.map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join("") + "data: [DONE]\n\n";
          return new Response(sse, { headers: { "content-type": "text/event-stream" } });
        }
        case "status":
          return new Response(answer.body ?? "upstream exploded: secret-internal-detail", { status: answer.status });
        case "text":
          return Response.json(completion(answer.text));
        case "hang":
          return new Promise<Response>(() => {});
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    requests,
    next: (...answers) => (script = answers),
    stop: () => server.stop(true),
  };
}
