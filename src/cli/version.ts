// `waitlist version` / `--version`: the release, the git commit it was built from, the schema it writes, and Bun.
import pkg from "../../package.json";
import { SCHEMA_VERSION } from "../db/client";
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

export function versionInfo() {
  return { version: pkg.version, commit: commit(), schema: SCHEMA_VERSION, bun: Bun.version };
}

export const versionLine = () => {
  const v = versionInfo();
  return `waitlist ${v.version} (commit ${v.commit}, schema ${v.schema}, bun ${v.bun})`;
};

export const versionCommand: Command = {
  name: "version",
  summary: "print the version, git commit, schema version and Bun version",
  flags: [],
  required: [],
  async run() {
    return { json: versionInfo(), text: versionLine() };
  },
};
