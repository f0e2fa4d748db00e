// The commits this process made itself, and what they wrote (issue 19). A read cache checks its entries against
// the change stamp, which moves with every commit anywhere; under a stream of sign-ups on this instance that meant
// every cached key lookup missed, though a sign-up changes nothing a key lookup reads. When every commit between an
// entry's stamp and the current one is known here, by its stamps before and after, and none wrote a table the
// entry depends on, the entry still holds. A commit of any other process or connection is unknown, so the entry is
// read afresh: correctness across instances rests on the stamp alone, as before.
import type { ChangeStamp } from "../db";

/** What a group of statements wrote: table names, "waitlists#counts" for the counters the triggers keep, or everything. */
export type Written = ReadonlySet<string> | "all";

const KEPT = 4_096;
/** The longest run of own commits walked back through; past it the entry is read afresh. */
const MAX_WALK = 512;

export interface OwnCommits {
  /** A commit of this process: the stamp just before it and just after, and what it wrote. */
  record(before: string, after: string, written: Written): void;
  /**
   * The commit this process is making now (or null once it has ended): `before` read with the write lock held, so the
   * next transaction after it is this commit. The COMMIT ends on another thread, and a request may read its stamp
   * before the group commit has heard of it and recorded it.
   */
  underWay(commit: { before: string; written: Written } | null): void;
  /** True when every commit from `from` to `to` is known and none wrote any of `tables`. */
  cleanSince(from: ChangeStamp, to: ChangeStamp, tables: ReadonlySet<string>): boolean;
}

export function ownCommits(): OwnCommits {
  const steps = new Map<string, { before: string; written: Written }>();
  let current: { before: string; written: Written; count: number | null } | null = null;
  /** A stamp's step: recorded, or the commit under way once its one transaction shows (its stamp is the next count). */
  const stepTo = (at: string) =>
    steps.get(at) ?? (current !== null && current.count !== null && transactionCount(at) === current.count + 1 ? current : undefined);
  return {
    record(before, after, written) {
      if (steps.size >= KEPT) steps.delete(steps.keys().next().value!);
      steps.set(after, { before, written });
    },
    underWay(commit) {
      current = commit && { ...commit, count: transactionCount(commit.before) };
    },
    cleanSince(from, to, tables) {
      if (typeof from !== "string" || typeof to !== "string") return false;
      let at = to;
      for (let i = 0; i < MAX_WALK && at !== from; i++) {
        const step = stepTo(at);
        if (!step || step.written === "all") return false;
        for (const table of step.written) if (tables.has(table)) return false;
        at = step.before;
      }
      return at === from;
    },
  };
}

/** The tables a statement writes directly: INSERT INTO, REPLACE INTO, UPDATE, DELETE FROM, also behind a WITH. */
const TARGET = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+["`]?(\w+)/gi;

/** An UPDATE of a waitlist's counters alone (views): `waitlists_version` leaves its version as it is for those. */
const COUNTERS_ONLY = /^\s*UPDATE\s+waitlists\s+SET\s+((?:subscribers_count|views_count|last_seq)\s*=[^,=]*?)(?:,\s*(?:subscribers_count|views_count|last_seq)\s*=[^,=]*?)*\s+WHERE\b/i;

/**
 * What statements write, with what SQLite's triggers and cascades write for them (drizzle/*.sql): a subscriber's
 * row moves the rank counters, the daily counts and the waitlist's counters (never its version, which
 * `waitlists_version` leaves alone for those); deleting an account or a waitlist cascades to almost everything.
 */
export function writtenBy(statements: string[]): Written {
  const written = new Set<string>();
  for (const text of statements) {
    const one = writtenByOne(text);
    if (one === "all") return "all";
    for (const table of one) written.add(table);
  }
  return written;
}

/** Per statement text, once: a group repeats the same few texts (a turn's sign-ups are one INSERT each). */
const known = new Map<string, Written>();
const KNOWN_TEXTS = 1_024;

function writtenByOne(text: string): Written {
  let written = known.get(text);
  if (written) return written;
  written = tablesOf(text);
  if (known.size >= KNOWN_TEXTS) known.clear();
  known.set(text, written);
  return written;
}

function tablesOf(text: string): Written {
  if (COUNTERS_ONLY.test(text)) return new Set(["waitlists#counts"]);
  const written = new Set<string>();
  for (const m of text.matchAll(TARGET)) {
    const table = m[1].toLowerCase();
    if (table === "subscribers") written.add("subscribers").add("rank_counts").add("daily_stats").add("waitlists#counts");
    else if ((table === "accounts" || table === "waitlists") && /^\s*DELETE\b/i.test(m[0])) return "all";
    else written.add(table);
  }
  return written;
}

/**
 * The WAL index header's transaction counter from a stamp (`iChange:mxFrame:salt`, see client.ts); null for any
 * other stamp.
 */
export function transactionCount(stamp: ChangeStamp): number | null {
  if (typeof stamp !== "string") return null;
  const n = Number(stamp.slice(0, stamp.indexOf(":")));
  return Number.isInteger(n) ? n : null;
}
