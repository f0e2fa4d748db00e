// A running server announces itself in the `meta` table (pid, host, port, heartbeat), so that `restore` can refuse
// while one has the database open; it also records, at most once a minute, whether requests arrive through a
// proxy (X-Forwarded-For from a loopback peer), for doctor's TRUST_PROXY check.
// On either engine (issue 18): the rows go through a Store, so a server on PostgreSQL announces itself the same way.
import { hostname } from "node:os";
import { sql } from "drizzle-orm";
import type { Store } from "../db/store";

export const HEARTBEAT_MS = 10_000;
/** A heartbeat older than this belongs to a server that died without saying so. */
export const STALE_MS = 3 * HEARTBEAT_MS;
const TRAFFIC_WRITE_MS = 60_000;
/** Timestamps finer than this matter to nobody: doctor looks back days. */
const OBSERVE_EVERY_MS = 10_000;
const PEER_LOOKUP_EVERY_MS = 1_000;
const TRAFFIC_KEY = "traffic";

export interface Instance {
  key: string;
  pid: number;
  host: string;
  port: number;
  startedAt: number;
  heartbeatAt: number;
}

/** When requests last came in through a loopback proxy (with X-Forwarded-For) and straight from a remote peer. */
export interface Traffic {
  forwardedAt: number | null;
  directAt: number | null;
}

const isLoopback = (ip: string) => ip === "::1" || ip.startsWith("127.") || ip === "::ffff:127.0.0.1";

/** What presence needs of a database: reads and atomic writes. */
export type MetaStore = Pick<Store, "rows" | "write">;

const upsertMeta = (key: string, value: string) =>
  sql`INSERT INTO meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

export function announceInstance(store: MetaStore, info: { port: number }, onError: (err: unknown) => void) {
  const key = `instance:${hostname()}:${process.pid}`;
  const startedAt = Date.now();
  const traffic: Traffic = { forwardedAt: null, directAt: null };
  let trafficDirty = false;
  const peerLookedUpAt = { forwarded: 0, direct: 0 };
  let trafficWrittenAt = 0;
  const beat = async () => {
    const at = Date.now();
    const value = JSON.stringify({ pid: process.pid, host: hostname(), port: info.port, startedAt, heartbeatAt: at } satisfies Omit<Instance, "key">);
    const statements = [upsertMeta(key, value)];
    if (trafficDirty && at - trafficWrittenAt >= TRAFFIC_WRITE_MS) {
      const stored = await readTraffic(store);
      const merged = { forwardedAt: Math.max(stored.forwardedAt ?? 0, traffic.forwardedAt ?? 0) || null, directAt: Math.max(stored.directAt ?? 0, traffic.directAt ?? 0) || null };
      statements.push(upsertMeta(TRAFFIC_KEY, JSON.stringify(merged)));
      trafficDirty = false;
      trafficWrittenAt = at;
    }
    await store.write(statements);
  };
  const timer = setInterval(() => void beat().catch(onError), HEARTBEAT_MS);
  timer.unref?.();
  return {
    ready: beat(),
    /**
     * Per request: a header lookup and a clock read; the peer's address only when a timestamp is due to move, and at
     * most once a second per kind (a server only ever reached from this machine would otherwise look up every peer).
     */
    observe(forwarded: boolean, peer: () => string | undefined) {
      const at = Date.now();
      const last = forwarded ? traffic.forwardedAt : traffic.directAt;
      if (last !== null && at - last < OBSERVE_EVERY_MS) return;
      const kind = forwarded ? "forwarded" : "direct";
      if (at - peerLookedUpAt[kind] < PEER_LOOKUP_EVERY_MS) return;
      peerLookedUpAt[kind] = at;
      const ip = peer();
      if (!ip) return;
      if (forwarded && isLoopback(ip)) traffic.forwardedAt = at;
      else if (!forwarded && !isLoopback(ip)) traffic.directAt = at;
      else return;
      trafficDirty = true;
    },
    async stop() {
      clearInterval(timer);
      if (trafficDirty) {
        trafficWrittenAt = 0;
        await beat().catch(onError);
      }
      await store.write([sql`DELETE FROM meta WHERE key = ${key}`]).catch(onError);
    },
  };
}

export async function readTraffic(store: MetaStore): Promise<Traffic> {
  try {
    const [row] = await store.rows<{ value: string }>(sql`SELECT value FROM meta WHERE key = ${TRAFFIC_KEY}`);
    if (row) return JSON.parse(String(row.value));
  } catch {}
  return { forwardedAt: null, directAt: null };
}

/** Servers that have this database open now: a fresh heartbeat, and on this host a live pid. */
export async function runningInstances(store: MetaStore): Promise<Instance[]> {
  let rows: { key: string; value: string }[];
  try {
    rows = (await store.rows<{ key: string; value: string }>(sql`SELECT key, value FROM meta WHERE key LIKE 'instance:%'`)).map((r) => ({ key: String(r.key), value: String(r.value) }));
  } catch {
    return []; // no meta table yet: no server ever ran on it
  }
  const found: Instance[] = [];
  for (const row of rows) {
    const info = JSON.parse(row.value) as Omit<Instance, "key">;
    if (Date.now() - info.heartbeatAt > STALE_MS) continue;
    if (info.host === hostname() && !isAlive(info.pid)) continue;
    found.push({ key: row.key, ...info });
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
