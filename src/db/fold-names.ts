// Names written before the folding rule (./fold.ts) get their key at start-up.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "./db";
import { foldName } from "./fold";

/** How long each kind of name may be (the API's own limits): a renamed duplicate stays within it. */
const NAME_MAX = { waitlists: 100, tags: 40 } as const;
/** Subscribers whose key is filled by one statement. */
const BATCH = 500;

type Warn = (message: string, fields?: Record<string, unknown>) => void;

/**
 * Fills the key of every name written before the rule (or by an older instance during a rolling upgrade), at start-up.
 * A waitlist or tag name the rule finds taken (on SQLite "Ünï" and "ünï" were two tags; on either engine "Straße"
 * and "STRASSE") keeps its rows and is renamed "Ünï (2)", the older one keeping its name; each rename is logged.
 * Checks first without a lock, so an instance finding nothing to do writes nothing; instances starting together
 * serialize on a lock and compute the same keys.
 */
export async function foldExistingNames(db: Db, warn: Warn): Promise<void> {
  const [{ waitlists, tags }] = await db.rows<{ waitlists: number; tags: number }>(sql`SELECT
    (SELECT count(*) FROM waitlists WHERE name_key IS NULL) AS waitlists, (SELECT count(*) FROM tags WHERE name_key IS NULL) AS tags`);
  if (Number(waitlists) + Number(tags) > 0) {
    await db.tx(async (tx) => {
      await tx.exec(tx.d.lockKey("fold-names"));
      await foldUnique(tx, "waitlists", sql`'all'`, warn);
      await foldUnique(tx, "tags", sql`waitlist_id`, warn);
    });
  }
  for (;;) {
    const rows = await db.rows<{ id: string; name: string }>(sql`SELECT id, name FROM subscribers WHERE name_key IS NULL AND name IS NOT NULL LIMIT ${BATCH}`);
    if (rows.length === 0) return;
    const keys = sql.join(rows.map((r) => sql`WHEN ${r.id} THEN ${foldName(r.name)}`), sql` `);
    const ids = sql.join(rows.map((r) => sql`${r.id}`), sql`, `);
    // a name changed since the read was folded by its writer: the key it wrote stays
    await db.exec(sql`UPDATE subscribers SET name_key = CASE id ${keys} END WHERE id IN (${ids}) AND name_key IS NULL`);
  }
}

/** Fills the keys of one table whose names are unique within `scope`, renaming those the rule finds taken. */
async function foldUnique(tx: Db, table: keyof typeof NAME_MAX, scope: SQL, warn: Warn): Promise<void> {
  const rows = await tx.rows<{ id: string; scope: string; name: string; name_key: string | null }>(
    sql`SELECT id, ${scope} AS scope, name, name_key FROM ${sql.raw(table)} ORDER BY created_at, id`,
  );
  const taken = new Set(rows.filter((r) => r.name_key !== null).map((r) => `${r.scope}\n${r.name_key}`));
  for (const row of rows) {
    if (row.name_key !== null) continue;
    let name = row.name;
    for (let n = 2; taken.has(`${row.scope}\n${foldName(name)}`); n++) {
      const suffix = ` (${n})`;
      name = `${row.name.slice(0, NAME_MAX[table] - suffix.length).trimEnd()}${suffix}`;
    }
    const key = foldName(name);
    taken.add(`${row.scope}\n${key}`);
    await tx.exec(sql`UPDATE ${sql.raw(table)} SET name = ${name}, name_key = ${key} WHERE id = ${row.id}`);
    if (name !== row.name) warn(`${table === "tags" ? "tag" : "waitlist"} renamed: its name is taken by another under the folded-name rule`, { id: row.id, from: row.name, to: name });
  }
}
