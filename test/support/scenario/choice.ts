// Which operations a counters scenario's step plays, drawn from the seeded PRNG: the operations that run alone (they
// read the line's order, or a fraud rule judges them), and the weighted tables every operation is drawn from.
import { lineOf, positionIn, synced, type Sub, type Wl } from "./model";
import {
  Batch, chance, confirmOne, deleteOne, enc, int, joinOne, logView, pick, repeatSignUp, setPoints, signUp, tagOne, untagOne,
  unsubscribeOne, type Op,
} from "./operations";
import { key, note, random, s, SEED, wls } from "./run";

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

export const BATCHED: [number, (w: Wl, b: Batch) => Op | null][] = [
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
export const ALONE: [number, (w: Wl) => Op | null][] = [
  [3, inviteNext],
  [3, inviteGiven],
  [2, rejectOne],
  [5, (w) => signUp(w, new Batch(true), true)],
  [3, (w) => confirmOne(w, new Batch(true), true)],
  [1.5, () => changeSettings()],
  [1, deleteTag],
  [5, (w) => weighted(BATCHED)(w, new Batch(true))],
];
export function weighted<F>(table: [number, F][]): F {
  let r = random() * table.reduce((sum, [wt]) => sum + wt, 0);
  for (const [wt, f] of table) if ((r -= wt) < 0) return f;
  return table[table.length - 1][1];
}
