// Sends emails over SMTP_URL with nodemailer (smtp:// upgrades with STARTTLS when offered, smtps:// is TLS), DKIM-signed
// when DKIM_* is set (issue 45). nodemailer is loaded on the first email, not at start-up: it is ~20 MB of resident
// memory an instance that sends no email does not need.
import type { Transporter } from "nodemailer";
import type { Email } from "../outbox/render";

export interface Dkim {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

export interface Mailer {
  send(email: Email, messageId: string): Promise<void>;
  close(): void;
}

/** A refusal of the address itself (5xx at RCPT TO, or for the message as a whole): a retry would fail the same way. */
export function isPermanentFailure(err: unknown): boolean {
  const e = err as { responseCode?: number; code?: string; rejected?: string[] } | null;
  return typeof e?.responseCode === "number" && e.responseCode >= 500 && e.responseCode < 600 && (e.code === "EENVELOPE" || e.code === "EMESSAGE");
}

export function createMailer(smtpUrl: string, from: string, opts: { domain: string; dkim?: Dkim | null }): Mailer {
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import("nodemailer").then(({ default: nodemailer }) => {
      // pooled: a broadcast's emails share a few connections instead of a handshake each (issue 45)
      const url = new URL(smtpUrl);
      url.searchParams.set("pool", "true");
      const t = nodemailer.createTransport(url.toString(), { from, ...(opts.dkim ? { dkim: opts.dkim } : {}) });
      for (const [k, v] of Object.entries({ connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 })) (t.options as any)[k] = v;
      return t;
    }));
  return {
    async send(email, messageId) {
      await (await open()).sendMail({
        from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        headers: email.headers,
        // on the sender's domain, and stable across retries, so a receiving server can drop a duplicate delivery
        messageId: `<${messageId}@${opts.domain}>`,
      });
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
