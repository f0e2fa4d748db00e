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
import { formatBody } from "../webhooks/chat";
import { HELD_DISABLED, signingSecrets, type Endpoint } from "../webhooks/endpoints";
import { logEntry } from "../webhooks/log";
import { renderPayload, type Email } from "./render";
import { deliveryFailures } from "../http/metrics";
import { abandon, claim, HELD_NO_SMTP, hold, holdForEndpoint, markFailed, markSent, markSkipped, SCHEDULE_MS, storePayload, type OutboxRow, type Which } from "./store";

export interface Dispatcher {
  /** First attempt of freshly committed events' rows, without delaying the caller. */
  dispatch(eventIds: string[]): void;
  /** An attempt now of these rows (a webhook's retry or replay, issue 49), without delaying the caller. */
  dispatchRows(rowIds: string[]): void;
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
/** Issue 49: an endpoint failing this long (every attempt since its last delivery) is disabled. */
export const FAILING_DISABLES_MS = 5 * 86_400_000;

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
      const reason = "its subscriber or waitlist no longer exists";
      const logged = row.kind === "webhook" ? [logEntry(row, "failed", { status: null, ms: null, response: null, error: reason })] : [];
      await abandon(db, row, reason, now(), logged);
      return;
    }
    // an email's rendering is kept with its outcome (one write an email, issue 45); a webhook's before it is sent,
    // since its signature covers the body and every retry must send the same bytes
    if (row.kind === "email") return sendEmail(row, payload);
    if (row.payload === null && (await storePayload(db, row.id, payload)).changed === 0) {
      // rendered meanwhile while it waited for an earlier event (renderWaiting): that rendering is the one kept
      return sendWebhook(row, (await frozenPayload(db, row.id)) ?? payload);
    }
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
    const [w] = await db.select({ id: waitlists.id, webhookEndpoints: waitlists.webhookEndpoints }).from(waitlists).where(eq(waitlists.id, row.waitlist_id));
    if (w && (await markAddress(db, w, row.subscriber_id!, "bounced", dispatch))) log.info("address bounced", { outbox_id: row.id, subscriber_id: row.subscriber_id });
  }

  async function sendWebhook(row: OutboxRow, json: string) {
    const { webhookEndpoints: e } = db.t;
    const [endpoint] = row.endpoint_id ? await db.select().from(e).where(eq(e.id, row.endpoint_id)) : [];
    if (!endpoint) {
      await abandon(db, row, "its webhook endpoint was deleted");
      return;
    }
    const at = now();
    if (!endpoint.enabled) return withheld(row, at);
    const result = await deliver(
      { url: endpoint.url, secrets: signingSecrets(endpoint, at), legacy: Boolean(endpoint.legacySignature) },
      formatBody(endpoint.format, json),
      { id: row.event_id ?? row.id, type: row.topic, createdAt: row.created_at },
      { blockPrivate: config.webhookBlockPrivate },
    );
    const attempt = { status: result.status, ms: result.ms, response: result.response, error: result.error };
    if (result.ok) {
      await markSent(db, row, result.status, null, now(), [
        logEntry(row, "delivered", attempt),
        sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpoint.id} AND failing_since IS NOT NULL`,
      ]);
    } else {
      deliveryFailures.inc({ kind: "webhook" });
      log.warn("webhook delivery failed", { outbox_id: row.id, endpoint_id: endpoint.id, event: row.topic, attempt: row.attempts, status: result.status, error: result.error });
      await markFailed(db, row, result.error ?? "failed", result.status, {
        also: (retrying) => [
          logEntry(row, retrying ? "retrying" : "failed", attempt),
          sql`UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ${at}) WHERE id = ${endpoint.id}`,
        ],
      });
      await disableIfFailing(endpoint, at);
    }
    // the subscriber's next event for this endpoint waited for this attempt (store.ts claim)
    if (row.subscriber_id) next({ endpoint: endpoint.id, subscriber: row.subscriber_id });
  }

  /**
   * An event whose endpoint is disabled: skipped (and logged) at its first attempt; a retry waits for the endpoint
   * to be enabled again (endpoints.ts releases it) until its schedule would have ended, then fails.
   */
  async function withheld(row: OutboxRow, at: number) {
    const none = { status: null, ms: null, response: null };
    if (row.attempts <= 1) {
      await markSkipped(db, row, [logEntry(row, "skipped", { ...none, error: "the endpoint is disabled" }, at)]);
    } else if (at < Number(row.created_at) + SCHEDULE_MS) {
      await holdForEndpoint(db, row, HELD_DISABLED);
    } else {
      const error = "the endpoint stayed disabled until the event's retries ended";
      await abandon(db, row, error, at, [logEntry(row, "failed", { ...none, error }, at)]);
    }
    if (row.subscriber_id && row.endpoint_id) next({ endpoint: row.endpoint_id, subscriber: row.subscriber_id });
  }

  /** After 5 days of failures, the endpoint is disabled and the account's owners are told by email. */
  async function disableIfFailing(endpoint: Endpoint, at: number) {
    const reason = "disabled after failing for 5 days";
    const [off] = await db.rows<{ id: string }>(
      sql`UPDATE webhook_endpoints SET enabled = FALSE, disabled_reason = ${reason}, updated_at = ${at}
        WHERE id = ${endpoint.id} AND enabled AND failing_since <= ${at - FAILING_DISABLES_MS} RETURNING id`,
    );
    if (!off) return;
    log.warn("webhook endpoint disabled", { endpoint_id: endpoint.id, reason });
    const owners = await db.rows<{ email: string; name: string }>(
      sql`SELECT u.email, w.name FROM users u JOIN waitlists w ON w.account_id = u.account_id WHERE w.id = ${endpoint.waitlistId} AND u.role = 'owner'`,
    );
    for (const o of owners) {
      await this_.sendNow({
        to: o.email,
        subject: `Webhook endpoint disabled: ${o.name}`,
        text:
          `Every delivery to the webhook endpoint ${endpoint.url} of the ${o.name} waitlist has failed for 5 days, so it is now disabled.\n\n` +
          `Events from now on are kept as skipped in its delivery log. Once the receiver works again, enable the endpoint ` +
          `(${config.baseUrl}/dashboard) and replay what it missed.`,
      }).catch((err) => log.warn("could not email an owner about a disabled endpoint", { endpoint_id: endpoint.id, error: (err as Error)?.message ?? String(err) }));
    }
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

  function next(which: Which) {
    const run = claim(db, which).then(track, (err) => log.error("outbox claim failed", { error: (err as Error)?.message ?? String(err) }));
    inFlight.add(run);
    run.finally(() => inFlight.delete(run));
  }

  /**
   * Webhook rows of just-committed events that wait for an earlier event of their subscriber (store.ts claim) are
   * rendered now, as their event left the data, not as it is when their turn comes.
   */
  async function renderWaiting(eventIds: string[]) {
    const waiting = await db.rows<OutboxRow>(
      sql`SELECT * FROM outbox WHERE event_id IN ${eventIds} AND kind = 'webhook' AND status = 'pending' AND payload IS NULL AND locked_until IS NULL`,
    );
    for (const row of waiting) {
      const payload = await renderPayload(db, row, config.baseUrl);
      if (payload !== null) await storePayload(db, row.id, payload);
    }
  }

  function dispatch(eventIds: string[]) {
    if (eventIds.length === 0) return;
    const run = claim(db, { events: eventIds }).then(
      async (rows) => {
        const attempts = track(rows);
        // nothing claimed, or webhooks among what was: some of the events' rows may be waiting
        if (rows.length === 0 || rows.some((r) => r.kind === "webhook")) {
          await renderWaiting(eventIds).catch((err) => log.error("outbox render failed", { error: (err as Error)?.message ?? String(err) }));
        }
        await attempts;
      },
      (err) => log.error("outbox claim failed", { error: (err as Error)?.message ?? String(err) }),
    );
    inFlight.add(run);
    run.finally(() => inFlight.delete(run));
  }

  const this_: Dispatcher = {
    dispatch,
    dispatchRows(rowIds) {
      if (rowIds.length) next({ rows: rowIds });
    },
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
  return this_;
}
