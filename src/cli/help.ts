// `waitlist help [COMMAND]` and `--help`: each command's usage line and its flags with their defaults.
import { flagsOf, type Command, type Flag } from "./command";

const flagUsage = (f: Flag) => (f.value ? `--${f.name} ${f.value}` : `--${f.name}`);

/** `waitlist account create --username NAME [--plan P] [--db URL] [--json]` */
export function usageLine(cmd: Command, common = true): string {
  const flags = common ? flagsOf(cmd).filter((f) => f.name !== "database-url" && f.name !== "database-pool-size") : cmd.flags;
  const parts = flags.map((f) => (cmd.required.includes(f.name) ? flagUsage(f) : `[${flagUsage(f)}]`));
  return ["usage: waitlist", cmd.name, ...parts, ...(cmd.positional ? [cmd.positional.value] : [])].join(" ");
}

export function commandHelp(cmd: Command, common = true): string {
  const flags = common ? flagsOf(cmd) : cmd.flags;
  const width = Math.max(...flags.map((f) => flagUsage(f).length), 10) + 2;
  const lines = flags.map((f) => {
    const notes = [cmd.required.includes(f.name) ? "required" : null, f.fallback !== undefined ? `default: ${f.fallback}` : null].filter(Boolean);
    return `  ${flagUsage(f).padEnd(width)}${f.help}${notes.length ? ` (${notes.join("; ")})` : ""}`;
  });
  const positional = cmd.positional ? ["", `${cmd.positional.value}: ${cmd.positional.help}`] : [];
  return [usageLine(cmd, common), "", cmd.summary, ...positional, "", "flags:", ...lines].join("\n");
}

export function generalHelp(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    "usage: waitlist <command> [flags]",
    "",
    "commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${"help [COMMAND]".padEnd(width)}this text, or a command's flags with their defaults`,
    "",
    "`waitlist --version` prints the version. `waitlist COMMAND --help` lists a command's flags.",
    "Admin commands take --db URL (or DATABASE_URL); with --json they print one JSON object, errors included.",
    "Errors exit 2 with one line on stderr (with --json: {\"error\":{\"code\",\"message\"}} on stdout).",
  ].join("\n");
}

export const GENERAL_USAGE = "usage: waitlist <command> [flags]   (`waitlist help` lists the commands)";
