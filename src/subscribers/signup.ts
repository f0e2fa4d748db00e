// Sign-up (spec: POST .../sign-up): idempotent per email, exact positions, referral credit and fraud rules.
import { sql, type SQL } from "drizzle-orm";
import { clusteredCode, now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import { lockLine } from "./lock";
import type { Waitlist } from "../http/api";
import { badRequest } from "../http/errors";
import { isDisposable, isRoleAddress, isValidEmailSyntax, normalizeEmail } from "./email";
import { judge, referrerSignals, type FraudReason, type ReferrerSignals } from "./fraud";
import { locate } from "./geo";
import { splitMetadata } from "./metadata";
import { checkAnswers, formFieldsOf } from "../waitlists/form-fields";
import type { SignUpInput } from "./model";
import { milestonesReached } from "./milestones";
import { positionOf } from "./rank";
import { lastOfPoints, type InsertedSubscriber, type NewSubscriber } from "../db/sign-ups";
import { thankYouUrl } from "./view";
import { statementTemplate } from "../db/template";
import { email, nothing, webhookEvent, type Dispatch, type Outgoing } from "../outbox/events";
import { cappedConfirmation, resendConfirmation } from "./confirmation-caps";

/**
 * What a sign-up answer needs of a subscriber: what the INSERT answers, or the same read with its position (null once
 * invited, joined or rejected: then `final_position`, the position they held).
 */
type SignUpRow = InsertedSubscriber & { final_position?: number | null };
const signUpRow = (waitlistId: string, email: string) =>
  sql`SELECT s.id, s.status, s.points, s.referral_code, s.sign_up_token, s.final_position, ${positionOf("s")} AS position FROM subscribers s
    WHERE s.waitlist_id = ${waitlistId} AND s.email = ${email}`;

/** The new row read again at the end of a referred sign-up, whose referrer may have moved ahead of it. */
const newRow = (id: string) =>
  sql`SELECT s.id, s.status, s.points, s.referral_code, s.sign_up_token, ${sql.raw(lastOfPoints("s", "counted"))} AS position
    FROM subscribers s WHERE s.id = ${id}`;

export interface SignUpContext {
  joinedWith: "api" | "form";
  /** The request's client IP (used when metadata.client_ip is absent). */
  requestIp: string | null;
  /** Host of the HTTP Referer, the default referring_domain. */
  refererHost: string | null;
  baseUrl: string;
  dispatch: Dispatch;
}


function cleanText(value: string | null | undefined): string | null {
  const v = value?.trim();
  return v ? v : null;
}

function deliverabilityOf(email: string, validate: boolean): "unconfirmed" | "risky" | "unknown" {
  // DESIGN §4: syntax always checked; with validation on, disposable is refused; risky only while off
  if (!isValidEmailSyntax(email)) throw badRequest("email must be a valid email address");
  if (validate) {
    if (isDisposable(email)) throw badRequest("email uses a disposable email domain");
    return "unconfirmed";
  }
  return isDisposable(email) || isRoleAddress(email) ? "risky" : "unknown";
}

export async function signUp(db: Db, waitlist: Waitlist, input: SignUpInput, ctx: SignUpContext) {
  const email = normalizeEmail(input.email);
  if (!email) throw badRequest("email is required");
  const deliverability = deliverabilityOf(email, waitlist.validateEmails);
  // issue 46: the waitlist's questions, checked on every path before anything is read or written
  const answers = JSON.stringify(checkAnswers(formFieldsOf(waitlist), input.answers, ctx.joinedWith === "form"));
  const { reserved, custom } = splitMetadata(input.metadata);
  const ip = reserved.clientIp ?? ctx.requestIp;
  // spec: API sign-ups are checked for fraud only with client_ip or fingerprint; form sign-ups always
  const checkFraud = ctx.joinedWith === "form" || reserved.clientIp !== null || reserved.fingerprint !== null;
  const at = now();

  // a referred sign-up reads the referrer and the fraud counters first; any other goes straight to the
  // write, whose INSERT ... ON CONFLICT DO NOTHING tells an already-registered email apart
  const referee = { ip, fingerprint: reserved.fingerprint };
  const [existing, referrer] = reserved.referredBy ? await readBefore(db, waitlist.id, email, reserved.referredBy, referee, at) : [undefined, undefined];
  if (existing) {
    // a repeat sign-up of a pending address sends the confirmation again, under the caps (issue 16)
    if (existing.status === "pending" && waitlist.doubleOptIn) await resendConfirmation(db, waitlist, email, ctx.dispatch);
    return answer(existing, waitlist, ctx.baseUrl, false);
  }
  const reason: FraudReason | null = referrer && checkFraud ? judge(referee, referrer) : null;
  const place = locate(ip);
  const pending = waitlist.doubleOptIn;
  const base = {
    email,
    name: cleanText(input.name),
    phone: cleanText(input.phone),
    deliverability,
    metadata: custom,
    answers,
    referringDomain: reserved.referringDomain ?? ctx.refererHost,
    origin: reserved.origin,
    referrerId: referrer?.id ?? null,
    ip,
    fingerprint: reserved.fingerprint,
    fraudChecks: checkFraud,
    ...place,
    joinedWith: ctx.joinedWith,
    at,
  };

  for (let attempt = 0; ; attempt++) {
    const id = sortableToken(20);
    try {
      const out = nothing();
      const rows = pending
        ? await insertPending(db, waitlist, id, base, out)
        : await insertConfirmed(db, waitlist, id, base, referrer ? { referrerId: referrer.id, reason } : null, out);
      const row = rows[0];
      if (!row) {
        // the email was there already (or a concurrent sign-up won): answer with that subscriber
        if (pending) ctx.dispatch(out.ids); // the confirmation may have gone out again (issue 16 caps)
        const [existing] = await db.rows<SignUpRow>(signUpRow(waitlist.id, email));
        return answer(existing, waitlist, ctx.baseUrl, false);
      }
      ctx.dispatch(out.ids);
      return answer(row, waitlist, ctx.baseUrl, true);
    } catch (err) {
      // a referral code or token collided: draw new ones (astronomically rare)
      if (attempt < 3 && db.d.uniqueKey(err) !== null) continue;
      throw err;
    }
  }
}

/** One round trip for a referred sign-up: the email's subscriber (with position), and the referrer with its fraud signals. */
async function readBefore(db: Db, waitlistId: string, email: string, code: string, referee: { ip: string | null; fingerprint: string | null }, at: number) {
  const [found, referrer] = await Promise.all([
    db.rows<SignUpRow>(signUpRow(waitlistId, email)),
    db.rows<ReferrerSignals>(referrerSignals(sql`r.waitlist_id = ${waitlistId} AND r.referral_code = ${code}`, waitlistId, referee, at)),
  ]);
  return [found[0] as SignUpRow | undefined, referrer[0] as ReferrerSignals | undefined] as const;
}

/** What a sign-up knows of its subscriber before the write: the new row's values, and the time. */
type Base = Pick<
  NewSubscriber,
  "email" | "name" | "phone" | "deliverability" | "metadata" | "answers" | "referringDomain" | "origin" | "referrerId" | "ip" | "fingerprint" | "fraudChecks" | "country" | "city" | "timezone" | "joinedWith"
> & { at: number };

/** A pending subscriber (no seq, a confirmation token), or one confirmed at once with its seq and sign-up points. */
function insertSubscriber(db: Db, id: string, waitlistId: string, b: Base, confirmToken: string | null, confirmedPoints: number | null) {
  const confirmed = confirmedPoints !== null;
  return db.insertSubscriber({
    id,
    waitlistId,
    email: b.email,
    name: b.name,
    phone: b.phone,
    status: confirmed ? "confirmed" : "pending",
    deliverability: b.deliverability,
    points: confirmedPoints ?? 0,
    referralCode: clusteredCode(8),
    signUpToken: sortableToken(24),
    confirmToken,
    referrerId: b.referrerId,
    metadata: b.metadata,
    answers: b.answers,
    referringDomain: b.referringDomain,
    origin: b.origin,
    ip: b.ip,
    fingerprint: b.fingerprint,
    fraudChecks: b.fraudChecks,
    country: b.country,
    city: b.city,
    timezone: b.timezone,
    joinedWith: b.joinedWith,
    joinedAt: b.at,
    confirmedAt: confirmed ? b.at : null,
  });
}

/**
 * The row locks a sign-up's write takes first (PostgreSQL; SQLite's write lock serializes writers already):
 * the waitlist's, before `last_seq + 1`, so concurrent sign-ups take distinct numbers; then the referrer's, so
 * a delete of it either waits for this sign-up or has happened before the write reads it. Every write that
 * changes a ranked subscriber takes the waitlist's row first (lockLine), so no two writes wait on each other
 * in a circle through the rows, the rank counters and the waitlist's count. Without row locks (SQLite) there is
 * nothing to take: a statement less per sign-up.
 */
const locks = (db: Db, referrerId: string | null, waitlistId: string): SQL[] =>
  db.d.locking([lockLine(db, waitlistId), ...(referrerId ? [sql`SELECT 1 FROM subscribers WHERE id = ${referrerId}${db.d.forUpdate}`] : [])]);

/**
 * Double opt-in: the subscriber waits unranked. The confirmation email goes out with the insert, or
 * again to an address still pending, but only under the caps (issue 16), decided in this transaction.
 */
async function insertPending(db: Db, waitlist: Waitlist, id: string, b: Base, out: Outgoing) {
  const isNew = rowExists({ id });
  webhookEvent(out, waitlist, "subscriber.pending", id, isNew);
  cappedConfirmation(db.d, out, waitlist, b.email, b.at);
  // pending: nothing ranked changes; only a referrer's row needs holding (and the line's lock before it)
  const first = b.referrerId ? locks(db, b.referrerId, waitlist.id) : [];
  const [answer] = await db.write([...first, insertSubscriber(db, id, waitlist.id, b, sortableToken(32), null), ...out.statements]).then((r) => r.slice(first.length));
  return answer as unknown as SignUpRow[];
}

/**
 * One transaction: the insert takes the next confirmation number and its triggers rank and count it;
 * the referral credit and the outbox rows are conditional on the new row existing, so a concurrent
 * sign-up of the same email changes nothing here.
 */
async function insertConfirmed(
  db: Db,
  waitlist: Waitlist,
  id: string,
  b: Base,
  referral: { referrerId: string; reason: FraudReason | null } | null,
  out: Outgoing,
) {
  const isNew = rowExists({ id });
  const first = locks(db, b.referrerId, waitlist.id);
  const results = await db.write([
    ...first,
    insertSubscriber(db, id, waitlist.id, b, null, signUpPoints(waitlist)),
    ...confirmation(waitlist, id, b.at, isNew, referral, out, "subscriber.created"),
    ...(referral ? [newRow(id)] : []),
  ]);
  // the insert answers, or (referred) the new row read again at the end; nothing when the email was there already
  return (referral ? results[results.length - 1] : results[first.length]) as unknown as SignUpRow[];
}

/** The condition of what a sign-up writes besides its row: the row is there (a repeat email inserted none). */
const rowExists = statementTemplate(["id"], (v) => sql`EXISTS (SELECT 1 FROM subscribers WHERE id = ${v.id})`);

const signUpPoints = (w: Waitlist) => (w.referralEnabled ? w.signupPoints : 0);

/**
 * What makes a subscriber confirmed: status, sign-up points and the next confirmation number (the
 * row's triggers then rank it and count it), the referral credit, and the outbox rows (event,
 * welcome email). Shared by sign-up without double opt-in (inserted confirmed already) and by
 * following the confirmation link.
 */
export function confirmation(
  waitlist: Waitlist,
  id: string,
  at: number,
  onlyIf: SQL,
  referral: { referrerId: string; reason: FraudReason | null } | null,
  out: Outgoing,
  event: "subscriber.created" | "subscriber.confirmed",
): SQL[] {
  // a referrer deleted since it was read (concurrently) gets no referral: the sign-up or confirmation stands alone
  const creditIf = referral ? sql`${onlyIf} AND EXISTS (SELECT 1 FROM subscribers WHERE id = ${referral.referrerId})` : onlyIf;
  webhookEvent(out, waitlist, event, id, onlyIf);
  if (referral?.reason === null) webhookEvent(out, waitlist, "referral.credited", id, creditIf, { relatedId: referral.referrerId });
  if (waitlist.welcomeEnabled) email(out, waitlist, "welcome", id, onlyIf);
  const promote =
    event === "subscriber.confirmed"
      ? [
          sql`UPDATE subscribers SET status = 'confirmed', points = ${signUpPoints(waitlist)}, deliverability = 'confirmed',
              seq = (SELECT last_seq + 1 FROM waitlists WHERE id = ${waitlist.id}), confirmed_at = ${at}, updated_at = ${at}
            WHERE id = ${id} AND ${onlyIf}`,
        ]
      : [];
  const credit = referral ? creditReferral(waitlist, id, referral.referrerId, referral.reason, at, creditIf, out) : [];
  return [...promote, ...credit, ...out.statements];
}

/** Records the referral; when credited, moves the referrer up by referral_points (only while the program is on) and rewards milestones it reaches. */
function creditReferral(waitlist: Waitlist, refereeId: string, referrerId: string, reason: FraudReason | null, at: number, onlyIf: SQL, out: Outgoing): SQL[] {
  const credited = reason === null;
  const points = credited && waitlist.referralEnabled ? waitlist.referralPoints : 0;
  const record = sql`INSERT INTO referrals (id, waitlist_id, referrer_id, referee_id, credited, reason, points, created_at)
    SELECT ${sortableToken(20)}, ${waitlist.id}, ${referrerId}, ${refereeId}, ${credited}, ${reason}, ${points}, ${at} WHERE ${onlyIf}`;
  if (!credited) return [record];
  return [
    record,
    sql`UPDATE subscribers SET points = points + ${points}, referral_count = referral_count + 1, updated_at = ${at} WHERE id = ${referrerId} AND ${onlyIf}`,
    ...milestonesReached(waitlist, referrerId, at, onlyIf, out),
  ];
}

export const MESSAGES = {
  newPending: "Almost there: check your inbox and confirm your email to join the waitlist.",
  newConfirmed: "You're on the waitlist!",
  repeatPending: "This email is already signed up and waiting for confirmation. Check your inbox for the confirmation link.",
  repeatConfirmed: "This email is already on the waitlist.",
};

/** spec: the sign-up table. Pending answers carry only message and redirect; a repeat omits points. */
function answer(row: SignUpRow, waitlist: Waitlist, baseUrl: string, isNew: boolean) {
  if (row.status === "pending") {
    return {
      success: true,
      is_new_sign_up: isNew,
      is_pending_confirmation: true,
      message: isNew ? MESSAGES.newPending : MESSAGES.repeatPending,
      redirect_url: `${baseUrl}/pending/${waitlist.key}`,
    };
  }
  return {
    success: true,
    is_new_sign_up: isNew,
    is_pending_confirmation: false,
    message: isNew ? MESSAGES.newConfirmed : MESSAGES.repeatConfirmed,
    position: Number(row.position ?? row.final_position),
    inflated_position: Number(row.position ?? row.final_position) + waitlist.positionOffset,
    ...(isNew ? { points: Number(row.points) } : {}),
    referral_code: row.referral_code,
    sign_up_token: row.sign_up_token,
    redirect_url: thankYouUrl(baseUrl, row.sign_up_token),
  };
}
