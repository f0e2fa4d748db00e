// Entry point of the `waitlist` executable: `serve` (the default) or an admin command (DESIGN §3).
import { BOOLEAN_FLAGS, CONFIG_FLAGS, ConfigError } from "./config";
import { AppError } from "./http/errors";
import { parseArgs, UsageError } from "./cli/args";
import { runCommand, type Command } from "./cli/command";
import { accountCommands } from "./cli/account";
import { keyCommands, waitlistKeyCommand } from "./cli/key";
import { backupCommand } from "./cli/backup";
import { serve } from "./cli/serve";

const GROUPS: Record<string, Record<string, Command>> = { account: accountCommands, key: keyCommands };
const SINGLE: Record<string, Command> = { "waitlist-key": waitlistKeyCommand, backup: backupCommand };

const USAGE = [
  "usage: waitlist <command> [flags]",
  "",
  "  serve [--port N] [--host H] [--db URL] [--base-url URL] [...]   (the default command; every variable of the README is also a flag)",
  ...Object.entries(GROUPS).flatMap(([, cmds]) => Object.values(cmds).map((c) => `  ${c.usage}`)),
  ...Object.values(SINGLE).map((c) => `  ${c.usage}`),
  "",
  "Admin commands take --db URL (or DATABASE_URL) and print one JSON object with --json.",
].join("\n");

async function main(argv: string[]): Promise<number> {
  const env = process.env;
  const [first, second] = argv;
  if (first === "help" || first === "--help" || first === "-h") {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  if (first === undefined || first === "serve" || first.startsWith("--")) {
    const { positionals, flags } = parseArgs(first === "serve" ? argv.slice(1) : argv, BOOLEAN_FLAGS);
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    for (const name of flags.keys()) if (!CONFIG_FLAGS.has(name)) throw new UsageError(`unknown flag --${name}`);
    await serve(flags, env);
    return -1; // keeps running
  }
  const group = GROUPS[first];
  const cmd = group ? group[second ?? ""] : SINGLE[first];
  if (!cmd) throw new UsageError(group ? `unknown ${first} command "${second ?? ""}"` : `unknown command "${first}"`);
  const { positionals, flags } = parseArgs(argv.slice(group ? 2 : 1), new Set(["json"]));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  await runCommand(cmd, flags, env);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`waitlist: ${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    if (err instanceof AppError) {
      process.stderr.write(`waitlist: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`waitlist: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
