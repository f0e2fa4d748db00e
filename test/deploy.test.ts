// The README's deployment recipe, run as written where it can be off a VPS (issue 17 item 8): the cron
// backup line as cron runs it, the settings file's mode, and the unit and Caddyfile through the tools
// operators use (`systemd-analyze`, `caddy`; each check skips, saying so, where the tool is missing).
import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "./support/server";
import { tempDir } from "./support/cleanup";

const ROOT = join(import.meta.dir, "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const UNIT = join(ROOT, "deploy", "waitlist.service");

/**
 * What cron runs for a crontab line's command (crontab(5)): an unescaped `%` ends the command (the rest
 * is its stdin, with `%` as newlines), and `\%` is a literal `%`.
 */
function cronCommand(field: string): string {
  const end = field.search(/(?<!\\)%/);
  return (end === -1 ? field : field.slice(0, end)).replace(/\\%/g, "%");
}

const sh = (script: string, env: Record<string, string> = {}) => {
  const r = Bun.spawnSync(["sh", "-c", script], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
};
const which = (tool: string) => sh(`command -v ${tool}`).code === 0;

describe("cron's % rule", () => {
  test("an unescaped % ends the command; \\% is a literal %", () => {
    expect(cronCommand("backup --to b-$(date +%F).db")).toBe("backup --to b-$(date +");
    expect(cronCommand("backup --to b-$(date +\\%F).db")).toBe("backup --to b-$(date +%F).db");
  });
});

test("the README's cron line, run the way cron runs it, writes today's backup", async () => {
  const line = README.split("\n").find((l) => /^\S+ \S+ \S+ \S+ \S+ waitlist \/usr\/local\/bin\/waitlist backup /.test(l));
  expect(line).toBeDefined();
  // /etc/cron.d format: five time fields, the user, then the command
  const command = cronCommand(line!.split(" ").slice(6).join(" "));
  const state = tempDir("waitlist-cron-");
  const db = `file:${join(state, "waitlist.db")}`;
  expect((await runCli(["account", "create", "--username", "cron", "--json"], { DATABASE_URL: db })).code).toBe(0);
  // the binary is src/main.ts under bun here; /var/lib/waitlist is the temporary folder
  const shim = join(state, "waitlist-shim");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "src", "main.ts")}" "$@"\n`);
  chmodSync(shim, 0o755);
  const run = sh(command.replaceAll("/usr/local/bin/waitlist", shim).replaceAll("/var/lib/waitlist", state));
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  // in BACKUP_DIR, as the unit sets it, named as `waitlist backup` names one there (issue 43: one path, one setting)
  const unit = readFileSync(UNIT, "utf8");
  expect(unit).toContain("Environment=BACKUP_DIR=/var/lib/waitlist/backups\n");
  const today = sh("date -u +%Y%m%d").stdout.trim();
  const made = readdirSync(join(state, "backups"));
  expect(made).toHaveLength(1);
  expect(made[0]).toMatch(new RegExp(`^waitlist-${today}T\\d{6}Z\\.db$`));
  expect(statSync(join(state, "backups", made[0])).size).toBeGreaterThan(0);
  // and the restore example reads from there
  expect(README).toMatch(/waitlist restore --from \/var\/lib\/waitlist\/backups\/waitlist-\d{8}T\d{6}Z\.db /);
});

test("the README's steps write /etc/waitlist.env readable by its owner only, even under umask 022", () => {
  const block = README.slice(README.indexOf("## Deployment"), README.indexOf("## Operations"));
  const steps = block.split("\n").map((l) => l.trim()).filter((l) => l.includes("/etc/waitlist.env") && (l.startsWith("sudo ") || l.startsWith("printf ")));
  expect(steps.length).toBeGreaterThanOrEqual(2);
  const dir = tempDir("waitlist-env-");
  const file = join(dir, "waitlist.env");
  const script = steps.map((l) => l.replaceAll("sudo ", "").replaceAll("/etc/waitlist.env", file)).join("\n");
  const run = sh(`umask 022\n${script}`);
  expect(run.code).toBe(0);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file, "utf8")).toContain("SMTP_URL=");
});

describe("the systemd unit", () => {
  const unit = readFileSync(UNIT, "utf8");
  const setting = (name: string) => unit.split("\n").filter((l) => l.startsWith(`${name}=`)).map((l) => l.slice(name.length + 1));

  test("keeps its state folder and files private, does not restart after a configuration error, allows the bounded stop", () => {
    expect(setting("StateDirectoryMode")).toEqual(["0700"]);
    expect(setting("UMask")).toEqual(["0077"]);
    expect(setting("RestartPreventExitStatus")).toEqual(["2"]);
    expect(setting("Restart")).toEqual(["on-failure"]);
    // src/cli/serve.ts bounds the stop path to about 15 s
    expect(Number(setting("TimeoutStopSec")[0])).toBeGreaterThanOrEqual(20);
  });

  const analyze = which("systemd-analyze");
  if (!analyze) console.warn("systemd-analyze checks skipped: not installed (apt-get install systemd)");

  test.skipIf(!analyze)("systemd-analyze security rates it 2.0 or better", () => {
    const r = sh(`systemd-analyze security --offline=true --no-pager "${UNIT}"`);
    const score = Number(/Overall exposure level for waitlist\.service: ([\d.]+)/.exec(r.stdout + r.stderr)?.[1]);
    expect(score).toBeLessThanOrEqual(2.0);
  });

  test.skipIf(!analyze)("systemd-analyze verify finds nothing to say", () => {
    // verify also checks that ExecStart's file is executable: a copy of the unit points at one that is
    const dir = tempDir("waitlist-unit-");
    const copy = join(dir, "waitlist.service");
    copyFileSync(UNIT, copy);
    writeFileSync(copy, unit.replace("ExecStart=/usr/local/bin/waitlist", `ExecStart=${process.execPath}`));
    const r = sh(`systemd-analyze verify "${copy}"`);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.code).toBe(0);
  });
});

const caddy = which("caddy");
if (!caddy) console.warn("caddy validate skipped: caddy is not installed (apt-get install caddy)");
test.skipIf(!caddy)("caddy validate accepts deploy/Caddyfile", () => {
  const r = sh(`caddy validate --config "${join(ROOT, "deploy", "Caddyfile")}" --adapter caddyfile`);
  expect(r.stdout + r.stderr).toContain("Valid configuration");
  expect(r.code).toBe(0);
});
