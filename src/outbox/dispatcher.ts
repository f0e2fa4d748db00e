// Delivers outbox rows: right after the commit in the background, and from the retry job (DESIGN §4 Events).
import { eq, sql } from "drizzle-orm";
import { now, token } from "../clock";
import { escapeHtml } from "../pages/html";
import { mailDomain, type Config } from "../config";
import type { Db } from "../db/db";
import { maskEmail, maskEmailsIn, type Logger } from "../log";
import { createMailer, isPermanentFailure, type Mailer } from "../email/send";
import { markAddress } from "../email/address-status";
import { deliver } from "../webhooks/send";
import { renderPayload, type Email } from "./render";
import { deliveryFailures } from "../http/metrics";
import { abandon, claim, HELD_NO_SMTP, hold, markFailed, markSent, storePayload, type OutboxRow } from "./store";

export interface Dispatcher {
  /** First attempt of freshly committed rows, without delaying the caller. */
  dispatch(ids: string[]): void;
  /** Claims and tries up to `limit` due rows; the retry job calls it. */
  runDue(limit?: number): Promise<number>;
  /** Attempts due rows batch after batch while full batches keep coming, for at most `ms` (a backlog clears at delivery speed). */
  catchUp(ms: number): Promise<number>;
  /** Waits for attempts in flight, at most `ms`. */
  drain(ms: number): Promise<void>;
  /**
   * Issue 48: a team member's email (an invitation to the dashboard, a password reset) sent now, not through the
   * outbox: no waitlist owns it, and its link is also shown to whoever asked (an owner), or asked for again (a reset).
   * false without SMTP_URL; throws when the server refuses it.
   */
  sendNow(email: { to: string; subject: string; text: string }): Promise<boolean>;
  close(): void;
}

const YEAR_MS = 365 * 86_400_000;

/**
 * Why an email must not go out now, checked before every attempt (issue 16): an email queued before
 * its subscriber unsubscribed (welcome, milestone, invitation, or a retry) is dropped, and so is an
 * invitation whose link was withdrawn by a rejection. Issue 45: nothing goes to a bounced or complained
 * address, and a broadcast only to a confirmed subscriber of a broadcast still being sent.
 */
async function withheldEmail(db: Db, row: OutboxRow): Promise<string | null> {
  if (!row.subscriber_id) return null;
  const [sub] = await db.rows<{ unsubscribed_at: number | null; access: string; status: string; email_status: string }>(
    sql`SELECT unsubscribed_at, access, status, email_status FROM subscribers WHERE id = ${row.subscriber_id}`,
  );
  if (!sub) return null; // rendering gives it up: the subscriber is gone
  // issue 47: the data link a subscriber asked for is an answer to them, not a mailing
  if (sub.unsubscribed_at !== null && row.topic !== "data_export") return "not sent: the subscriber unsubscribed";
  if (sub.email_status !== "ok") return `not sent: the address ${sub.email_status}`;
  if (row.topic === "invitation" && sub.access !== "invited") return "not sent: the invitation was withdrawn";
  if (row.topic === "broadcast") {
    if (sub.status !== "confirmed") return "not sent: the subscriber has not confirmed";
    const [b] = await db.rows<{ status: string }>(sql`SELECT status FROM broadcasts WHERE id = ${row.related_id}`);
    if (b?.status === "cancelled") return "not sent: the broadcast was cancelled";
  }
  return null;
}
const BATCH = 50;

const frozenPayload = async (db: Db, id: string) =>
  (await db.rows<{ payload: string | null }>(sql`SELECT payload FROM outbox WHERE id = ${id}`))[0]?.payload ?? null;

export function createDispatcher(deps: { db: Db; config: Config; log: Logger }): Dispatcher {
  const { db, config, log } = deps;
  const dkim = config.dkimDomain && config.dkimSelector && config.dkimPrivateKey ? { domainName: config.dkimDomain, keySelector: config.dkimSelector, privateKey: config.dkimPrivateKey } : null;
  const mailer: Mailer | null = config.smtpUrl ? createMailer(config.smtpUrl, config.mailFrom, { domain: mailDomain(config.mailFrom), dkim }) : null;
  const inFlight = new Set<Promise<void>>();

  async function attempt(row: OutboxRow): Promise<void> {
    const withheld = row.kind === "email" ? await withheldEmail(db, row) : null;
    if (withheld) {
      await abandon(db, row, withheld);
      return;
    }
    // a delete that committed since the claim rendered the row as its subscriber was (freezePayloads)
    const payload = (await renderPayload(db, row, config.baseUrl)) ?? (await frozenPayload(db, row.id));
    if (payload === null) {
      await abandon(db, row, "its subscriber or waitlist no longer exists");
      return;
    }
    // an email's rendering is kept with its outcome (one write an email, issue 45); a webhook's before it is sent,
    // since its signature covers the body and every retry must send the same bytes
    if (row.kind === "email") return sendEmail(row, payload);
    if (row.payload === null) await storePayload(db, row.id, payload);
    return sendWebhook(row, payload);
  }

  async function sendEmail(row: OutboxRow, payload: string) {
    const email = JSON.parse(payload) as Email;
    if (!mailer) {
      // DESIGN §3: without SMTP_URL the email is written to the log and kept in the outbox
      log.info("email not sent: SMTP_URL is not set", { outbox_id: row.id, to: maskEmail(email.to), subject: maskEmailsIn(email.subject), text: maskEmailsIn(email.text) });
      await hold(db, row.id, HELD_NO_SMTP, now() + YEAR_MS);
      return;
    }
    try {
      await mailer.send(email, row.id);
      await markSent(db, row, null, payload);
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      deliveryFailures.inc({ kind: "email" });
      const status = (err as { responseCode?: number })?.responseCode ?? null;
      log.warn("email delivery failed", { outbox_id: row.id, attempt: row.attempts, status, error: maskEmailsIn(message) });
      // issue 45: a 5xx for the address is a hard bounce: no retry, and the address gets no more email
      const bounced = isPermanentFailure(err) && row.subscriber_id !== null;
      await markFailed(db, row, message, status, { payload, ...(bounced ? { final: "bounced" } : {}) });
      if (bounced) await bounce(row);
    }
  }

  async function bounce(row: OutboxRow) {
    const { waitlists } = db.t;
    const [w] = await db.select({ id: waitlists.id, webhookEnabled: waitlists.webhookEnabled, webhookUrl: waitlists.webhookUrl }).from(waitlists).where(eq(waitlists.id, row.waitlist_id));
    if (w && (await markAddress(db, w, row.subscriber_id!, "bounced", dispatch))) log.info("address bounced", { outbox_id: row.id, subscriber_id: row.subscriber_id });
  }

  async function sendWebhook(row: OutboxRow, body: string) {
    const { waitlists } = db.t;
    const [w] = await db.select({ url: waitlists.webhookUrl, enabled: waitlists.webhookEnabled, secret: waitlists.signingSecret }).from(waitlists).where(eq(waitlists.id, row.waitlist_id));
    if (!w?.url || !w.enabled) {
      await abandon(db, row, "the webhook was switched off");
      return;
    }
    const result = await deliver(w.url, w.secret, body, { id: row.id, type: row.topic, createdAt: row.created_at }, { blockPrivate: config.webhookBlockPrivate });
    if (result.ok) {
      await markSent(db, row, result.status);
      return;
    }
    deliveryFailures.inc({ kind: "webhook" });
    log.warn("webhook delivery failed", { outbox_id: row.id, event: row.topic, attempt: row.attempts, status: result.status, error: result.error });
    await markFailed(db, row, result.error ?? "failed", result.status);
  }

  function track(rows: OutboxRow[]): Promise<void> {
    const run = Promise.all(
      rows.map((row) =>
        attempt(row).catch((err) => log.error("outbox attempt crashed", { outbox_id: row.id, error: (err as Error)?.message ?? String(err) })),
      ),
    ).then(() => undefined);
    inFlight.add(run);
    run.finally(() => inFlight.delete(run));
    return run;
  }

  function dispatch(ids: string[]) {
    if (ids.length === 0) return;
    const run = claim(db, ids).then(track, (err) => log.error("outbox claim failed", { error: (err as Error)?.message ?? String(err) }));
    inFlight.add(run);
    run.finally(() => inFlight.delete(run));
  }

  return {
    dispatch,
    async runDue(limit = 20) {
      const rows = await claim(db, null, limit);
      await track(rows);
      return rows.length;
    },
    async catchUp(ms) {
      const end = now() + ms;
      let total = 0;
      for (let n = BATCH; n === BATCH && now() < end; total += n) n = await this.runDue(BATCH);
      return total;
    },
    async sendNow(email) {
      if (!mailer) return false;
      await mailer.send({ ...email, html: `<pre style="font: 15px/1.5 system-ui, sans-serif; white-space: pre-wrap">${escapeHtml(email.text)}</pre>` }, `team.${token(20)}`);
      return true;
    },
    async drain(ms) {
      await Promise.race([Promise.all([...inFlight]), Bun.sleep(ms)]);
    },
    close() {
      mailer?.close();
    },
  };
}
