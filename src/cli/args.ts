// Command-line parsing shared by `serve` and the admin commands: `--name value`, `--name=value`, bare booleans.
export class UsageError extends Error {}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string>;
}

/** `booleans` are flags that may stand alone (`--json`); every other flag needs a value. */
export function parseArgs(argv: string[], booleans: ReadonlySet<string>): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!name) throw new UsageError(`invalid flag "${arg}"`);
    if (eq !== -1) {
      flags.set(name, arg.slice(eq + 1));
    } else if (booleans.has(name) && (argv[i + 1] === undefined || argv[i + 1].startsWith("--") || !/^(true|false|on|off|1|0|yes|no)$/i.test(argv[i + 1]))) {
      flags.set(name, "true");
    } else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`flag --${name} needs a value`);
      flags.set(name, value);
      i++;
    }
  }
  return { positionals, flags };
}
