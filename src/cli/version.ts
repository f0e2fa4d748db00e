// `waitlist version` / `--version`: the release, the git commit it was built from, the schema it writes, and Bun.
import pkg from "../../package.json";
import { SCHEMA_VERSION } from "../db/open";
import { pgMigrations } from "../db/migrations.gen";
import type { Command } from "./command";

// scripts/build.ts defines it in the binary; from a checkout it is read from git
declare const WAITLIST_COMMIT: string | undefined;

function commit(): string {
  if (typeof WAITLIST_COMMIT === "string") return WAITLIST_COMMIT;
  try {
    const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: import.meta.dir, stdout: "pipe", stderr: "ignore" });
    const out = r.stdout.toString().trim();
    return r.exitCode === 0 && out ? out : "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * The binary's schema versions, one per engine (issue 18): `schema` keeps its meaning (the embedded database's, the
 * SQLite migration count) for scripts that read it; `pg_schema` counts the PostgreSQL migrations. Nothing is opened.
 */
export function versionInfo() {
  return { version: pkg.version, commit: commit(), schema: SCHEMA_VERSION, pg_schema: pgMigrations.length, bun: Bun.version };
}

export const versionLine = () => {
  const v = versionInfo();
  return `waitlist ${v.version} (commit ${v.commit}, schema ${v.schema}, pg schema ${v.pg_schema}, bun ${v.bun})`;
};

export const versionCommand: Command = {
  name: "version",
  summary: "print the version, git commit, schema versions (embedded and PostgreSQL) and Bun version",
  flags: [],
  required: [],
  async run() {
    return { json: versionInfo(), text: versionLine() };
  },
};
