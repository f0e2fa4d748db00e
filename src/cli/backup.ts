// `waitlist backup --to FILE`: a consistent snapshot of a live embedded database with VACUUM INTO (DESIGN §8),
// written beside the target and moved into place, mode 0600, never over an existing file unless --force.
import { closeSync, existsSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createClient } from "@libsql/client";
import { isPgUrl } from "../db/open";
import type { SqliteDb } from "../db/sqlite/open";
import { databaseSettings, loadConfig } from "../config";
import { UsageError } from "./args";
import { CommandError, type Command } from "./command";

const PG_BACKUP = "backup is for the embedded database; on PostgreSQL use pg_dump (e.g. pg_dump -Fc -f waitlist.dump \"$DATABASE_URL\")";

/** UTC time as `20261201T143000Z`, for file names. */
export const fileStamp = (at = new Date()) => at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");

/** What a database file holds, read without migrating it. */
export async function contentsOf(file: string): Promise<{ waitlists: number; subscribers: number; bytes: number }> {
  const client = createClient({ url: `file:${file}` });
  try {
    const count = async (table: string) => Number((await client.execute(`SELECT count(*) FROM ${table}`)).rows[0][0]);
    return { waitlists: await count("waitlists"), subscribers: await count("subscribers"), bytes: statSync(file).size };
  } finally {
    client.close();
  }
}

export const backupCommand: Command = {
  name: "backup",
  summary: "write a consistent snapshot of the live embedded database (mode 0600)",
  flags: [
    { name: "to", value: "FILE", help: "the backup file to write", fallback: "$BACKUP_DIR/waitlist-<UTC time>.db when BACKUP_DIR is set" },
    { name: "force", help: "replace FILE if it exists" },
  ],
  required: [],
  async run({ flags, env, db }) {
    // issue 18: PostgreSQL is backed up with its own tools, before anything is opened
    if (isPgUrl(databaseSettings(env, flags).url)) throw new CommandError("unsupported", PG_BACKUP);
    const dir = loadConfig(env, new Map(), ["backupDir"]).backupDir;
    const given = flags.get("to")?.trim() || (dir ? join(dir, `waitlist-${fileStamp()}.db`) : "");
    if (!given) throw new UsageError("missing required flag --to (or set BACKUP_DIR)", backupCommand);
    const target = resolve(given);
    const force = flags.get("force") === "true";
    if (existsSync(target) && !force) throw new CommandError("exists", `${target} already exists; choose a new file or add --force`);
    const handle = await db();
    if (!handle.$path) throw new CommandError("unsupported", "backup works on an embedded (file:) database; back up a libSQL server with its own tools");
    if (resolve(handle.$path) === target) throw new CommandError("same_file", `${target} is the live database itself`);
    mkdirSync(dirname(target), { recursive: true });
    // VACUUM INTO fills an empty file created here with mode 0600, so the snapshot is never readable by others
    const partial = `${target}.partial-${process.pid}`;
    closeSync(openSync(partial, "wx", 0o600));
    try {
      await (handle as SqliteDb).$client.execute({ sql: "VACUUM INTO ?", args: [partial] });
      if (force) renameSync(partial, target);
      else {
        try {
          linkSync(partial, target); // fails if the target appeared meanwhile: never overwritten without --force
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new CommandError("exists", `${target} already exists; choose a new file or add --force`);
          throw err;
        }
      }
    } finally {
      rmSync(partial, { force: true });
    }
    const held = await contentsOf(target);
    return {
      json: { backup: target, ...held },
      text: `backup written to ${target}: ${held.waitlists} waitlists, ${held.subscribers} subscribers, ${held.bytes} bytes`,
    };
  },
};
