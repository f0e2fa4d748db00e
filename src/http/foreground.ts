// Issue 47: work in the background (an import's batches, the deletion of its staged rows) gives way to requests. The
// requests this process is handling are known (request-log.ts marks each one's start and end); a background step
// starts only after a turn of the event loop and once none is in hand, or after MAX_WAIT_MS under steady traffic, so a
// request meets at most the one step that was running when it came. Each step is sized to take about a target time
// (`paced`): on the embedded engine a step holds the event loop for its whole length; on PostgreSQL it holds the
// waitlist's line lock (subscribers/lock.ts). Work that would take the whole machine (staging) also rests between
// steps while requests come (`rest`). A step also waits while the database's upkeep holds background work (a
// WAL checkpoint catching up: background.ts), and while any is under way the memory budget forces no collection
// (memory.ts).

import { backgroundHeld, inBackground } from "../background";

/** Requests in hand, by their start (performance.now()); one whose end was never seen is dropped after STALE_MS. */
const inHand = new Map<object, number>();
const STALE_MS = 30_000;
/** When a request last ended (performance.now()): requests are coming while one ended within TRAFFIC_MS (`rest`). */
let lastEnded = -Infinity;
const TRAFFIC_MS = 1_000;
/** How long a step waits for the requests in hand before it runs anyway (the import still moves under steady traffic). */
const MAX_WAIT_MS = 50;
const waiting = new Set<() => void>();
/**
 * What a step may take: a request that comes meanwhile waits for it (issue 47: sign-ups' p99 through an import under
 * twice idle). 2 ms gave a p99 of 15-17 ms through a 100,000-row import, 1 ms 13 ms, for a third fewer rows a second
 * (bench/README.md).
 */
export const STEP_MS = 1;

export function requestStarted(request: object): void {
  inHand.set(request, performance.now());
}

export function requestEnded(request: object): void {
  if (inHand.delete(request)) lastEnded = performance.now();
  for (const wake of waiting) wake();
}

/**
 * After a step of work that takes as much of the machine as it is given (an upload's staging: the file parsed and its
 * rows inserted as fast as the database takes them), rests for as long as the step took while requests are coming (one
 * in hand other than `self`, or one ended within TRAFFIC_MS): half of the machine is left to them, the database's
 * share too, which giving way on the event loop alone does not leave. With no traffic the work goes at full speed.
 * Staging on PostgreSQL under 100 sign-ups a second: their p99 while staged 38-53 ms without (30,000 rows; 85 ms over
 * the 85 s of 1,000,000), 17-20 with (200,000 rows, staged in 33-36 s; bench/README.md, 2026-12-07 (late night)).
 */
export async function rest(took: number, self?: object): Promise<void> {
  if (trafficComing(self)) await new Promise((resolve) => setTimeout(resolve, took));
}

/** A request in hand other than `self`, or one ended within TRAFFIC_MS. */
export const trafficComing = (self?: object) => busy(self) || performance.now() - lastEnded < TRAFFIC_MS;

/** A request in hand other than `self` (the upload a step works for). */
function busy(self?: object): boolean {
  const others = () => inHand.size - (self && inHand.has(self) ? 1 : 0);
  if (others() === 0) return false;
  const stale = performance.now() - STALE_MS;
  for (const [request, at] of inHand) if (at < stale) inHand.delete(request);
  return others() > 0;
}

/** A turn of the event loop: what came in meanwhile (requests, answers) is handled before what follows. */
export const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A turn of the event loop, then until no request is in hand (at most MAX_WAIT_MS); `self`, the request the work is
 * done for (an upload read as it comes), is not waited for.
 */
export async function giveWay(self?: object): Promise<void> {
  await turn();
  // the database's upkeep (a checkpoint) may hold background work (background.ts)
  for (let held = backgroundHeld(); held; held = backgroundHeld()) await held;
  if (!busy(self)) return;
  await new Promise<void>((resolve) => {
    const wake = (timedOut?: true) => {
      if (!timedOut && busy(self)) return;
      clearTimeout(timer);
      waiting.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, MAX_WAIT_MS, true);
    waiting.add(wake);
  });
  // what the request left behind it (its response going out) goes first
  await turn();
}

/**
 * Runs `step(size)` until it answers false (nothing left) or `deadline` (a performance.now() time) passes, giving way
 * before each step and sizing the next to take about STEP_MS (`stepSizer`). Answers "done" or "more".
 */
export async function paced(step: (size: number) => Promise<boolean>, options: PacedOptions): Promise<"done" | "more"> {
  return inBackground(() => pacedLoop(step, options));
}

/** `rests`: the steps take the machine while they run (`rest`). */
type PacedOptions = { first: number; max: number; deadline?: number; rests?: boolean };

async function pacedLoop(step: (size: number) => Promise<boolean>, options: PacedOptions): Promise<"done" | "more"> {
  const sizer = stepSizer(options.first, options.max);
  for (;;) {
    await giveWay();
    const started = performance.now();
    if (!(await step(sizer.size))) return "done";
    const took = performance.now() - started;
    sizer.took(took);
    if (options.deadline !== undefined && performance.now() >= options.deadline) return "more";
    if (options.rests) await rest(took);
  }
}

/**
 * The size of the next step, from how long the last one took: about STEP_MS. A step's fixed part (its transaction's
 * round trips on PostgreSQL, ~3-10 ms there under an import) would keep a step of STEP_MS at one unit: once a step of
 * one unit took longer, the target is that fixed part (the fastest such step) and STEP_MS more, or twice the fixed
 * part when that is less. On PostgreSQL a step holds the waitlist's line for most of its length, and a sign-up that
 * comes meanwhile waits for it: twice the fixed part (3-7 rows) held it ~5 ms at the median and 15-30 ms at the p99,
 * its fixed part and STEP_MS (1-2 rows) 1.6 and 5 ms, for a third fewer rows a second (bench/README.md, 2026-12-07).
 * `holds: false`, for steps whose fixed part is only waiting for the database and holds nothing a request waits for
 * (an upload's staged rows): half of each step is its units, twice the fixed part, or STEP_MS of them when that is
 * more. A staging step of its fixed part and STEP_MS was ~20 rows on PostgreSQL, 1,000 rows a second at most.
 */
export function stepSizer(first: number, max: number, options: { holds?: boolean } = {}): { readonly size: number; took(ms: number): void } {
  const holds = options.holds ?? true;
  let size = first;
  /** The fastest step of one unit: about the fixed part of a step. */
  let fixed = Infinity;
  return {
    get size() {
      return size;
    },
    took(ms) {
      if (size === 1) fixed = Math.min(fixed, ms);
      const target = fixed === Infinity ? STEP_MS : holds ? Math.max(STEP_MS, Math.min(2 * fixed, fixed + STEP_MS)) : Math.max(2 * fixed, fixed + STEP_MS);
      // at most double or halve at a time: one slow step (a checkpoint, a page fault) does not swing the size
      const next = size * Math.min(2, Math.max(0.5, target / Math.max(ms, 0.01)));
      size = Math.max(1, Math.min(max, Math.round(next)));
    },
  };
}
