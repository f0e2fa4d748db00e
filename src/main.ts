// Entry point of the `waitlist` executable: `serve` (the default) or an admin command (DESIGN §3). Every error ends
// here: one line on stderr (or one JSON object on stdout with --json), exit code 2, no stack trace.
import { BOOLEAN_FLAGS, CONFIG_FLAGS, ConfigError } from "./config";
import { DatabaseOpenError } from "./db/open";
import { AppError } from "./http/errors";
import { didYouMean, parseArgs, UsageError } from "./cli/args";
import { CommandError, flagsOf, runCommand, type Command } from "./cli/command";
import { accountCommands } from "./cli/account";
import { keyCommands, waitlistKeyCommand } from "./cli/key";
import { userCommands } from "./cli/user";
import { backupCommand } from "./cli/backup";
import { restoreCommand } from "./cli/restore";
import { doctorCommand } from "./cli/doctor";
import { migrateDbCommand } from "./cli/migrate-db";
import { versionCommand, versionLine } from "./cli/version";
import { exportCommand, importCommand } from "./cli/import";
import { commandHelp, GENERAL_USAGE, generalHelp, usageLine } from "./cli/help";
import { serveFlags } from "./cli/serve-flags";

const SERVE: Command = {
  name: "serve",
  summary: "run the server (the default command); every setting is a variable and a flag",
  flags: serveFlags(),
  required: [],
  run: () => Promise.reject(new Error("serve runs from main")),
};
const COMMANDS: Command[] = [SERVE, ...accountCommands, ...keyCommands, waitlistKeyCommand, ...userCommands, backupCommand, restoreCommand, migrateDbCommand, importCommand, exportCommand, doctorCommand, versionCommand];
const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(" ")).map((c) => c.name.split(" ")[0]));
const TOP_LEVEL = [...new Set(COMMANDS.map((c) => c.name.split(" ")[0])), "help"];

function findCommand(argv: string[]): { cmd: Command; rest: string[] } {
  const [first, second] = argv;
  if (GROUPS.has(first)) {
    const subs = COMMANDS.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.slice(first.length + 1));
    if (second === undefined || second.startsWith("-")) throw new UsageError(`${first} needs a command: ${subs.join(", ")}`);
    const cmd = COMMANDS.find((c) => c.name === `${first} ${second}`);
    if (!cmd) throw new UsageError(`unknown ${first} command "${second}"${didYouMean(second, subs, `${first} `)}`);
    return { cmd, rest: argv.slice(2) };
  }
  const cmd = COMMANDS.find((c) => c.name === first);
  if (!cmd) throw new UsageError(`unknown command "${first}"${didYouMean(first, TOP_LEVEL)}`);
  return { cmd, rest: argv.slice(1) };
}

function help(topic: string[]): string {
  if (!topic.length) return generalHelp(COMMANDS);
  if (GROUPS.has(topic[0]) && topic.length === 1) return generalHelp(COMMANDS.filter((c) => c.name.startsWith(`${topic[0]} `)));
  const { cmd } = findCommand(topic);
  return commandHelp(cmd, cmd !== SERVE);
}

async function main(argv: string[]): Promise<number> {
  const env = process.env;
  const first = argv[0];
  if (first === "--version" || first === "-v" || first === "-V") {
    process.stdout.write(versionLine() + "\n");
    return 0;
  }
  if (first === "help" || first === "--help" || first === "-h") {
    process.stdout.write(help(argv.slice(1)) + "\n");
    return 0;
  }
  if (first === undefined || first === "serve" || first.startsWith("-")) {
    const { positionals, flags } = parseArgs(first === "serve" ? argv.slice(1) : argv, new Set([...BOOLEAN_FLAGS, "help"]), { names: [...CONFIG_FLAGS, "help"], command: SERVE, noPositionals: true });
    if (flags.has("help")) {
      process.stdout.write(commandHelp(SERVE, false) + "\n");
      return 0;
    }
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"${didYouMean(positionals[0], TOP_LEVEL)}`, SERVE);
    // the server (the app, its pages, jobs and their libraries) is loaded only to serve
    const { serve } = await import("./cli/serve");
    await serve(flags, env);
    return -1; // keeps running
  }
  if (GROUPS.has(first) && (argv[1] === "--help" || argv[1] === "-h")) {
    process.stdout.write(help([first]) + "\n");
    return 0;
  }
  const found = findCommand(argv);
  const cmd = found.cmd;
  const rest = found.rest.map((a) => (a === "-h" ? "--help" : a));
  const known = flagsOf(cmd);
  const names = [...known.map((f) => f.name), "help"];
  const { positionals, flags } = parseArgs(rest, new Set([...known.filter((f) => !f.value).map((f) => f.name), "help"]), { names, command: cmd });
  if (flags.has("help")) {
    process.stdout.write(commandHelp(cmd) + "\n");
    return 0;
  }
  if (cmd.positional && positionals.length === 1 && !flags.has(cmd.positional.name)) flags.set(cmd.positional.name, positionals[0]);
  else if (positionals.length) throw new UsageError(`unexpected argument "${positionals[cmd.positional ? 1 : 0] ?? positionals[0]}"`, cmd);
  return runCommand(cmd, flags, env);
}

/** The error's code for `--json`, and whether a usage line follows it. */
function describe(err: unknown): { code: string; message: string; usage?: string } {
  if (err instanceof UsageError) {
    const cmd = err.command ? COMMANDS.find((c) => c.name === err.command!.name) : undefined;
    return { code: "usage", message: err.message, usage: cmd ? usageLine(cmd, cmd !== SERVE) : GENERAL_USAGE };
  }
  if (err instanceof ConfigError) return { code: "config", message: err.message };
  if (err instanceof DatabaseOpenError || err instanceof CommandError || err instanceof AppError) return { code: err.code, message: err.message };
  // not a user's mistake, but still one line: no stack trace for an operator to wade through
  const message = err instanceof Error ? err.message : String(err);
  return { code: "internal", message: `unexpected error: ${message.split("\n")[0]}` };
}

const argv = process.argv.slice(2);
const json = argv.some((a) => a === "--json" || /^--json=(true|on|1|yes)$/i.test(a));
main(argv).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    const { code, message, usage } = describe(err);
    if (json) process.stdout.write(JSON.stringify({ error: { code, message } }) + "\n");
    else process.stderr.write(`waitlist: ${message}\n${usage ? usage + "\n" : ""}`);
    process.exit(2);
  },
);
