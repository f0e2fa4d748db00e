// Caches of reads (issue 19): an entry is served only while nothing has been committed to the database since it was
// read (`Db.changeStamp`, which sees the commits of every instance), so a change made anywhere is seen by the next
// request everywhere. A cache that names its tables also holds across this process's own commits that wrote none
// of them (own-commits.ts; the embedded file only): the key lookups stay cached while sign-ups pour in. Otherwise,
// under a steady stream of writes they simply miss; on PostgreSQL checking the stamp is one round trip in place of
// the read's own queries.
import type { ChangeStamp, Db } from "./db";

export interface ReadCache<K, V> {
  /** The cached value while the database is unchanged since it was read; otherwise `load()`, kept for next time. */
  get(key: K, load: () => Promise<V>): Promise<V>;
  /** Entries kept (tests). */
  size(): number;
}

/**
 * `max` entries at most (the oldest read goes first); `keep` decides which loaded values are kept (default all), e.g.
 * not a "not found". `maxAgeMs` bounds what depends on the clock rather than on the data (default 1 s). `tables`:
 * every table the value is read from (own-commits.ts); an entry then also holds across this process's own commits
 * that wrote none of them.
 */
export function readCache<K, V>(
  db: Pick<Db, "changeStamp" | "ownCommits">,
  opts: { max: number; maxAgeMs?: number; keep?: (value: V) => boolean; tables?: string[] },
): ReadCache<K, V> {
  const maxAge = opts.maxAgeMs ?? 1_000;
  const tables = opts.tables && db.ownCommits ? new Set(opts.tables) : null;
  const holds = (from: ChangeStamp, to: ChangeStamp) => tables !== null && db.ownCommits!.cleanSince(from, to, tables);
  const entries = new Map<K, { stamp: ChangeStamp; at: number; value: V }>();
  // an entry older than maxAge is never answered again: such entries go once past their age, from the oldest (the
  // map's order is that of their reads, near enough), while any are kept. Left until `max` pushed them out, a list's
  // pages read once before a sign-up load (30,000 rows) stayed in the heap, and every full collection marked them
  // (bench/README.md, issue 19)
  let sweeping: Timer | null = null;
  const sweep = () => {
    const now = performance.now();
    for (const [key, entry] of entries) {
      if (now - entry.at < maxAge) break;
      entries.delete(key);
    }
    sweeping = entries.size ? setTimeout(sweep, maxAge).unref() : null;
  };
  // loads under way, by key, with the stamp read before each: a request that misses at the same stamp, or at a later
  // one that only own commits writing none of the tables separate from it, waits for that load rather than reading
  // again (after a commit, every request of a turn missed at once, and the sign-ups committed meanwhile gave each
  // turn a new stamp: the key lookup was read ~5 times for each last_used_at touch under a sign-up load)
  const loading = new Map<K, { stamp: ChangeStamp; value: Promise<V> }>();
  const loadOnce = (key: K, stamp: ChangeStamp, load: () => Promise<V>): Promise<V> => {
    const under = loading.get(key);
    if (under && stamp !== null && (under.stamp === stamp || holds(under.stamp, stamp))) return under.value;
    const value = load();
    const mine = { stamp, value };
    loading.set(key, mine);
    const done = () => {
      if (loading.get(key) === mine) loading.delete(key);
    };
    value.then(done, done);
    return value;
  };
  return {
    async get(key, load) {
      // the stamp is read before the data: a commit in between leaves the entry stale at once, never wrongly fresh
      const pending = db.changeStamp();
      const stamp = pending instanceof Promise ? await pending : pending;
      const hit = entries.get(key);
      const at = performance.now();
      if (hit && stamp !== null && at - hit.at < maxAge) {
        if (hit.stamp === stamp) return hit.value;
        if (holds(hit.stamp, stamp)) {
          // good from here on too: the next check walks from this stamp
          hit.stamp = stamp;
          return hit.value;
        }
      }
      const value = await loadOnce(key, stamp, load);
      entries.delete(key);
      if (stamp === null || (opts.keep && !opts.keep(value))) return value;
      if (entries.size >= opts.max) entries.delete(entries.keys().next().value!);
      entries.set(key, { stamp, at, value });
      sweeping ??= setTimeout(sweep, maxAge).unref();
      return value;
    },
    size: () => entries.size,
  };
}
