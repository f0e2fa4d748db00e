// What every admin command shares: its flags, the database from --db/DATABASE_URL, and one result on stdout.
import { databaseSettings } from "../config";
import { openDatabase, type Db } from "../db/client";
import { UsageError } from "./args";

export interface Command {
  usage: string;
  /** Flags the command accepts besides --db, --database-auth-token and --json. */
  flags: string[];
  required: string[];
  run: (db: Db, flags: Map<string, string>) => Promise<{ json: Record<string, unknown>; text: string }>;
}

const COMMON = ["db", "database-url", "database-auth-token", "json"];

export async function runCommand(cmd: Command, flags: Map<string, string>, env: Record<string, string | undefined>): Promise<void> {
  for (const name of flags.keys()) if (!cmd.flags.includes(name) && !COMMON.includes(name)) throw new UsageError(`unknown flag --${name}`);
  for (const name of cmd.required) if (!flags.get(name)?.trim()) throw new UsageError(`missing required flag --${name}`);
  const db = await openDatabase(databaseSettings(env, flags));
  try {
    const out = await cmd.run(db, flags);
    process.stdout.write(flags.get("json") === "true" ? JSON.stringify(out.json) + "\n" : out.text + "\n");
  } finally {
    db.$client.close();
  }
}

/** A whole number >= 0 from a flag, or a usage error naming it. */
export function countFlag(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--${name} must be a whole number >= 0, got "${raw}"`);
  return Number(raw);
}
