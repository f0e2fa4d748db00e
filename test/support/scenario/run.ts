// One counters scenario's shared state (test/counters-scenario.e2e.test.ts): its seeded random streams, the server,
// the waitlists, the step being played and the mismatches found in it. Other modules read these bindings live; the
// test file moves them on (seedRun, connect, beginStep).
import type { Db } from "../../../src/db/open";
import { engine, type TestServer } from "../server";
import type { Wl } from "./model";
import type { Batch } from "./operations";
import { rng } from "../rng";


export let SEED = 0;
/** The scenario's choices (operations, their targets, batch sizes). */
export let random: () => number;
/** The checks' own choices (which pages, which single reads), so that they never change the scenario. */
export let looks: () => number;

export function seedRun(seed: number) {
  SEED = seed;
  random = rng(seed);
  looks = rng(seed ^ 0x5bd1e995);
}

export let s: TestServer;
export let db: Db;
export let key: string;

export function connect(server: TestServer, database: Db, apiKey: string) {
  [s, db, key] = [server, database, apiKey];
}

export const wls: Wl[] = [];

/** What the run did, by kind (printed at the end: a run that never reached a rule says so). */
export const tally = new Map<string, number>();
export const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);

export let step = 0;
/** What the step ran, for a failure's message. */
export let stepLog: string[] = [];
/** The step's batch (its tags created meanwhile, milestone tags included). */
export let batch: Batch;

export function beginStep(n: number, b: Batch) {
  [step, batch, stepLog] = [n, b, []];
}

/** Mismatches of the current step: each names the seed, the step, the waitlist, the subscriber and the field. */
export let bad: string[] = [];
export const note = (where: string, field: string, expected: unknown, actual: unknown) => {
  if (!Bun.deepEquals(actual, expected)) bad.push(`${where} ${field}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
};
/** Per key (a subscriber, a counter): a key on one side only compares with `missing`. */
export function noteEach(where: (k: string) => string, field: string, expected: Map<string, unknown>, actual: Map<string, unknown>, missing: unknown) {
  for (const k of new Set([...expected.keys(), ...actual.keys()])) note(where(k), field, expected.get(k) ?? missing, actual.get(k) ?? missing);
}
/** An ordering: the first place where it differs, with the lengths. */
export function noteOrder(where: string, field: string, expected: string[], actual: string[]) {
  const at = expected.findIndex((e, i) => actual[i] !== e);
  if (at >= 0 || actual.length !== expected.length) {
    const i = at >= 0 ? at : Math.min(expected.length, actual.length);
    bad.push(`${where} ${field}: first difference at place ${i + 1}: expected ${expected[i]}, got ${actual[i]} (${expected.length} expected, ${actual.length} shown)`);
  }
}
export function flush(label: string) {
  if (!bad.length) return;
  const lines = bad.slice(0, 30);
  bad = [];
  throw new Error(
    `SCENARIO_SEED=${SEED} (${engine}) step ${step} ${label}: ${lines.length} mismatch(es)\n  ${lines.join("\n  ")}\n step ${step} ran:\n    ${stepLog.join("\n    ")}`,
  );
}
