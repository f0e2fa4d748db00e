// Sends emails over SMTP_URL with nodemailer (smtp:// upgrades with STARTTLS when offered, smtps:// is TLS).
import nodemailer from "nodemailer";
import type { Email } from "../outbox/render";

export interface Mailer {
  send(email: Email, messageId: string): Promise<void>;
  close(): void;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl, { from });
  for (const [k, v] of Object.entries({ connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 })) (transport.options as any)[k] = v;
  return {
    async send(email, messageId) {
      await transport.sendMail({
        from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        // stable across retries, so a receiving server can drop a duplicate delivery
        messageId: `<${messageId}@waitlist>`,
      });
    },
    close: () => transport.close(),
  };
}
