// What every admin command shares: its declared flags (for parsing, help and suggestions), the database from
// --db/DATABASE_URL opened on demand, one result on stdout, and the errors that end a command (DESIGN §3).
import { databaseSettings } from "../config";
import { openDatabase, removeCreatedFiles, type Db } from "../db/open";
import { UsageError } from "./args";

export interface Flag {
  name: string;
  /** Placeholder of the value (`NAME`); absent for a flag that stands alone (`--json`). */
  value?: string;
  help: string;
  /** Shown in help as `(default: ...)`. */
  fallback?: string;
}

export interface CommandContext {
  flags: Map<string, string>;
  env: Record<string, string | undefined>;
  /** Opens (and migrates) the database once; closed after the command, and removed again if it created it and failed. */
  db: () => Promise<Db>;
}

export interface CommandResult {
  json: Record<string, unknown>;
  text: string;
  /** 0 unless a command reports a failed check (doctor: 1). */
  exitCode?: number;
  /** It wrote its output itself (an export's file on stdout): nothing more is printed. */
  written?: boolean;
}

export interface Command {
  /** As typed: `account create`, `backup`. */
  name: string;
  summary: string;
  flags: Flag[];
  required: string[];
  /** One argument that is not a flag (`import ... FILE.csv`), kept as the flag `name`. */
  positional?: { name: string; value: string; help: string };
  /** Takes its databases as its own flags (migrate-db): --db and --database-url do not apply. */
  ownDatabases?: boolean;
  run: (ctx: CommandContext) => Promise<CommandResult>;
}

/** A refusal: the command understood what was asked and won't do it (exit 2, DESIGN §3). */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const JSON_FLAG: Flag = { name: "json", help: "print one JSON object on stdout (errors too)" };
export const DB_FLAG: Flag = { name: "db", value: "URL", help: "the database (also DATABASE_URL)", fallback: "file:./data/waitlist.db" };
const COMMON: Flag[] = [DB_FLAG, { name: "database-url", value: "URL", help: "same as --db" }, { name: "database-pool-size", value: "N", help: "PostgreSQL connections (also DATABASE_POOL_SIZE)" }, JSON_FLAG];

/** Every flag a command accepts: its own, then the shared ones. */
export const flagsOf = (cmd: Command): Flag[] => [
  ...cmd.flags,
  ...COMMON.filter((c) => !cmd.flags.some((f) => f.name === c.name) && !(cmd.ownDatabases && (c.name === "db" || c.name === "database-url"))),
];

export async function runCommand(cmd: Command, flags: Map<string, string>, env: Record<string, string | undefined>): Promise<number> {
  for (const name of cmd.required) {
    if (flags.get(name)?.trim()) continue;
    throw new UsageError(name === cmd.positional?.name ? `missing ${cmd.positional.value}` : `missing required flag --${name}`, cmd);
  }
  let opened: Db | undefined;
  const ctx: CommandContext = {
    flags,
    env,
    db: async () => (opened ??= await openDatabase(databaseSettings(env, flags))),
  };
  let out: CommandResult;
  try {
    out = await cmd.run(ctx);
  } catch (err) {
    if (opened) {
      await opened.close();
      // DESIGN §3: a failed command leaves no data folder or database behind
      removeCreatedFiles(opened);
    }
    throw err;
  }
  await opened?.close();
  if (out.written) return out.exitCode ?? 0;
  process.stdout.write(flags.get("json") === "true" ? JSON.stringify(out.json) + "\n" : out.text + "\n");
  return out.exitCode ?? 0;
}

/** A whole number >= 0 from a flag, or a usage error naming it. */
export function countFlag(flags: Map<string, string>, name: string, fallback: number): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--${name} must be a whole number >= 0, got "${raw}"`);
  return Number(raw);
}
