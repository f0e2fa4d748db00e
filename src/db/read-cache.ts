// Caches of reads (issue 19): an entry is served only while nothing has been committed to the database since it was
// read (`Db.changeStamp`, which sees the commits of every instance), so a change made anywhere is seen by the next
// request everywhere. Under a steady stream of writes they simply miss; on PostgreSQL checking the stamp is one
// round trip in place of the read's own queries.
import type { ChangeStamp, Db } from "./db";

export interface ReadCache<K, V> {
  /** The cached value while the database is unchanged since it was read; otherwise `load()`, kept for next time. */
  get(key: K, load: () => Promise<V>): Promise<V>;
}

/**
 * `max` entries at most (the oldest read goes first); `keep` decides which loaded values are kept (default all), e.g.
 * not a "not found". `maxAgeMs` bounds what depends on the clock rather than on the data (default 1 s).
 */
export function readCache<K, V>(db: Pick<Db, "changeStamp">, opts: { max: number; maxAgeMs?: number; keep?: (value: V) => boolean }): ReadCache<K, V> {
  const maxAge = opts.maxAgeMs ?? 1_000;
  const entries = new Map<K, { stamp: ChangeStamp; at: number; value: V }>();
  return {
    async get(key, load) {
      // the stamp is read before the data: a commit in between leaves the entry stale at once, never wrongly fresh
      const pending = db.changeStamp();
      const stamp = pending instanceof Promise ? await pending : pending;
      const hit = entries.get(key);
      const at = performance.now();
      if (hit && stamp !== null && hit.stamp === stamp && at - hit.at < maxAge) return hit.value;
      const value = await load();
      entries.delete(key);
      if (stamp === null || (opts.keep && !opts.keep(value))) return value;
      if (entries.size >= opts.max) entries.delete(entries.keys().next().value!);
      entries.set(key, { stamp, at, value });
      return value;
    },
  };
}
