// Sends emails over SMTP_URL with nodemailer (smtp:// upgrades with STARTTLS when offered, smtps:// is TLS).
// nodemailer is loaded on the first email, not at start-up: it is ~20 MB of resident memory an
// instance that sends no email does not need.
import type { Transporter } from "nodemailer";
import type { Email } from "../outbox/render";

export interface Mailer {
  send(email: Email, messageId: string): Promise<void>;
  close(): void;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import("nodemailer").then(({ default: nodemailer }) => {
      const t = nodemailer.createTransport(smtpUrl, { from });
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
        // stable across retries, so a receiving server can drop a duplicate delivery
        messageId: `<${messageId}@waitlist>`,
      });
    },
    close: () => void transport?.then((t) => t.close()),
  };
}
