// A running server announces itself in the `meta` table (pid, host, port, heartbeat), so that `restore` can refuse
// while one has the database open; it also records, at most once a minute, whether requests arrive through a
// proxy (X-Forwarded-For from a loopback peer), for doctor's TRUST_PROXY check.
import { hostname } from "node:os";
import type { Client } from "@libsql/client";

export const HEARTBEAT_MS = 10_000;
/** A heartbeat older than this belongs to a server that died without saying so. */
export const STALE_MS = 3 * HEARTBEAT_MS;
const TRAFFIC_WRITE_MS = 60_000;
/** Timestamps finer than this matter to nobody: doctor looks back days. */
const OBSERVE_EVERY_MS = 10_000;
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

export function announceInstance(client: Client, info: { port: number }, onError: (err: unknown) => void) {
  const key = `instance:${hostname()}:${process.pid}`;
  const startedAt = Date.now();
  const traffic: Traffic = { forwardedAt: null, directAt: null };
  let trafficDirty = false;
  let trafficWrittenAt = 0;
  const beat = async () => {
    const at = Date.now();
    const value = JSON.stringify({ pid: process.pid, host: hostname(), port: info.port, startedAt, heartbeatAt: at } satisfies Omit<Instance, "key">);
    const statements = [{ sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", args: [key, value] }];
    if (trafficDirty && at - trafficWrittenAt >= TRAFFIC_WRITE_MS) {
      const stored = await readTraffic(client);
      const merged = { forwardedAt: Math.max(stored.forwardedAt ?? 0, traffic.forwardedAt ?? 0) || null, directAt: Math.max(stored.directAt ?? 0, traffic.directAt ?? 0) || null };
      statements.push({ sql: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", args: [TRAFFIC_KEY, JSON.stringify(merged)] });
      trafficDirty = false;
      trafficWrittenAt = at;
    }
    await client.batch(statements, "write");
  };
  const timer = setInterval(() => void beat().catch(onError), HEARTBEAT_MS);
  timer.unref?.();
  return {
    ready: beat(),
    /** Per request: a header lookup and a clock read; the peer's address only when a timestamp is due to move. */
    observe(forwarded: boolean, peer: () => string | undefined) {
      const at = Date.now();
      const last = forwarded ? traffic.forwardedAt : traffic.directAt;
      if (last !== null && at - last < OBSERVE_EVERY_MS) return;
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
      await client.execute({ sql: "DELETE FROM meta WHERE key = ?", args: [key] }).catch(onError);
    },
  };
}

export async function readTraffic(client: Client): Promise<Traffic> {
  try {
    const r = await client.execute({ sql: "SELECT value FROM meta WHERE key = ?", args: [TRAFFIC_KEY] });
    if (r.rows.length) return JSON.parse(String(r.rows[0].value));
  } catch {}
  return { forwardedAt: null, directAt: null };
}

/** Servers that have this database open now: a fresh heartbeat, and on this host a live pid. */
export async function runningInstances(client: Client): Promise<Instance[]> {
  let rows: { key: string; value: string }[];
  try {
    rows = (await client.execute("SELECT key, value FROM meta WHERE key LIKE 'instance:%'")).rows.map((r) => ({ key: String(r.key), value: String(r.value) }));
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
