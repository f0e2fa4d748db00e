// Real peers for the outboxes: an SMTP server (smtp-server + mailparser) and an HTTP webhook receiver.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

export interface Smtp {
  url: string;
  messages: ParsedMail[];
  /** Answer the next `n` messages with a temporary failure (451). */
  failNext(n: number): void;
  close(): Promise<void>;
}

export async function startSmtp(): Promise<Smtp> {
  const messages: ParsedMail[] = [];
  let failures = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    failNext: (n) => (failures = n),
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
