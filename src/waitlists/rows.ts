// Waitlist rows as requests see them, kept in memory while their version is unchanged: a read of two columns instead
// of ~40 (and of drizzle's builder, 38% of a status page's time in issue 19's profile). A trigger (drizzle/0007) bumps
// `version` on any change but the counters, whichever instance or admin command makes it, so nothing goes stale.
import { eq, sql } from "drizzle-orm";
import type { Db, Tables } from "../db/db";

/**
 * A waitlist as requests see it. Its counters are left out: the copy an instance keeps between
 * requests is current in everything else (see `version`), but counters change with every sign-up
 * and view, so code that shows them reads them (analytics/service.ts `countersOf`).
 */
export type Waitlist = Omit<Tables["waitlists"]["$inferSelect"], "subscribersCount" | "viewsCount" | "lastSeq">;

const MAX_CACHED = 1_000;

export interface WaitlistRows {
  /** The row whose version the caller has just read (the auth lookup reads it with the key). */
  at(id: string, version: number): Promise<Waitlist | null>;
  /** The row as it is now: its version read, then the kept row if that is current. */
  byId(id: string): Promise<Waitlist | null>;
}

const shared = new WeakMap<Db, WaitlistRows>();

/** One set of kept rows per database, shared by every route of the process. */
export function waitlistRows(db: Db): WaitlistRows {
  let rows = shared.get(db);
  if (!rows) shared.set(db, (rows = create(db)));
  return rows;
}

function create(db: Db): WaitlistRows {
  const cached = new Map<string, { version: number; row: Waitlist }>();
  async function at(id: string, version: number): Promise<Waitlist | null> {
    const hit = cached.get(id);
    if (hit?.version === version) return hit.row;
    const [full] = await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.id, id));
    if (!full) return null;
    const { subscribersCount, viewsCount, lastSeq, ...fields } = full;
    // shared by concurrent requests: nobody may change it
    const row = Object.freeze(fields);
    if (row.version === version) {
      if (cached.size >= MAX_CACHED && !cached.has(id)) cached.delete(cached.keys().next().value!);
      cached.set(id, { version, row });
    }
    return row;
  }
  return {
    at,
    async byId(id) {
      const [v] = await db.rows<{ version: number }>(sql`SELECT version FROM waitlists WHERE id = ${id}`);
      return v ? at(id, Number(v.version)) : null;
    },
  };
}
