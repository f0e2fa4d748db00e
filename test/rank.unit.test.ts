// The rank counters (src/subscribers/rank.ts) against brute force, with confirmation sequences spread
// over several 256- and 65536-blocks so every level of the structure is crossed (DESIGN §7).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { Db } from "../src/db/open";
import { keyAtRank, positionOf } from "../src/subscribers/rank";
import { scratchDatabase } from "./support/db";
import { rng } from "./support/rng";

let db: Db;
let close: () => void;
beforeAll(async () => {
  ({ db, close } = await scratchDatabase());
});
afterAll(() => close());


async function insert(id: string, points: number, seq: number) {
  // the triggers of drizzle/0005_rank_triggers.sql keep the counters
  await db.exec(sql`INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, updated_at)
      VALUES (${id}, 'w', ${id + "@x.io"}, 'confirmed', 'unknown', ${points}, ${seq}, ${"c" + id}, ${"t" + id}, 'api', 0, 0)`);
}

test("positions and select-by-rank agree with sorting, across blocks, after inserts, moves and removals", async () => {
  const random = rng(7);
  const rows = new Map<string, { points: number; seq: number }>();
  const seqs = new Set<number>();
  for (let i = 0; i < 1200; i++) {
    let seq: number;
    do seq = 1 + Math.floor(random() * 300_000);
    while (seqs.has(seq));
    seqs.add(seq);
    const points = [0, 0, 0, 10, 50, 80][Math.floor(random() * 6)];
    rows.set(`s${i}`, { points, seq });
    await insert(`s${i}`, points, seq);
  }
  // moves and removals through the same statements the service uses
  const ids = [...rows.keys()];
  for (let i = 0; i < 300; i++) {
    const id = ids[Math.floor(random() * ids.length)];
    if (!rows.has(id)) continue;
    if (random() < 0.7) {
      const points = [0, 10, 50, 80, 200][Math.floor(random() * 5)];
      await db.exec(sql`UPDATE subscribers SET points = ${points} WHERE id = ${id}`);
      rows.get(id)!.points = points;
    } else {
      await db.exec(sql`DELETE FROM subscribers WHERE id = ${id}`);
      rows.delete(id);
    }
  }
  const expected = [...rows.entries()].sort(([, a], [, b]) => b.points - a.points || a.seq - b.seq).map(([id]) => id);
  const actual = await db.rows<{ id: string; position: number }>(sql`SELECT s.id, ${positionOf("s")} AS position FROM subscribers s`);
  const byId = new Map(actual.map((r) => [r.id, Number(r.position)]));
  expect(expected.map((id) => byId.get(id))).toEqual(expected.map((_, i) => i + 1));
  for (let k = 0; k < expected.length; k += 7) {
    const key = await keyAtRank(db, "w", k);
    expect(key).toEqual(rows.get(expected[k])!);
  }
  expect(await keyAtRank(db, "w", expected.length)).toBeNull();
});

test("a waitlist's version changes with its settings, not with its counters", async () => {
  const version = async () => (await db.rows<{ version: number }>(sql`SELECT version FROM waitlists WHERE id = 'w'`))[0].version;
  const start = await version();
  await db.exec(sql`UPDATE waitlists SET name = 'renamed' WHERE id = 'w'`);
  expect(await version()).toBe(start + 1);
  await db.exec(sql`UPDATE waitlists SET views_count = views_count + 1 WHERE id = 'w'`);
  await db.exec(sql`INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, joined_with, joined_at, updated_at)
    VALUES ('v1', 'w', 'v1@x.io', 'confirmed', 'unknown', 0, 999999, 'cv1', 'tv1', 'api', 0, 0)`);
  await db.exec(sql`DELETE FROM subscribers WHERE id = 'v1'`);
  expect(await version()).toBe(start + 1);
  await db.exec(sql`UPDATE waitlists SET signing_secret = 'rotated' WHERE id = 'w'`);
  expect(await version()).toBe(start + 2);
});
