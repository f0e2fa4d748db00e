// Every counter and every position against a recount, on either engine (TEST_ENGINE): one seeded, randomized scenario
// over real HTTP (sign-ups, referred or repeated or racing, confirmations, point changes, tag changes, deletes,
// invites, joins, rejects, unsubscribes, views, settings), partly in concurrent batches. After every step the API's
// positions, points, referral counts, totals, tag counts and daily counts, and the counter tables behind them, are
// compared with a model of the rules (spec; DESIGN §4; docs/decisions.md) and with the rows. SCENARIO_SEED=n replays
// the same operations (SCENARIO_DUMP=1 prints them) until the server numbers one batch's concurrent confirmations in
// another order, which is its free choice: from then on "invite the next N" may pick others among equal points.
import { afterAll, beforeAll, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openDatabase, type Db } from "../src/db/open";
import { engine, startServer, type TestServer } from "./support/server";

// a fixed default seed: every run (both passes, CI) plays the same scenario; SCENARIO_SEED=n plays another
const SEED = process.env.SCENARIO_SEED ? Number(process.env.SCENARIO_SEED) : 20791;
const STEPS = Number(process.env.SCENARIO_STEPS ?? 120);
const REQUEST_IP = "127.0.0.1"; // what the server stores as ip_address for a sign-up without metadata.client_ip
const POOL_IPS = ["203.0.113.7", "198.51.100.9"]; // documentation addresses: data only, never contacted
const POOL_FPS = ["fp-a", "fp-b"];
const TAGS = ["vip", "beta", "press", "friends", "ambassador"];

/** mulberry32: a small seeded PRNG, so a failing seed can be replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const chance = (p: number) => random() < p;
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
const pick = <T>(xs: T[]): T | undefined => (xs.length ? xs[Math.floor(random() * xs.length)] : undefined);
/** The checks' own choices (which pages, which single reads), so that they never change the scenario. */
const looks = rng(SEED ^ 0x5bd1e995);
const lookPick = <T>(xs: T[]): T | undefined => (xs.length ? xs[Math.floor(looks() * xs.length)] : undefined);

type Access = "waiting" | "invited" | "joined" | "rejected";
type Reason = "self_referral" | "duplicate_fingerprint" | "duplicate_ip" | "velocity";

/** A subscriber as the rules make it. Ids, codes and tokens are opaque: read from the rows after each step. */
interface Sub {
  email: string;
  status: "pending" | "confirmed";
  access: Access;
  points: number;
  /** Order of confirmation. Among one batch's concurrent confirmations any order is right: it is read back from the rows. */
  seq: number | null;
  seqUnknown: boolean;
  referralCount: number;
  /**
   * The code given at sign-up when it named a confirmed subscriber of this waitlist (docs/decisions.md: an unknown
   * code is stored as null). Neither the spec nor DESIGN says what it shows once that referrer is deleted: the code
   * stays as given, as the rows keep it.
   */
  referredBy: string | null;
  /** The referrer (email) while it exists: deleting it cuts the link. */
  referrer: string | null;
  /** The referral this subscriber gave its referrer: credited, or withheld for a fraud reason (DESIGN §4). */
  referral: { referrer: string; credited: boolean; reason: Reason | null; points: number } | null;
  finalPosition: number | null;
  unsubscribed: boolean;
  tags: Set<string>;
  ip: string;
  fingerprint: string | null;
  fraudChecks: boolean;
  /** Order of sign-up in the model (a judged referee signs up alone, so it is exact for every rule that needs it). */
  born: number;
  awarded: Set<number>;
  id: string;
  code: string;
  signUpToken: string;
  confirmToken: string | null;
  inviteToken: string | null;
}

interface Wl {
  label: string;
  id: string;
  key: string;
  path: string;
  doubleOptIn: boolean;
  referralEnabled: boolean;
  signupPoints: number;
  referralPoints: number;
  offset: number;
  milestones: { referrals: number; reward: string; tag: string | null }[];
  subs: Map<string, Sub>;
  gone: Sub[];
  visitors: Set<string>;
  /** Confirmations ever: the daily counts are a history, not taken back by a delete (docs/decisions.md). */
  confirmations: number;
  maxSeq: number;
  tags: Set<string>;
}

let born = 0;
const UNKNOWN_SEQ = Number.MAX_SAFE_INTEGER; // the newest confirmation: last among equal points until its seq is read

/** DESIGN §4: points descending, then order of confirmation; only confirmed subscribers still waiting are in line. */
const lineOf = (w: Wl) =>
  [...w.subs.values()].filter((x) => x.status === "confirmed" && x.access === "waiting").sort((a, b) => b.points - a.points || a.seq! - b.seq!);
const positionIn = (w: Wl, email: string) => lineOf(w).findIndex((x) => x.email === email) + 1 || null;
const signupPoints = (w: Wl) => (w.referralEnabled ? w.signupPoints : 0);
const synced = (w: Wl, f: (x: Sub) => boolean = () => true) => [...w.subs.values()].filter((x) => x.id !== "" && f(x));

function newSub(email: string, ip: string, fingerprint: string | null, fraudChecks: boolean): Sub {
  return {
    email, status: "pending", access: "waiting", points: 0, seq: null, seqUnknown: false, referralCount: 0, referredBy: null, referrer: null,
    referral: null, finalPosition: null, unsubscribed: false, tags: new Set(), ip, fingerprint, fraudChecks, born: ++born, awarded: new Set(),
    id: "", code: "", signUpToken: "", confirmToken: null, inviteToken: null,
  };
}

/** DESIGN §4 fraud rules, in docs/decisions.md's order; the referee itself is left out of the counts. */
function judge(w: Wl, referee: Sub, referrer: Sub): Reason | null {
  if (!referee.fraudChecks) return null;
  if (referee.ip === referrer.ip || (referee.fingerprint !== null && referee.fingerprint === referrer.fingerprint)) return "self_referral";
  const others = [...w.subs.values()].filter((x) => x.email !== referee.email);
  if (referee.fingerprint !== null && others.some((x) => x.fingerprint === referee.fingerprint)) return "duplicate_fingerprint";
  // DESIGN §4: "more than 3 sign-ups from one IP in 24 h ... duplicate_ip for the 4th onwards": earlier sign-ups count
  if (others.filter((x) => x.ip === referee.ip && x.born < referee.born).length >= 3) return "duplicate_ip";
  // the whole run is well inside the 10-minute window
  if (others.filter((x) => x.referral?.referrer === referrer.email && x.referral.credited).length >= 10) return "velocity";
  return null;
}

/** A referral: counted while the program is off too, with 0 points; milestones are reached once (docs/decisions.md). */
function credit(w: Wl, referee: Sub, referrer: Sub) {
  const reason = judge(w, referee, referrer);
  const points = reason === null && w.referralEnabled ? w.referralPoints : 0;
  referee.referral = { referrer: referrer.email, credited: reason === null, reason, points };
  count(`referral ${reason ?? "credited"}`);
  if (reason !== null) return;
  referrer.points += points;
  referrer.referralCount += 1;
  for (const m of w.milestones) {
    if (referrer.referralCount < m.referrals || referrer.awarded.has(m.referrals)) continue;
    referrer.awarded.add(m.referrals);
    count(`milestone ${m.referrals}`);
    if (m.tag) {
      if (!w.tags.has(m.tag.toLowerCase())) batch.fresh.add(m.tag.toLowerCase());
      w.tags.add(m.tag.toLowerCase());
      referrer.tags.add(m.tag.toLowerCase());
    }
  }
}

function confirm(w: Wl, x: Sub) {
  x.status = "confirmed";
  x.points = signupPoints(w);
  x.seq = UNKNOWN_SEQ;
  x.seqUnknown = true;
  w.confirmations++;
  const r = x.referrer ? w.subs.get(x.referrer) : undefined;
  if (r && r.status === "confirmed") credit(w, x, r);
}

/** DESIGN §4: the referrer loses that referral's points and one referral_count; links to the deleted one are cut. */
function remove(w: Wl, x: Sub) {
  const r = x.referral?.credited ? w.subs.get(x.referral.referrer) : undefined;
  if (r) {
    r.points -= x.referral!.points;
    r.referralCount -= 1;
  }
  for (const o of w.subs.values()) {
    if (o.referrer === x.email) o.referrer = null;
    if (o.referral?.referrer === x.email) o.referral = null; // its referrals rows go with it
  }
  w.subs.delete(x.email);
  w.gone.push(x);
}

// ---------------------------------------------------------------------------------------------------------------
let s: TestServer;
let db: Db;
let key: string;
const wls: Wl[] = [];
let emailCount = 0;
let freshCount = 0;
/** What the run did, by kind (printed at the end: a run that never reached a rule says so). */
const tally = new Map<string, number>();
const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);
let step = 0;
let stepLog: string[] = [];
/** The step's batch (its tags created meanwhile, milestone tags included). */
let batch: Batch;
/** Mismatches of the current step: each names the seed, the step, the waitlist, the subscriber and the field. */
let bad: string[] = [];
const note = (where: string, field: string, expected: unknown, actual: unknown) => {
  if (!Bun.deepEquals(actual, expected)) bad.push(`${where} ${field}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
};
/** Per key (a subscriber, a counter): a key on one side only compares with `missing`. */
function noteEach(where: (k: string) => string, field: string, expected: Map<string, unknown>, actual: Map<string, unknown>, missing: unknown) {
  for (const k of new Set([...expected.keys(), ...actual.keys()])) note(where(k), field, expected.get(k) ?? missing, actual.get(k) ?? missing);
}
/** An ordering: the first place where it differs, with the lengths. */
function noteOrder(where: string, field: string, expected: string[], actual: string[]) {
  const at = expected.findIndex((e, i) => actual[i] !== e);
  if (at >= 0 || actual.length !== expected.length) {
    const i = at >= 0 ? at : Math.min(expected.length, actual.length);
    bad.push(`${where} ${field}: first difference at place ${i + 1}: expected ${expected[i]}, got ${actual[i]} (${expected.length} expected, ${actual.length} shown)`);
  }
}
function flush(label: string) {
  if (!bad.length) return;
  const lines = bad.slice(0, 30);
  bad = [];
  throw new Error(
    `SCENARIO_SEED=${SEED} (${engine}) step ${step} ${label}: ${lines.length} mismatch(es)\n  ${lines.join("\n  ")}\n step ${step} ran:\n    ${stepLog.join("\n    ")}`,
  );
}

beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
  db = await openDatabase({ url: s.dbUrl, poolSize: 2 });
  key = (await s.account("business")).key;
  const configs = [
    // open sign-up, referral program on, a milestone with a tag (and one without)
    { label: "W1", doubleOptIn: false, referralEnabled: true, signupPoints: 50, referralPoints: 30, offset: 0,
      milestones: [{ referrals: 3, reward: "Early access", tag: "Ambassador" }, { referrals: 5, reward: "Sticker" }] },
    // double opt-in: confirmations rank and credit; an inflation offset
    { label: "W2", doubleOptIn: true, referralEnabled: true, signupPoints: 10, referralPoints: 10, offset: 1000, milestones: [] },
    // referral program off: position is join order unless PUT sets points
    { label: "W3", doubleOptIn: false, referralEnabled: false, signupPoints: 50, referralPoints: 30, offset: 0, milestones: [] },
  ];
  for (const c of configs) {
    const name = `Counters ${c.label} ${SEED} ${Math.random().toString(36).slice(2, 8)}`;
    const created = await s.request("POST", "/api/v1/waitlists", {
      key,
      body: { name, referral_rewards: { enabled: c.referralEnabled, signup_points: c.signupPoints, referral_points: c.referralPoints } },
    });
    if (created.status !== 201) throw new Error(`create waitlist: ${created.status} ${created.text}`);
    const { id, key: wkey } = created.body.data.waitlist;
    const path = `/api/v1/waitlist/${wkey}`;
    const patched = await s.request("PATCH", `${path}/settings`, { key, body: { double_opt_in: c.doubleOptIn, position_offset: c.offset, milestones: c.milestones } });
    if (patched.status !== 200) throw new Error(`settings: ${patched.status} ${patched.text}`);
    const milestones = c.milestones.map((m) => ({ referrals: m.referrals, reward: m.reward, tag: (m as { tag?: string }).tag ?? null }));
    wls.push({ ...c, milestones, id, key: wkey, path, subs: new Map(), gone: [], visitors: new Set(), confirmations: 0, maxSeq: 0, tags: new Set() });
  }
});
afterAll(async () => {
  await db?.close();
  await s?.stop();
});

// ---------------------------------------------------------------------------------------------------------------
// Operations. Each picks its targets, applies the rules to the model at once, and returns the HTTP calls with what
// their answers must be. Within a batch, operations run concurrently: none may touch (x) a subscriber another one
// touches or credits (s); credits to one referrer commute and may share it. Whatever depends on the line's order at
// the moment (invites, rejects) and whatever a fraud rule judges runs alone.

interface Op {
  desc: string;
  touched: string[];
  run: () => Promise<void>;
}

class Batch {
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

const enc = encodeURIComponent;
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

function signUp(w: Wl, b: Batch, fraud = false): Op | null {
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
function repeatSignUp(w: Wl, b: Batch): Op | null {
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
function confirmOne(w: Wl, b: Batch, fraud = false): Op | null {
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
function setPoints(w: Wl, b: Batch): Op | null {
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

const tagNames = (v: any) => (v?.tags ?? []).map((t: any) => String(t.name).toLowerCase()).sort();

function tagOne(w: Wl, b: Batch): Op | null {
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

function untagOne(w: Wl, b: Batch): Op | null {
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
function deleteOne(w: Wl, b: Batch): Op | null {
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
function joinOne(w: Wl, b: Batch): Op | null {
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
function unsubscribeOne(w: Wl, b: Batch): Op | null {
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
function logView(w: Wl, b: Batch): Op | null {
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

// --- alone: they read the line's order, or a fraud rule judges them

/** The next N waiting by position leave the line, keeping their places as final_position (docs/decisions.md). */
function inviteNext(w: Wl): Op {
  const n = int(1, 3);
  const next = lineOf(w).slice(0, n);
  next.forEach((x, i) => ([x.access, x.finalPosition] = ["invited", i + 1]));
  const expected = next.map((x) => [x.email, x.finalPosition, "invited"]);
  return {
    desc: `${w.label} invite the next ${n}: ${next.map((x) => x.email).join(", ")}`,
    touched: next.map((x) => x.email),
    async run() {
      const r = await s.request("POST", `${w.path}/subscribers/invite`, { key, body: { count: n } });
      note(`${w.label} invite count ${n}`, "status", 200, r.status);
      note(`${w.label} invite count ${n}`, "invited [email, final_position, status]", expected, r.body?.data?.invited?.map((v: any) => [v.email, v.final_position, v.status]));
    },
  };
}

/** Invite given subscribers: waiting ones keep their position as final_position; invited ones stay; others are skipped; an unknown one fails the call (404). */
function inviteGiven(w: Wl): Op | null {
  const chosen = [...new Set([pick(synced(w)), pick(synced(w)), chance(0.5) ? pick(synced(w)) : undefined])].filter((x): x is Sub => !!x);
  if (!chosen.length) return null;
  const unknown = chance(0.15) ? (pick(w.gone)?.email ?? `never-${SEED}@example.com`) : undefined;
  const emails = [...chosen.map((x) => x.email), ...(unknown ? [unknown] : [])];
  let invited: unknown[] = [];
  let skipped: unknown[] = [];
  if (!unknown) {
    const before = new Map(lineOf(w).map((x, i) => [x.email, i + 1]));
    for (const x of chosen) if (x.status === "confirmed" && x.access === "waiting") [x.access, x.finalPosition] = ["invited", before.get(x.email)!];
    invited = chosen.filter((x) => x.status === "confirmed" && x.access === "invited").map((x) => [x.email, x.finalPosition]).sort();
    skipped = chosen.filter((x) => !(x.status === "confirmed" && x.access === "invited")).map((x) => [x.email, x.status === "pending" ? "pending" : x.access]).sort();
  }
  return {
    desc: `${w.label} invite ${emails.join(", ")}${unknown ? " (one unknown: 404)" : ""}`,
    touched: chosen.map((x) => x.email),
    async run() {
      const r = await s.request("POST", `${w.path}/subscribers/invite`, { key, body: { emails } });
      const where = `${w.label} invite ${emails.join(",")}`;
      note(where, "status", unknown ? 404 : 200, r.status);
      if (unknown) return;
      note(where, "invited [email, final_position]", invited, (r.body?.data?.invited ?? []).map((v: any) => [v.email, v.final_position]).sort());
      note(where, "skipped [email, status]", skipped, (r.body?.data?.skipped ?? []).map((v: any) => [v.email, v.status]).sort());
    },
  };
}

/** Out of line for good: waiting or invited only (pending and joined: 409); again changes nothing. */
function rejectOne(w: Wl): Op | null {
  const x = pick(synced(w));
  if (!x) return null;
  const refused = x.status === "pending" || x.access === "joined";
  if (!refused && x.access === "waiting") x.finalPosition = positionIn(w, x.email);
  if (!refused) x.access = "rejected";
  const finalPosition = x.finalPosition;
  return {
    desc: `${w.label} reject ${x.email}${refused ? " (409)" : ""}`,
    touched: [x.email],
    async run() {
      const r = await s.request("POST", `${w.path}/subscribers/${enc(x.email)}/reject`, { key });
      note(`${w.label} ${x.email} reject`, "status", refused ? 409 : 200, r.status);
      if (!refused) note(`${w.label} ${x.email} reject`, "status, final_position", ["rejected", finalPosition], [r.body?.data?.subscriber?.status, r.body?.data?.subscriber?.final_position]);
    },
  };
}

/** Settings that change what later sign-ups, confirmations and referrals give, and the public offset. */
function changeSettings(): Op {
  const w = pick(wls)!;
  const body: Record<string, unknown> = {};
  const roll = random();
  if (roll < 0.4) {
    w.referralEnabled = !w.referralEnabled;
    body.referral_rewards = { enabled: w.referralEnabled };
  } else if (roll < 0.7) {
    [w.signupPoints, w.referralPoints] = [pick([0, 10, 40, 50])!, pick([5, 15, 30])!];
    body.referral_rewards = { signup_points: w.signupPoints, referral_points: w.referralPoints };
  } else if (roll < 0.85) {
    w.offset = int(0, 2000);
    body.position_offset = w.offset;
  } else {
    w.doubleOptIn = !w.doubleOptIn;
    body.double_opt_in = w.doubleOptIn;
  }
  return {
    desc: `${w.label} settings ${JSON.stringify(body)}`,
    touched: [],
    async run() {
      note(`${w.label} settings`, "status", 200, (await s.request("PATCH", `${w.path}/settings`, { key, body })).status);
    },
  };
}

function deleteTag(w: Wl): Op | null {
  const name = pick([...w.tags]);
  if (!name) return null;
  w.tags.delete(name);
  const holders = [...w.subs.values()].filter((x) => x.tags.delete(name));
  return {
    desc: `${w.label} delete tag ${name}`,
    touched: holders.slice(0, 3).map((x) => x.email),
    async run() {
      note(`${w.label} delete tag ${name}`, "status", 200, (await s.request("DELETE", `${w.path}/tags/${enc(name)}`, { key })).status);
    },
  };
}

const BATCHED: [number, (w: Wl, b: Batch) => Op | null][] = [
  [30, (w, b) => signUp(w, b)],
  [6, repeatSignUp],
  [14, (w, b) => confirmOne(w, b)],
  [12, setPoints],
  [8, tagOne],
  [5, untagOne],
  [9, deleteOne],
  [7, joinOne],
  [3, unsubscribeOne],
  [6, logView],
];
const ALONE: [number, (w: Wl) => Op | null][] = [
  [3, inviteNext],
  [3, inviteGiven],
  [2, rejectOne],
  [5, (w) => signUp(w, new Batch(true), true)],
  [3, (w) => confirmOne(w, new Batch(true), true)],
  [1.5, () => changeSettings()],
  [1, deleteTag],
  [5, (w) => weighted(BATCHED)(w, new Batch(true))],
];
function weighted<F>(table: [number, F][]): F {
  let r = random() * table.reduce((sum, [wt]) => sum + wt, 0);
  for (const [wt, f] of table) if ((r -= wt) < 0) return f;
  return table[table.length - 1][1];
}

// ---------------------------------------------------------------------------------------------------------------
// The recount: rows first (they also give ids, codes, tokens and the order of concurrent confirmations), then
// every counter and position the API shows, then the counter tables the API does not show.

interface Row {
  id: string; email: string; status: string; access: string; points: number; seq: number | null; referral_count: number; referral_code: string;
  referred_by: string | null; referrer_id: string | null; sign_up_token: string; confirm_token: string | null; invite_token: string | null;
  final_position: number | null; unsubscribed_at: number | null; ip_address: string | null; fingerprint: string | null;
}

async function syncFromRows(w: Wl) {
  const rows = await db.rows<Row>(sql`SELECT id, email, status, access, points, seq, referral_count, referral_code, referred_by, referrer_id, sign_up_token,
    confirm_token, invite_token, final_position, unsubscribed_at, ip_address, fingerprint FROM subscribers WHERE waitlist_id = ${w.id}`);
  const byEmail = new Map(rows.map((r) => [r.email, r]));
  for (const r of rows) if (!w.subs.has(r.email)) bad.push(`${w.label} ${r.email} row: a row the model does not have (status ${r.status})`);
  const newSeqs: number[] = [];
  for (const x of w.subs.values()) {
    const r = byEmail.get(x.email);
    const where = `${w.label} ${x.email} row`;
    if (!r) {
      bad.push(`${where}: missing`);
      continue;
    }
    if (x.id === "") [x.id, x.code, x.signUpToken] = [r.id, r.referral_code, r.sign_up_token];
    [x.confirmToken, x.inviteToken] = [r.confirm_token, r.invite_token];
    if (x.seqUnknown) {
      x.seqUnknown = false;
      x.seq = r.seq === null ? null : Number(r.seq);
      // spec: order of confirmation; the order among concurrent confirmations is the server's, but after every earlier one
      if (x.seq === null || !(x.seq > w.maxSeq)) bad.push(`${where} seq: a new confirmation must come after every earlier one (> ${w.maxSeq}), got ${x.seq}`);
      else newSeqs.push(x.seq);
    } else note(where, "seq", x.seq, r.seq === null ? null : Number(r.seq));
  }
  if (new Set(newSeqs).size !== newSeqs.length) bad.push(`${w.label} seq: concurrent confirmations share a number: ${newSeqs.join(",")}`);
  w.maxSeq = Math.max(w.maxSeq, ...newSeqs);
  for (const x of w.subs.values()) {
    const r = byEmail.get(x.email);
    if (!r) continue;
    const where = `${w.label} ${x.email} row`;
    note(where, "status, access", [x.status, x.access], [r.status, r.access]);
    note(where, "points", x.points, Number(r.points));
    note(where, "referral_count", x.referralCount, Number(r.referral_count));
    note(where, "referred_by", x.referredBy, r.referred_by);
    note(where, "referrer_id", x.referrer ? (w.subs.get(x.referrer)?.id ?? "?") : null, r.referrer_id);
    note(where, "final_position", x.finalPosition, r.final_position === null ? null : Number(r.final_position));
    note(where, "unsubscribed", x.unsubscribed, r.unsubscribed_at !== null);
    note(where, "ip_address, fingerprint", [x.ip, x.fingerprint], [r.ip_address, r.fingerprint]);
  }
}

const emailOf = (w: Wl) => {
  const byId = new Map([...w.subs.values()].map((x) => [x.id, x.email]));
  return (id: string) => byId.get(id) ?? `?${id}`;
};

async function checkTables(w: Wl) {
  const [referrals, ranks, [counters], [daily], rewards] = await Promise.all([
    db.rows<any>(sql`SELECT referee_id, referrer_id, credited, reason, points FROM referrals WHERE waitlist_id = ${w.id}`),
    db.rows<any>(sql`SELECT level, points, bucket, count FROM rank_counts WHERE waitlist_id = ${w.id} AND count <> 0`),
    db.rows<any>(sql`SELECT subscribers_count, views_count, last_seq FROM waitlists WHERE id = ${w.id}`),
    db.rows<any>(sql`SELECT coalesce(sum(sign_ups), 0) AS sign_ups, coalesce(sum(views), 0) AS views FROM daily_stats WHERE waitlist_id = ${w.id}`),
    db.rows<any>(sql`SELECT subscriber_id, referrals FROM milestone_rewards WHERE waitlist_id = ${w.id}`),
  ]);
  const email = emailOf(w);
  const subs = [...w.subs.values()];
  noteEach((k) => `${w.label} ${k} referrals row`, "[referrer, credited, reason, points]",
    new Map(subs.filter((x) => x.referral).map((x) => [x.email, [x.referral!.referrer, x.referral!.credited, x.referral!.reason, x.referral!.points]])),
    new Map(referrals.map((r) => [email(r.referee_id), [email(r.referrer_id), Boolean(r.credited), r.reason, Number(r.points)]])), "none");
  // docs/decisions.md, Position structure: one counter per points value (level 63), per 65536 and per 256 confirmation numbers
  const expected = new Map<string, number>();
  for (const x of lineOf(w))
    for (const k of [`63|${x.points}|0`, `16|${x.points}|${x.seq! >> 16}`, `8|${x.points}|${x.seq! >> 8}`]) expected.set(k, (expected.get(k) ?? 0) + 1);
  noteEach((k) => `${w.label} rank_counts level|points|bucket ${k}`, "count", expected, new Map(ranks.map((r) => [`${r.level}|${r.points}|${r.bucket}`, Number(r.count)])), 0);
  const confirmed = subs.filter((x) => x.status === "confirmed").length;
  note(`${w.label} waitlists row`, "subscribers_count, views_count, last_seq", [confirmed, w.visitors.size, w.maxSeq],
    [Number(counters.subscribers_count), Number(counters.views_count), Number(counters.last_seq)]);
  note(`${w.label} daily_stats`, "sum of sign_ups, views", [w.confirmations, w.visitors.size], [Number(daily.sign_ups), Number(daily.views)]);
  const reached = new Map<string, number[]>();
  for (const r of rewards) reached.set(email(r.subscriber_id), [...(reached.get(email(r.subscriber_id)) ?? []), Number(r.referrals)].sort());
  noteEach((k) => `${w.label} ${k} milestone_rewards`, "thresholds reached", new Map(subs.filter((x) => x.awarded.size).map((x) => [x.email, [...x.awarded].sort()])), reached, []);
}

/** What the API must show of a subscriber (spec: Subscriber; DESIGN §4; docs/decisions.md: final_position, status). */
function compareView(w: Wl, x: Sub, v: any, position: number | null, where: string) {
  const confirmed = x.status === "confirmed";
  const ranked = confirmed && x.access === "waiting";
  note(where, "status", confirmed ? x.access : "pending", v?.status);
  note(where, "position", ranked ? position : undefined, v?.position);
  note(where, "inflated_position", ranked ? position! + w.offset : undefined, v?.inflated_position);
  note(where, "final_position", confirmed && !ranked ? x.finalPosition : undefined, v?.final_position);
  note(where, "points", confirmed ? x.points : undefined, v?.points);
  note(where, "referral_count", x.referralCount, v?.referral_count);
  note(where, "referred_by", x.referredBy, v?.referred_by);
  note(where, "referral_code", confirmed ? x.code : undefined, v?.referral_code);
  note(where, "tags", [...x.tags].sort(), tagNames(v));
  note(where, "unsubscribed", x.unsubscribed, typeof v?.unsubscribed_at === "number");
}

async function listAll(w: Wl, query: string, limit: number) {
  const out: any[] = [];
  for (let page = 1; page <= 500; page++) {
    const r = await s.request("GET", `${w.path}/subscribers?${query}&limit=${limit}&page=${page}`, { key });
    if (r.status !== 200) {
      bad.push(`${w.label} list ?${query}: status ${r.status} ${r.text.slice(0, 200)}`);
      return { rows: out, total: -1 };
    }
    out.push(...r.body.data.subscribers);
    note(`${w.label} list ?${query}&limit=${limit}`, "pages", Math.ceil(r.body.data.total / limit), r.body.data.pages);
    if (page >= r.body.data.pages) return { rows: out, total: r.body.data.total as number };
  }
  bad.push(`${w.label} list ?${query}: more than 500 pages`);
  return { rows: out, total: -1 };
}

async function checkApi(w: Wl, touched: Set<string>, thorough: boolean, counts: boolean) {
  const line = lineOf(w);
  const pos = new Map(line.map((x, i) => [x.email, i + 1]));
  const all = [...w.subs.values()];
  const unranked = all.filter((x) => !pos.has(x.email)).map((x) => x.email).sort();

  // the whole list by position (the rank counters' walk), ranked first in line order, then the rest
  // now and then also in small pages (each page's first row found through the counters), one way or the other
  const pages: [number, string][] = thorough ? [[100, "asc"], [100, "desc"], [4 + Math.floor(looks() * 9), looks() < 0.5 ? "asc" : "desc"]] : [[100, "asc"]];
  for (const [limit, dir] of pages) {
    const q = `sort_by=position&sort_dir=${dir}`;
    const { rows, total } = await listAll(w, q, limit);
    const where = `${w.label} list ?${q}&limit=${limit}`;
    note(where, "total", all.length, total);
    const order = dir === "asc" ? line : [...line].reverse();
    noteOrder(where, "ranked emails in order", order.map((x) => x.email), rows.slice(0, line.length).map((v) => v.email));
    note(where, "unranked emails", unranked, rows.slice(line.length).map((v) => v.email).sort());
    for (const v of rows) {
      const x = w.subs.get(v.email);
      if (x) compareView(w, x, v, pos.get(x.email) ?? null, `${w.label} ${x.email} in ${where}`);
    }
  }
  // a filtered list computes each row's position on its own
  const waiting = await listAll(w, "status=waiting&sort_by=position&sort_dir=asc", 100);
  noteOrder(`${w.label} list ?status=waiting&sort_by=position`, "email@position", line.map((x, i) => `${x.email}@${i + 1}`), waiting.rows.map((v) => `${v.email}@${v.position}`));

  // counts by status, unsubscribed and tag (each list's total), and the tags' own counts
  const totals: [string, number][] = !counts ? [] : [
    ["status=pending", all.filter((x) => x.status === "pending").length],
    ...(["waiting", "invited", "joined", "rejected"] as const).map((a): [string, number] => [`status=${a}`, all.filter((x) => x.status === "confirmed" && x.access === a).length]),
    ["unsubscribed=true", all.filter((x) => x.unsubscribed).length],
    ...[...w.tags].map((t): [string, number] => [`tag=${enc(t)}`, all.filter((x) => x.tags.has(t)).length]),
  ];
  const answers = await Promise.all(totals.map(([q]) => s.request("GET", `${w.path}/subscribers?${q}&limit=1`, { key })));
  totals.forEach(([q, n], i) => note(`${w.label} list ?${q}`, "total", n, answers[i].body?.data?.total));
  const tags = await s.request("GET", `${w.path}/tags`, { key });
  noteEach((k) => `${w.label} GET tags: tag ${k}`, "subscribers", new Map([...w.tags].map((t) => [t, all.filter((x) => x.tags.has(t)).length])),
    new Map((tags.body?.data?.tags ?? []).map((t: any) => [String(t.name).toLowerCase(), Number(t.subscribers)])), "no such tag");

  // stats (spec: subscribers_total counts confirmed subscribers; DESIGN §4) and the daily counts (DESIGN §9)
  const [stats, daily] = await Promise.all([s.request("GET", `${w.path}/stats`, { key }), s.request("GET", `${w.path}/stats/daily?days=2`, { key })]);
  note(`${w.label} stats`, "subscribers_total, views_total, referral_program_enabled",
    [all.filter((x) => x.status === "confirmed").length, w.visitors.size, w.referralEnabled],
    [stats.body?.data?.subscribers_total, stats.body?.data?.views_total, stats.body?.data?.referral_program_enabled]);
  const days: any[] = daily.body?.data?.days ?? [];
  note(`${w.label} stats/daily?days=2`, "sum of sign_ups, views", [w.confirmations, w.visitors.size],
    [days.reduce((n, d) => n + d.sign_ups, 0), days.reduce((n, d) => n + d.views, 0)]);

  // single reads (cached until a commit) and the status page's live numbers, for what the step touched and a few more
  const mine = [...touched].filter((e) => w.subs.has(e) || w.gone.some((g) => g.email === e));
  const some = new Set(thorough ? mine : mine.filter(() => looks() < 3 / mine.length));
  const other = lookPick(all);
  if (other) some.add(other.email);
  await Promise.all(
    [...some].map(async (e) => {
      const x = w.subs.get(e);
      const g = x ?? w.gone.find((y) => y.email === e)!;
      const byId = looks() < 0.5;
      const [one, live, page] = await Promise.all([
        s.request("GET", `${w.path}/subscribers/${enc(byId ? g.id : g.email)}`, { key }),
        s.request("GET", `/t/${g.signUpToken}/live`),
        s.request("GET", `/t/${g.signUpToken}`),
      ]);
      const where = `${w.label} ${e} GET by ${byId ? "id" : "email"}`;
      if (!x) {
        note(where, "status (deleted)", 404, one.status);
        note(`${w.label} ${e} /t/live`, "status (deleted)", 404, live.status);
        note(`${w.label} ${e} status page`, "status (deleted)", 404, page.status);
        return;
      }
      // the status page: its position while in line, the access status once out of it, "almost there" while pending
      const shown = page.text.match(/data-position="(\d+)" data-inflated-position="(\d+)"/)?.slice(1).map(Number) ??
        page.text.match(/data-access="(\w+)"/)?.[1] ?? (page.text.includes("Almost there") ? "pending" : page.text.slice(0, 80));
      const q = pos.get(e);
      note(`${w.label} ${e} status page`, "position, inflated position (or status)", q ? [q, q + w.offset] : x.status === "pending" ? "pending" : x.access, shown);
      note(where, "status", 200, one.status);
      compareView(w, x, one.body?.data?.subscriber, pos.get(e) ?? null, where);
      const p = pos.get(e) ?? null;
      note(`${w.label} ${e} /t/live`, "status, position, inflated_position, referral_count, points",
        [x.status === "pending" ? "pending" : x.access, p, p === null ? null : p + w.offset, x.referralCount, x.points],
        [live.body?.status, live.body?.position, live.body?.inflated_position, live.body?.referral_count, live.body?.points]);
    }),
  );

  if (thorough) {
    // the CSV export: every subscriber, ranked ones in line order with their positions
    const csv = parseCsv(await (await fetch(`${s.url}${w.path}/subscribers/export`, { headers: { "x-api-key": key } })).text());
    const [head, ...records] = csv;
    const col = (r: string[], name: string) => r[head.indexOf(name)];
    noteOrder(`${w.label} export`, "ranked emails in order", line.map((x) => x.email), records.slice(0, line.length).map((r) => col(r, "email")));
    note(`${w.label} export`, "row count", all.length, records.length);
    for (const r of records) {
      const x = w.subs.get(col(r, "email"));
      if (!x) continue;
      const p = pos.get(x.email);
      const confirmed = x.status === "confirmed";
      note(`${w.label} ${x.email} export`, "status, position, inflated_position, final_position, points, referral_count, tags",
        [confirmed ? x.access : "pending", p ? String(p) : "", p ? String(p + w.offset) : "", x.finalPosition === null ? "" : String(x.finalPosition),
          // docs/decisions.md, Export: a cell starting with - gets a leading apostrophe
          confirmed ? String(x.points).replace(/^-/, "'-") : "", String(x.referralCount), [...x.tags].sort().join("; ")],
        [col(r, "status"), col(r, "position"), col(r, "inflated_position"), col(r, "final_position"), col(r, "points"), col(r, "referral_count"),
          col(r, "tags").split("; ").filter(Boolean).map((t) => t.toLowerCase()).sort().join("; ")]);
    }
  }
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') [cell, i] = [cell + '"', i + 1];
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") [row, cell] = [[...row, cell], ""];
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      rows.push([...row, cell]);
      [row, cell] = [[], ""];
    } else cell += c;
  }
  if (cell || row.length) rows.push([...row, cell]);
  return rows;
}

async function checkAll(touched: Set<string>, thorough: boolean) {
  for (const w of wls) await syncFromRows(w);
  await Promise.all(wls.map((w) => checkTables(w)));
  flush("rows and counter tables against the model");
  const list = await s.request("GET", "/api/v1/waitlists", { key });
  for (const w of wls) {
    const item = list.body?.data?.waitlists?.find((i: any) => i.key === w.key);
    note(`${w.label} GET /waitlists`, "subscribers, views", [[...w.subs.values()].filter((x) => x.status === "confirmed").length, w.visitors.size], [item?.subscribers, item?.views]);
  }
  for (const w of wls) await checkApi(w, touched, thorough, thorough || step % 3 === 0);
  flush("API and counter tables against the model");
}

// ---------------------------------------------------------------------------------------------------------------
test(`seed ${SEED} (${engine}): every counter and position after random concurrent sign-ups, referrals, confirmations, points, tags, deletes, invites and joins`, async () => {
  const started = Date.now();
  const timing = { ops: 0, checks: 0 };
  let ops = 0;
  for (step = 1; step <= STEPS; step++) {
    // a batch of concurrent operations, or one alone (its answer's position is then exact too)
    batch = new Batch(step > 3 && chance(0.4));
    const planned: Op[] = [];
    if (batch.serial) {
      for (let tries = 0; tries < 20 && !planned.length; tries++) {
        const op = weighted(ALONE)(pick(wls)!);
        if (op) planned.push(op);
      }
    } else {
      const size = step <= 3 ? 12 : int(4, 12);
      for (let tries = 0; tries < size * 4 && planned.length < size; tries++) {
        const op = weighted(BATCHED)(pick(wls)!, batch);
        if (op) planned.push(op);
      }
    }
    stepLog = planned.map((o) => o.desc);
    for (const o of planned) {
      const [, verb, what] = o.desc.split(" ");
      if (verb === "sign-up" && /client_ip|fingerprint/.test(o.desc)) count("sign-up with client_ip/fingerprint");
      else if (verb === "delete" && what === "tag") count("delete tag");
      else count(`${verb}${o.desc.includes("twice at once") ? " twice at once" : ""}`);
    }
    if (process.env.SCENARIO_DUMP) for (const d of stepLog) console.log(`#${step} ${batch.serial ? "alone" : "batch"} ${d}`);
    const t0 = performance.now();
    const results = await Promise.allSettled(planned.map((o) => o.run()));
    timing.ops += performance.now() - t0;
    results.forEach((r, i) => r.status === "rejected" && bad.push(`${planned[i].desc}: ${r.reason}`));
    flush("answers");
    ops += planned.length;
    const t1 = performance.now();
    await checkAll(new Set(planned.flatMap((o) => o.touched)), step % 6 === 0 || step === STEPS);
    timing.checks += performance.now() - t1;
  }
  const most = (w: Wl) => Math.max(0, ...[...w.subs.values()].map((x) => x.referralCount));
  const n = wls.map((w) => `${w.label} ${w.subs.size} (${lineOf(w).length} in line, ${w.gone.length} deleted, most referrals ${most(w)})`).join(", ");
  const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
  console.log(`counters scenario: seed ${SEED}, ${engine}, ${ops} operations in ${STEPS} steps, ${secs(Date.now() - started)} ` +
    `(operations ${secs(timing.ops)}, checks ${secs(timing.checks)}); subscribers ${n}`);
  console.log(`  ${[...tally].sort().map(([k, v]) => `${k}: ${v}`).join(", ")}`);
}, 240_000);
