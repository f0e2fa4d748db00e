// Copies every table from one database to another, either engine to either (issue 18: `waitlist migrate-db`):
// in batches read by primary key (keyset, so a million rows cost the same per batch as the first thousand),
// values converted per column type, then row counts verified. The target's triggers would count every copied
// subscriber a second time, so the counters they keep are copied last and set to the source's exact values.
import { sql, type SQL } from "drizzle-orm";
import { getTableConfig as liteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";
import type { Row, Store } from "./store";

/** Parents before children, so foreign keys hold at every insert. */
export const COPY_ORDER = [
  "accounts", "waitlists", "api_keys", "subscribers", "referrals", "tags", "subscriber_tags", "milestone_rewards",
  "view_dedupe", "landing_pages", "landing_previews", "webhook_endpoints", "outbox", "webhook_deliveries", "broadcasts", "broadcast_recipients", "meta", "rate_limits", "job_leases",
  "captcha_solutions", "confirmation_sends", "source_views", "share_clicks", "imports", "import_rows", "data_requests", "audit_log", "users", "user_tokens", "sessions", "sign_in_failures", "rank_counts", "daily_stats",
] as const;

/** Kept by the subscriber triggers on the target: emptied after the copy of subscribers, then copied as they were. */
const DERIVED = new Set(["rank_counts", "daily_stats"]);

interface TableInfo {
  name: string;
  columns: { name: string; isBoolean: boolean }[];
  key: string[];
}

export function tablesToCopy(): TableInfo[] {
  const byName = new Map<string, TableInfo>();
  for (const t of Object.values(schema)) {
    if (!(t instanceof SQLiteTable)) continue;
    const c = liteConfig(t);
    const columns = c.columns.filter((col) => !col.generated).map((col) => ({ name: col.name, isBoolean: col.dataType === "boolean" }));
    const key = c.primaryKeys[0]?.columns.map((col) => col.name) ?? c.columns.filter((col) => col.primary).map((col) => col.name);
    // a table without a key (confirmation_sends) is read in the order of all its columns
    byName.set(c.name, { name: c.name, columns, key: key.length ? key : columns.map((col) => col.name) });
  }
  const missing = [...byName.keys()].filter((n) => !(COPY_ORDER as readonly string[]).includes(n));
  if (missing.length) throw new Error(`copy order misses ${missing.join(", ")}`);
  return COPY_ORDER.map((n) => byName.get(n)!);
}

export interface CopyProgress {
  table: string;
  copied: number;
  total: number;
}

export interface CopyResult {
  tables: Record<string, number>;
  rows: number;
}

const ident = (name: string) => sql.raw(`"${name}"`);
const list = (parts: SQL[]) => sql.join(parts, sql`, `);

export async function countRows(store: Store): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of tablesToCopy()) {
    const [row] = await store.rows<{ n: number }>(sql`SELECT count(*) AS n FROM ${ident(t.name)}`);
    counts[t.name] = Number(row.n);
  }
  return counts;
}

/** Empties every table of the target (children first). */
export async function emptyAll(store: Store): Promise<void> {
  await store.write([...tablesToCopy()].reverse().map((t) => sql`DELETE FROM ${ident(t.name)}`));
}

export async function copyDatabase(from: Store, to: Store, opts: { batch?: number; onProgress?: (p: CopyProgress) => void } = {}): Promise<CopyResult> {
  const batch = opts.batch ?? 500;
  const totals = await countRows(from);
  const tables = tablesToCopy();
  for (const t of tables) {
    if (DERIVED.has(t.name)) await to.exec(sql`DELETE FROM ${ident(t.name)}`);
    const names = list(t.columns.map((c) => ident(c.name)));
    const order = list(t.key.map((k) => ident(k)));
    let after: unknown[] | null = null;
    let copied = 0;
    for (;;) {
      const where: SQL = after ? sql`WHERE (${order}) > (${list(after.map((v) => sql`${v}`))})` : sql``;
      const rows: Row[] = await from.rows<Row>(sql`SELECT ${names} FROM ${ident(t.name)} ${where} ORDER BY ${order} LIMIT ${batch}`);
      if (!rows.length) break;
      const values = rows.map((r) => sql`(${list(t.columns.map((c) => sql`${convert(r[c.name], c.isBoolean, to)}`))})`);
      await to.write([sql`INSERT INTO ${ident(t.name)} (${names}) VALUES ${list(values)}`]);
      copied += rows.length;
      after = t.key.map((k) => rows[rows.length - 1][k]);
      opts.onProgress?.({ table: t.name, copied, total: totals[t.name] });
      if (rows.length < batch) break;
    }
    if (t.name === "subscribers") await restoreCounters(from, to);
  }
  const copiedCounts = await countRows(to);
  const wrong = tables.filter((t) => copiedCounts[t.name] !== totals[t.name]);
  if (wrong.length) {
    throw new Error(`row counts differ after the copy: ${wrong.map((t) => `${t.name} ${totals[t.name]} -> ${copiedCounts[t.name]}`).join(", ")}`);
  }
  return { tables: totals, rows: Object.values(totals).reduce((a, b) => a + b, 0) };
}

/** The waitlists' counters and versions as the source has them (the target's triggers counted the copy). */
async function restoreCounters(from: Store, to: Store): Promise<void> {
  const rows = await from.rows<{ id: string; subscribers_count: number; last_seq: number; views_count: number; version: number }>(
    sql`SELECT id, subscribers_count, last_seq, views_count, version FROM waitlists`,
  );
  for (let i = 0; i < rows.length; i += 200) {
    await to.write(
      rows.slice(i, i + 200).map(
        (w) => sql`UPDATE waitlists SET subscribers_count = ${Number(w.subscribers_count)}, last_seq = ${Number(w.last_seq)},
          views_count = ${Number(w.views_count)}, version = ${Number(w.version)} WHERE id = ${w.id}`,
      ),
    );
  }
}

/** SQLite keeps flags as 0/1; PostgreSQL wants booleans. Everything else copies as it is. */
function convert(value: unknown, isBoolean: boolean, to: Store): unknown {
  if (value === null || value === undefined) return null;
  if (isBoolean) return to.d.name === "pg" ? Boolean(Number(value) || value === true) : value === true || Number(value) === 1 ? 1 : 0;
  if (typeof value === "bigint") return Number(value);
  return value;
}
