// The commits this process made itself, and what they wrote (issue 19). A read cache checks its entries against
// the change stamp, which moves with every commit anywhere; under a stream of sign-ups on this instance that meant
// every cached key lookup missed, though a sign-up changes nothing a key lookup reads. When every commit between an
// entry's stamp and the current one is known here, by its stamps before and after, and none wrote a table the
// entry depends on, the entry still holds. A commit of any other process or connection is unknown, so the entry is
// read afresh: correctness across instances rests on the stamp alone, as before.
import type { ChangeStamp } from "../db";
import type { Written } from "./writes";

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

/**
 * The WAL index header's transaction counter from a stamp (`iChange:mxFrame:salt`, see client.ts); null for any
 * other stamp.
 */
export function transactionCount(stamp: ChangeStamp): number | null {
  if (typeof stamp !== "string") return null;
  const n = Number(stamp.slice(0, stamp.indexOf(":")));
  return Number.isInteger(n) ? n : null;
}
