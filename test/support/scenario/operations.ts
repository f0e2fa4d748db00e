// The counters scenario's operations through the API. Each picks its targets, applies the rules to the model at once,
// and returns the HTTP calls with what their answers must be. Within a batch, operations run concurrently: none may
// touch (x) a subscriber another one touches or credits (s); credits to one referrer commute and may share it.
// Whatever depends on the line's order at the moment (invites, rejects) and whatever a fraud rule judges runs alone
// (./choice).
import { confirm, newSub, positionIn, remove, synced, type Sub, type Wl } from "./model";
import { key, note, random, s, SEED, wls } from "./run";

const REQUEST_IP = "127.0.0.1"; // what the server stores as ip_address for a sign-up without metadata.client_ip
const POOL_IPS = ["203.0.113.7", "198.51.100.9"]; // documentation addresses: data only, never contacted
const POOL_FPS = ["fp-a", "fp-b"];
const TAGS = ["vip", "beta", "press", "friends", "ambassador"];

export const chance = (p: number) => random() < p;
export const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
export const pick = <T>(xs: T[]): T | undefined => (xs.length ? xs[Math.floor(random() * xs.length)] : undefined);

let emailCount = 0;
let freshCount = 0;

export interface Op {
  desc: string;
  touched: string[];
  run: () => Promise<void>;
}

export class Batch {
  x = new Set<string>();
  s = new Set<string>();
  /** Tags created during this batch: another operation of it cannot know whether they exist yet. */
  fresh = new Set<string>();
  constructor(readonly serial: boolean) {}
  admits(x: string[], sh: string[]) {
    return x.every((k) => !this.x.has(k) && !this.s.has(k)) && sh.every((k) => !this.x.has(k));
  }
  take(x: string[], sh: string[]) {
    for (const k of x) this.x.add(k);
    for (const k of sh) this.s.add(k);
  }
}

export const enc = encodeURIComponent;
const nextEmail = () => `c${++emailCount}-s${SEED}@example.com`;
const variant = (email: string) => (chance(0.2) ? email.toUpperCase() : chance(0.1) ? `  ${email} ` : email);

/**
 * A referrer: often one of the two oldest, or the one with most referrals (so milestones and velocity are reached).
 * Choices never depend on the order the server gave concurrent confirmations, so a seed replays the same operations
 * (but for "invite the next N", which follows the line).
 */
function chooseReferrer(w: Wl, b: Batch, top = 0.2): Sub | undefined {
  const confirmed = synced(w, (x) => x.status === "confirmed" && b.admits([], [x.email]));
  if (chance(top)) return [...confirmed].sort((a, c) => c.referralCount - a.referralCount)[0];
  return chance(0.5) ? pick(confirmed.slice(0, 2)) : pick(confirmed);
}

export function signUp(w: Wl, b: Batch, fraud = false): Op | null {
  const email = nextEmail();
  let code: string | undefined;
  let owner: Sub | undefined;
  let kind = "no code";
  const roll = random();
  if (fraud || roll < 0.5) {
    owner = chooseReferrer(w, b, fraud ? 0.5 : 0.2);
    if (owner) [code, kind] = [owner.code, `code of ${owner.email}`];
  } else if (roll < 0.55) [code, kind] = [`NOPE${int(1, 99)}`, "unknown code"];
  else if (roll < 0.6) {
    owner = pick(synced(w, (x) => x.status === "pending" && b.admits([], [x.email])));
    if (owner) [code, kind] = [owner.code, `code of pending ${owner.email}`];
  } else if (roll < 0.64) {
    owner = pick(synced(pick(wls.filter((o) => o !== w))!, (x) => b.admits([], [x.email])));
    if (owner) [code, kind] = [owner.code, `code of ${owner.email} of another waitlist`];
  } else if (roll < 0.67) {
    const gone = pick(w.gone.filter((x) => x.code));
    if (gone) [code, kind] = [gone.code, `code of deleted ${gone.email}`];
  }
  if (fraud && !owner) return null;
  const referrer = owner && w.subs.get(owner.email)?.status === "confirmed" ? owner : undefined;
  // client_ip or fingerprint turns the fraud rules on (spec): only where nothing is judged, or alone
  let clientIp: string | undefined;
  let fingerprint: string | undefined;
  if (fraud) {
    // a fresh address (IPv6 documentation range) passes the IP rules; a shared one or the referrer's may not
    const roll = random();
    if (roll < 0.4) clientIp = `2001:db8::${(++freshCount).toString(16)}`;
    else if (roll < 0.75) clientIp = POOL_IPS.includes(referrer!.ip) && chance(0.3) ? referrer!.ip : pick(POOL_IPS);
    if (!clientIp || chance(0.25)) fingerprint = referrer!.fingerprint && chance(0.3) ? referrer!.fingerprint : chance(0.5) ? `fp-${++freshCount}` : pick(POOL_FPS);
  } else if (!referrer && chance(0.2)) {
    // a shared address, or that of a referee still waiting to confirm (judged then: only earlier sign-ups count)
    clientIp = (chance(0.5) ? pick(synced(w, (y) => y.status === "pending" && y.fraudChecks && y.referrer !== null))?.ip : undefined) ?? pick(POOL_IPS);
  }
  const keys = owner ? [owner.email] : [];
  if (!b.admits([email], keys)) return null;
  b.take([email], keys);

  const x = newSub(email, clientIp ?? REQUEST_IP, fingerprint ?? null, clientIp !== undefined || fingerprint !== undefined);
  if (referrer) [x.referredBy, x.referrer] = [code!, referrer.email];
  w.subs.set(email, x);
  if (!w.doubleOptIn) confirm(w, x);
  const expectPosition = b.serial && !w.doubleOptIn ? positionIn(w, email) : undefined;
  const expectPoints = x.points;
  const metadata = { ...(code ? { referred_by: code } : {}), ...(clientIp ? { client_ip: clientIp } : {}), ...(fingerprint ? { fingerprint } : {}) };
  const desc = `${w.label} sign-up ${email} (${kind}${clientIp ? `, client_ip ${clientIp}` : ""}${fingerprint ? `, fingerprint ${fingerprint}` : ""})${x.referral ? ` -> referral ${x.referral.reason ?? "credited"}` : ""}`;
  const where = `${w.label} ${email} sign-up answer`;
  const pending = w.doubleOptIn;
  const pair = !b.serial && !fraud && chance(0.12);
  return {
    desc: pair ? `${desc}, twice at once` : desc,
    touched: [email, ...keys],
    async run() {
      const send = () => s.request("POST", `${w.path}/sign-up`, { key, body: { email: variant(email), ...(Object.keys(metadata).length ? { metadata } : {}) } });
      const answers = await Promise.all(pair ? [send(), send()] : [send()]);
      for (const r of answers) note(where, "status", 200, r.status);
      // two sign-ups of one email at once make one subscriber: exactly one answer is the new one
      note(where, "is_new_sign_up (count of true)", 1, answers.filter((r) => r.body?.is_new_sign_up === true).length);
      const r = answers.find((a) => a.body?.is_new_sign_up) ?? answers[0];
      for (const a of answers) note(where, "is_pending_confirmation", pending, a.body?.is_pending_confirmation);
      if (pending) note(where, "fields of a pending answer", [], ["position", "points", "referral_code", "sign_up_token"].filter((k) => k in (r.body ?? {})));
      else {
        note(where, "points", expectPoints, r.body?.points);
        if (expectPosition !== undefined) {
          note(where, "position", expectPosition, r.body?.position);
          note(where, "inflated_position", expectPosition! + w.offset, r.body?.inflated_position);
        }
      }
    },
  };
}

/** The same email again: already registered (or pending), nothing changes; the answer omits points (spec). */
export function repeatSignUp(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => b.admits([y.email], [])));
  if (!x) return null;
  const other = chance(0.3) ? pick(synced(w, (y) => y !== x && b.admits([], [y.email]))) : undefined;
  const code = other?.code ?? (chance(0.3) ? x.code : undefined);
  const keys = other ? [other.email] : [];
  b.take([x.email], keys);
  const where = `${w.label} ${x.email} repeat sign-up answer`;
  const position = b.serial && x.status === "confirmed" ? (x.access === "waiting" ? positionIn(w, x.email) : x.finalPosition) : undefined;
  const expected = x.status === "pending" ? { pending: true } : { pending: false, code: x.code, token: x.signUpToken };
  return {
    desc: `${w.label} repeat sign-up ${x.email}${code ? ` with ${code === x.code ? "its own code" : `code of ${other!.email}`}` : ""}`,
    touched: [x.email, ...keys],
    async run() {
      const r = await s.request("POST", `${w.path}/sign-up`, { key, body: { email: variant(x.email), ...(code ? { metadata: { referred_by: code } } : {}) } });
      note(where, "status", 200, r.status);
      note(where, "is_new_sign_up", false, r.body?.is_new_sign_up);
      note(where, "is_pending_confirmation", expected.pending, r.body?.is_pending_confirmation);
      note(where, "has points", false, "points" in (r.body ?? {}));
      if (!expected.pending) note(where, "referral_code, sign_up_token", [expected.code, expected.token], [r.body?.referral_code, r.body?.sign_up_token]);
      if (position !== undefined) note(where, "position", position, r.body?.position);
    },
  };
}

/** The emailed link's POST: confirmed, ranked last among equal points, the referrer credited now (spec). */
export function confirmOne(w: Wl, b: Batch, fraud = false): Op | null {
  const x = pick(synced(w, (y) => y.confirmToken !== null && (y.status === "pending" ? fraud === (y.fraudChecks && y.referrer !== null) : !fraud)));
  if (!x) return null;
  const keys = x.status === "pending" && x.referrer ? [x.referrer] : [];
  if (!b.admits([x.email], keys)) return null;
  b.take([x.email], keys);
  const again = x.status === "confirmed";
  if (!again) confirm(w, x);
  const where = `${w.label} ${x.email} confirmation`;
  return {
    desc: `${w.label} confirm ${x.email}${again ? " again" : ""}${x.referral && !again ? ` -> referral ${x.referral.reason ?? "credited"}` : ""}`,
    touched: [x.email, ...keys],
    async run() {
      const r = await s.request("POST", `/confirm/${x.confirmToken}`);
      note(where, "status", 303, r.status);
      note(where, "redirect", true, r.headers.get("location")?.endsWith(`/t/${x.signUpToken}`));
    },
  };
}

/** PUT points: re-ranks at once; a pending subscriber has no points yet (409, docs/decisions.md). */
export function setPoints(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => b.admits([y.email], []) && (y.status === "confirmed" || chance(0.15))));
  if (!x) return null;
  b.take([x.email], []);
  // few distinct values, so ties (decided by confirmation order) are common
  const points = chance(0.7) ? pick([0, 10, 20, 30, 50, 80, 110, -10])! : x.points + int(-40, 40);
  const pending = x.status === "pending";
  if (!pending) x.points = points;
  const where = `${w.label} ${x.email} PUT points ${points}`;
  return {
    desc: `${w.label} PUT ${x.email} points ${points}${pending ? " (pending: 409)" : ""}`,
    touched: [x.email],
    async run() {
      const r = await s.request("PUT", `${w.path}/subscribers/${enc(chance(0.5) ? x.email : x.id)}`, { key, body: { points } });
      note(where, "status", pending ? 409 : 200, r.status);
      if (!pending) note(where, "answer points", points, r.body?.data?.subscriber?.points);
    },
  };
}

export const tagNames = (v: any) => (v?.tags ?? []).map((t: any) => String(t.name).toLowerCase()).sort();

export function tagOne(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => b.admits([y.email], [])));
  if (!x) return null;
  b.take([x.email], []);
  const names = [...new Set([pick(TAGS)!, ...(chance(0.3) ? [pick(TAGS)!] : [])])];
  for (const n of names) {
    if (!w.tags.has(n)) b.fresh.add(n);
    w.tags.add(n);
    x.tags.add(n);
  }
  const expected = [...x.tags].sort();
  const where = `${w.label} ${x.email} tag ${names.join(",")}`;
  return {
    desc: `${w.label} tag ${x.email} with ${names.join(", ")}`,
    touched: [x.email],
    async run() {
      const r = await s.request("POST", `${w.path}/subscribers/${enc(x.email)}/tags`, { key, body: { tags: names.map((n) => (chance(0.3) ? n.toUpperCase() : n)) } });
      note(where, "status", 200, r.status);
      note(where, "answer tags", expected, tagNames(r.body?.data?.subscriber));
    },
  };
}

export function untagOne(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => b.admits([y.email], [])));
  const known = [...w.tags].filter((n) => !b.fresh.has(n));
  if (!x || (!known.length && !chance(0.1))) return null;
  b.take([x.email], []);
  const mine = [...x.tags].filter((n) => !b.fresh.has(n));
  const name = !known.length || chance(0.1) ? "no-such-tag" : chance(0.7) && mine.length ? pick(mine)! : pick(known)!;
  const exists = w.tags.has(name);
  x.tags.delete(name);
  const where = `${w.label} ${x.email} untag ${name}`;
  return {
    desc: `${w.label} untag ${x.email} ${name}`,
    touched: [x.email],
    async run() {
      const r = await s.request("DELETE", `${w.path}/subscribers/${enc(x.email)}/tags/${enc(name)}`, { key });
      note(where, "status", exists ? 200 : 404, r.status);
    },
  };
}

/** DELETE (by email or id) or the status page's leave link (the same delete); a second delete is 404. */
export function deleteOne(w: Wl, b: Batch): Op | null {
  if (chance(0.06)) {
    const g = pick(w.gone);
    if (!g || !b.admits([g.email], [])) return null;
    b.take([g.email], []);
    return {
      desc: `${w.label} delete ${g.email} again`,
      touched: [],
      async run() {
        note(`${w.label} ${g.email} second delete`, "status", 404, (await s.request("DELETE", `${w.path}/subscribers/${enc(g.email)}`, { key })).status);
      },
    };
  }
  const x = pick(synced(w));
  if (!x) return null;
  // a take-back does not commute with a credit to the same referrer: a milestone may be reached in between (and
  // is never revoked), so the referrer is held as if touched
  const keys = x.referral?.credited && w.subs.has(x.referral.referrer) ? [x.referral.referrer] : [];
  if (!b.admits([x.email, ...keys], [])) return null;
  b.take([x.email, ...keys], []);
  remove(w, x);
  const how = chance(0.25) ? "leave" : chance(0.5) ? "id" : "email";
  return {
    desc: `${w.label} delete ${x.email} (${how})`,
    touched: [x.email, ...keys],
    async run() {
      const r =
        how === "leave"
          ? await s.request("POST", `/t/${x.signUpToken}/leave`)
          : await s.request("DELETE", `${w.path}/subscribers/${enc(how === "id" ? x.id : x.email)}`, { key });
      note(`${w.label} ${x.email} delete (${how})`, "status", 200, r.status);
    },
  };
}

/** The invite link's POST: joined once; used or withdrawn links answer 410 (docs/decisions.md, Launch day). */
export function joinOne(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => y.inviteToken !== null && b.admits([y.email], [])));
  if (!x) return null;
  b.take([x.email], []);
  const joins = x.access === "invited";
  if (joins) x.access = "joined";
  return {
    desc: `${w.label} join ${x.email} (${joins ? "invited" : `${x.access}: 410`})`,
    touched: [x.email],
    async run() {
      note(`${w.label} ${x.email} invite link`, "status", joins ? 200 : 410, (await s.request("POST", `/i/${x.inviteToken}`)).status);
    },
  };
}

/** The one-click unsubscribe link: no more email, the place in line is kept. */
export function unsubscribeOne(w: Wl, b: Batch): Op | null {
  const x = pick(synced(w, (y) => b.admits([y.email], [])));
  if (!x) return null;
  b.take([x.email], []);
  x.unsubscribed = true;
  return {
    desc: `${w.label} unsubscribe ${x.email}`,
    touched: [x.email],
    async run() {
      note(`${w.label} ${x.email} unsubscribe`, "status", 200, (await s.request("POST", `/u/${x.signUpToken}`)).status);
    },
  };
}

/** spec: a visitor is counted once per 24 hours; a repeat is 200 with success false. */
export function logView(w: Wl, b: Batch): Op | null {
  const visitor = `visitor-${int(1, 12)}`;
  const k = `${w.label}:${visitor}`;
  if (!b.admits([k], [])) return null;
  b.take([k], []);
  const counts = !w.visitors.has(visitor);
  w.visitors.add(visitor);
  return {
    desc: `${w.label} view by ${visitor}${counts ? "" : " (repeat)"}`,
    touched: [],
    async run() {
      const r = await s.request("POST", `${w.path}/log-view`, { key, body: { visitor_id: visitor } });
      note(`${w.label} view ${visitor}`, "status, success", [200, counts], [r.status, r.body?.success]);
    },
  };
}
