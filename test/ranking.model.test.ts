// Positions against a pure reference model (DESIGN §4, §7; issue 11): seeded random sign-ups, referrals, PUT points,
// deletes, invites, rejects and referral-program toggles over real HTTP; the whole ordering is compared at checkpoints.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";
import { rng } from "./support/rng";

interface Sub {
  email: string;
  code: string;
  points: number;
  seq: number;
  referralCount: number;
  /** Issue 11: only `waiting` subscribers are ranked. */
  access: "waiting" | "invited" | "rejected";
  /** The referral that credited this subscriber's referrer: who, and how many points it gave. */
  credit: { referrer: string; points: number } | null;
}

/** The reference model: rank = points descending, then order of confirmation ascending. */
class Model {
  subs = new Map<string, Sub>();
  seq = 0;
  enabled = true;
  constructor(readonly signupPoints: number, readonly referralPoints: number) {}
  signUp(email: string, code: string, referrerEmail: string | null) {
    const sub: Sub = { email, code, points: this.enabled ? this.signupPoints : 0, seq: ++this.seq, referralCount: 0, access: "waiting", credit: null };
    if (referrerEmail) {
      const r = this.subs.get(referrerEmail)!;
      const pts = this.enabled ? this.referralPoints : 0;
      r.points += pts;
      r.referralCount += 1;
      sub.credit = { referrer: referrerEmail, points: pts };
    }
    this.subs.set(email, sub);
  }
  setPoints(email: string, points: number) {
    this.subs.get(email)!.points = points;
  }
  remove(email: string) {
    const sub = this.subs.get(email)!;
    if (sub.credit && this.subs.has(sub.credit.referrer)) {
      const r = this.subs.get(sub.credit.referrer)!;
      r.points -= sub.credit.points;
      r.referralCount -= 1;
    }
    for (const other of this.subs.values()) if (other.credit?.referrer === email) other.credit = null;
    this.subs.delete(email);
  }
  /** The line: waiting subscribers in rank order. */
  ordered(): Sub[] {
    return [...this.subs.values()].filter((x) => x.access === "waiting").sort((a, b) => b.points - a.points || a.seq - b.seq);
  }
  /** The next `n` in line are invited. */
  invite(n: number): Sub[] {
    const next = this.ordered().slice(0, n);
    for (const x of next) x.access = "invited";
    return next;
  }
}

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off" } });
});
afterAll(() => s.stop());

async function listAll(key: string, path: string, dir: "asc" | "desc") {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await s.request("GET", `${path}/subscribers?sort_by=position&sort_dir=${dir}&limit=37&page=${page}`, { key });
    expect(r.status).toBe(200);
    out.push(...r.body.data.subscribers);
    if (page >= r.body.data.pages) return { rows: out, total: r.body.data.total };
  }
}

async function checkpoint(model: Model, key: string, path: string, random: () => number, label: string) {
  const expected = model.ordered();
  const asc = await listAll(key, path, "asc");
  // the line by position, then those out of it (invited, rejected: no position)
  expect(asc.total, label).toBe(model.subs.size);
  expect(asc.rows.slice(0, expected.length).map((r) => [r.email, r.position, r.points, r.referral_count]), label).toEqual(
    expected.map((e, i) => [e.email, i + 1, e.points, e.referralCount]),
  );
  const outOfLine = [...model.subs.values()].filter((x) => x.access !== "waiting");
  expect(asc.rows.slice(expected.length).map((r) => [r.email, r.status, r.position]).sort(), label).toEqual(outOfLine.map((x) => [x.email, x.access, undefined]).sort());
  const desc = await listAll(key, path, "desc");
  expect(desc.rows.slice(0, expected.length).map((r) => [r.email, r.position]), label).toEqual(expected.map((e, i) => [e.email, i + 1]).reverse());
  // single reads agree with the list
  for (let i = 0; i < Math.min(5, expected.length); i++) {
    const pick = Math.floor(random() * expected.length);
    const r = await s.request("GET", `${path}/subscribers/${encodeURIComponent(expected[pick].email)}`, { key });
    expect(r.body.data.subscriber.position, label).toBe(pick + 1);
  }
  const stats = await s.request("GET", `${path}/stats`, { key });
  expect(stats.body.data.subscribers_total, label).toBe(model.subs.size);
}

describe("positions match the reference model", () => {
  for (const seed of [1, 42, 2026]) {
    test(`seed ${seed}: sign-ups, referrals, PUT points, deletes, invites, rejects and program toggles`, async () => {
      const random = rng(seed);
      const { key } = await s.account();
      const created = await s.request("POST", "/api/v1/waitlists", {
        key,
        body: { name: `Model ${seed} ${Math.random().toString(36).slice(2, 8)}`, referral_rewards: { enabled: true, signup_points: 50, referral_points: 30 } },
      });
      const path = `/api/v1/waitlist/${created.body.data.waitlist.key}`;
      const model = new Model(50, 30);
      let n = 0;
      for (let op = 1; op <= 160; op++) {
        const roll = random();
        const emails = [...model.subs.keys()];
        if (roll < 0.55 || emails.length < 3) {
          const email = `user${seed}-${++n}@example.com`;
          const referrer = emails.length > 0 && random() < 0.5 ? emails[Math.floor(random() * emails.length)] : null;
          const r = await s.request("POST", `${path}/sign-up`, {
            key,
            body: { email, metadata: referrer ? { referred_by: model.subs.get(referrer)!.code } : {} },
          });
          expect(r.status).toBe(200);
          model.signUp(email, r.body.referral_code, referrer);
          // the sign-up's own answer is exact too
          expect(r.body.position).toBe(model.ordered().findIndex((x) => x.email === email) + 1);
        } else if (roll < 0.75) {
          const email = emails[Math.floor(random() * emails.length)];
          // few distinct values, so ties on points (decided by confirmation order) are common
          const points = [0, 30, 50, 80, 110, 500][Math.floor(random() * 6)];
          expect((await s.request("PUT", `${path}/subscribers/${encodeURIComponent(email)}`, { key, body: { points } })).status).toBe(200);
          model.setPoints(email, points);
        } else if (roll < 0.88) {
          const email = emails[Math.floor(random() * emails.length)];
          expect((await s.request("DELETE", `${path}/subscribers/${encodeURIComponent(email)}`, { key })).status).toBe(200);
          model.remove(email);
        } else if (roll < 0.94) {
          // issue 11: the next 1 or 2 are invited, keeping their places as final_position; or one waiting is rejected
          const waiting = model.ordered();
          if (random() < 0.6 && waiting.length > 0) {
            const n = 1 + Math.floor(random() * 2);
            const places = waiting.slice(0, n).map((x, i) => [x.email, i + 1]);
            const r = await s.request("POST", `${path}/subscribers/invite`, { key, body: { count: n } });
            expect(r.status).toBe(200);
            expect(r.body.data.invited.map((x: any) => [x.email, x.final_position])).toEqual(places);
            model.invite(n);
          } else if (waiting.length > 0) {
            const pick = Math.floor(random() * waiting.length);
            const r = await s.request("POST", `${path}/subscribers/${encodeURIComponent(waiting[pick].email)}/reject`, { key });
            expect(r.body.data.subscriber.final_position).toBe(pick + 1);
            waiting[pick].access = "rejected";
          }
        } else {
          model.enabled = !model.enabled;
          const r = await s.request("PATCH", `${path}/settings`, { key, body: { referral_rewards: { enabled: model.enabled } } });
          expect(r.status).toBe(200);
        }
        if (op % 40 === 0) await checkpoint(model, key, path, random, `seed ${seed} op ${op}`);
      }
    });
  }
});
