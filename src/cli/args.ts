// Command-line parsing shared by `serve` and the admin commands: `--name value`, `--name=value`, bare booleans,
// and the nearest valid name for a typo.
export class UsageError extends Error {
  /** `command` is the one whose usage line follows the message (none: the general usage). */
  constructor(
    message: string,
    readonly command?: { name: string },
  ) {
    super(message);
  }
}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string>;
}

/**
 * `booleans` are flags that may stand alone (`--json`); every other flag needs a value. With `known`, an unknown
 * flag is refused first, naming the nearest known one (before it could be taken for a flag missing its value).
 */
export function parseArgs(
  argv: string[],
  booleans: ReadonlySet<string>,
  known?: { names: readonly string[]; command?: { name: string }; noPositionals?: boolean },
): ParsedArgs {
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
    if (!name) throw new UsageError(`invalid flag "${arg}"`, known?.command);
    if (known && !known.names.includes(name)) throw new UsageError(`unknown flag --${name}${didYouMean(name, known.names, "--")}`, known.command);
    if (eq !== -1) {
      flags.set(name, arg.slice(eq + 1));
    } else if (booleans.has(name) && (argv[i + 1] === undefined || argv[i + 1].startsWith("--") || (!known?.noPositionals && !/^(true|false|on|off|1|0|yes|no)$/i.test(argv[i + 1])))) {
      // a command that takes no positionals reads the word after a boolean flag as its value, which the setting then
      // judges (`--rate-limits maybe` names the flag rather than "an unexpected argument")
      flags.set(name, "true");
    } else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`flag --${name} needs a value`, known?.command);
      flags.set(name, value);
      i++;
    }
  }
  return { positionals, flags };
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** ` (did you mean X?)` for the closest candidate within a few edits (or sharing a prefix), else "". */
export function didYouMean(given: string, candidates: readonly string[], prefix = ""): string {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const score = c.startsWith(given) || given.startsWith(c) ? 0.5 : distance(given, c);
    if (score < bestScore) [best, bestScore] = [c, score];
  }
  return best !== undefined && bestScore <= Math.max(2, Math.floor(given.length / 3)) ? ` (did you mean ${prefix}${best}?)` : "";
}
