// A statement whose text is put together once, its values filled in per call (issue 19): the sign-up's INSERT has
// 26 values and two nested fragments, and building it with drizzle's `sql` and flattening it again was about 8% of a
// sign-up's time on the event loop. A filled statement is a drizzle `SQL` like any other: the embedded engine takes
// its text and values as they are (toStatement), anything else renders its chunks, made only when asked for.
import { Placeholder, SQL, StringChunk, sql } from "drizzle-orm";

const FILLED = Symbol("filled template");

/**
 * Consecutive fillings of one INSERT template, run as one INSERT of many rows (issue 19): the embedded writer merges a
 * group's run of them (file-writer.ts). Its text for `n` rows, which of a row's values is its key (the first column
 * RETURNING gives, by which each filling finds its row) and which is its place among the rows (1 for one alone).
 */
export interface Rows {
  text(n: number): string;
  keyIndex: number;
  placeIndex: number;
  /** The values consecutive fillings must share to be merged. */
  alikeIndexes: number[];
  /** What the writer does before and after a run of merged INSERTs, given its first filling's values. */
  around?: (args: readonly unknown[]) => Around;
}

/** A statement as the embedded writer runs it (SQLite's text with `?` for each value), and a way to run one. */
export interface RawStatement {
  sql: string;
  args: (string | number | null)[];
}
export type Run = (statement: RawStatement) => Record<string, unknown>[];

/** What the embedded writer does around a run of merged INSERTs (one or more), in its transaction. */
export interface Around {
  before(run: Run): void;
  /**
   * Given the rows the run's INSERTs returned, as the writer answers them, in the order of their VALUES (a repeat has
   * none); may change them.
   */
  after(rows: Record<string, unknown>[], run: Run): void;
}

/** What a template's `rows` option names. */
export interface RowsOption<K extends string> {
  key: K;
  place?: K;
  alike?: K[];
  around?: (values: Record<K, unknown>) => Around;
}

interface Filled {
  /** The text with `?` for each value (SQLite's form). */
  text: string;
  args: unknown[];
  /** The statement returns one row or none (an INSERT of one row with RETURNING): the writer steps it once. */
  oneRow: boolean;
  rows?: Rows;
}

/** The text and values of a filled template, for the embedded engine; undefined for any other statement. */
export const filledOf = (query: SQL): Filled | undefined => (query as { [FILLED]?: Filled })[FILLED];

/** Fragments `row()` marked as the VALUES row of an INSERT template, and those `alone()` marked. */
const ROW_MARKS = new WeakSet<SQL>();
const ALONE_MARKS = new WeakSet<SQL>();

/**
 * `build` writes the statement with `values.name` where each value goes; it must hold only text, nested `sql`
 * fragments and those values (no columns or tables: they render per engine). Returns the statement for given values.
 * `oneRow`: the statement never returns more than one row, so the embedded writer takes its answer in one step
 * (file-writer.ts); a second row would be dropped.
 * `rows`: an INSERT of one row whose `build` wraps its VALUES row in `row(...)`, with every value inside it, and whose
 * RETURNING gives `key` first; `place` (if named) is the row's place among merged rows, 1 for a row alone
 * (`last_seq + place` numbers merged rows apart). Consecutive fillings whose `alike` values are equal may then run as
 * one INSERT (`Rows`), with what `around` gives for the first one's values done before and after it. A fragment
 * without values wrapped in `alone(...)` is computed by a statement of one row only: a merged one has NULL there (its
 * `around` fills it in).
 */
export function statementTemplate<K extends string>(
  names: readonly K[],
  build: (values: Record<K, SQL>, row: (tuple: SQL) => SQL, alone: (fragment: SQL) => SQL) => SQL,
  options: { oneRow?: boolean; rows?: RowsOption<K> } = {},
): (values: Record<K, unknown>) => SQL {
  const oneRow = options.oneRow ?? false;
  const marks = Object.fromEntries(names.map((name) => [name, sql`${sql.placeholder(name)}`])) as Record<K, SQL>;
  // the text between values, and which value goes in each gap
  const parts: string[] = [""];
  const order: K[] = [];
  // where the marked row and the fragments marked alone start and end: [part, offset in it]
  const bounds: [number, number][] = [];
  const alones: [number, number][] = [];
  const walk = (chunks: unknown[]) => {
    for (const chunk of chunks) {
      if (chunk instanceof StringChunk) parts[parts.length - 1] += chunk.value.join("");
      else if (chunk instanceof SQL) {
        const marked = ROW_MARKS.has(chunk) ? bounds : ALONE_MARKS.has(chunk) ? alones : null;
        marked?.push([parts.length - 1, parts[parts.length - 1].length]);
        walk(chunk.queryChunks);
        marked?.push([parts.length - 1, parts[parts.length - 1].length]);
      } else if (chunk instanceof Placeholder && names.includes(chunk.name as K)) {
        order.push(chunk.name as K);
        parts.push("");
      } else throw new Error(`a statement template holds text, fragments and its named values only (found ${String(chunk)})`);
    }
  };
  const mark = (set: WeakSet<SQL>) => (fragment: SQL) => {
    const marked = sql`${fragment}`;
    set.add(marked);
    return marked;
  };
  walk(build(marks, mark(ROW_MARKS), mark(ALONE_MARKS)).queryChunks);
  const text = parts.join("?");
  const rows = options.rows ? rowsOf(text, parts, order, bounds, alones, options.rows) : undefined;
  // every filled statement of the template inherits from one SQL whose chunks are made from the filling's values
  // when asked for: a filling is two small objects (a new SQL given a getter of its own was ~1.5% of a sign-up's
  // main thread in a profile)
  const shared = new SQL([]);
  Object.defineProperty(shared, "queryChunks", {
    get(this: { [FILLED]: Filled }) {
      const { args } = this[FILLED];
      return parts.flatMap((part, i) => (i < args.length ? [new StringChunk(part), args[i]] : [new StringChunk(part)]));
    },
  });
  return (values) => {
    const args = new Array(order.length);
    for (let i = 0; i < order.length; i++) args[i] = values[order[i]];
    const query = Object.create(shared) as SQL & { [FILLED]: Filled };
    query[FILLED] = { text, args, oneRow, rows };
    return query;
  };
}

/**
 * The many-rows form of a template's INSERT: its text with the marked row repeated and NULL for each fragment marked
 * alone, cached per count.
 */
function rowsOf<K extends string>(
  text: string,
  parts: string[],
  order: K[],
  bounds: [number, number][],
  alones: [number, number][],
  names: RowsOption<K>,
): Rows {
  const offset = ([part, at]: [number, number]) => parts.slice(0, part).reduce((sum, p) => sum + p.length + 1, 0) + at;
  if (bounds.length !== 2) throw new Error("a rows template marks its one VALUES row with row()");
  const [start, end] = bounds;
  // every value inside the row: the merged statement's values are the rows' values one after another
  if (start[0] !== 0 || end[0] !== parts.length - 1) throw new Error("a rows template has all its values inside its row");
  const head = text.slice(0, offset(start));
  const tuple = text.slice(offset(start), offset(end));
  let tail = text.slice(offset(end));
  // fragments marked alone, after the row (its RETURNING), last first: NULL in the merged text
  for (let i = alones.length - 2; i >= 0; i -= 2) {
    const [from, to] = [offset(alones[i]) - offset(end), offset(alones[i + 1]) - offset(end)];
    if (from < 0 || alones[i][0] !== alones[i + 1][0]) throw new Error("a fragment marked alone holds no values and follows the row");
    tail = `${tail.slice(0, from)}NULL${tail.slice(to)}`;
  }
  const once = (name: K) => (order.indexOf(name) === order.lastIndexOf(name) ? order.indexOf(name) : -2);
  const keyIndex = once(names.key);
  const placeIndex = names.place === undefined ? -1 : once(names.place);
  if (keyIndex < 0 || placeIndex === -2) throw new Error("a rows template names its key (and place) once each");
  const alikeIndexes = (names.alike ?? []).map((name) => order.indexOf(name));
  if (alikeIndexes.includes(-1)) throw new Error("a rows template's alike values are among its values");
  const { around } = names;
  const texts = new Map<number, string>();
  return {
    text(n) {
      let t = texts.get(n);
      if (t === undefined) texts.set(n, (t = head + Array.from({ length: n }, () => tuple).join(", ") + tail));
      return t;
    },
    keyIndex,
    placeIndex,
    alikeIndexes,
    around: around && ((args) => around(Object.fromEntries(order.map((name, i) => [name, args[i]])) as Record<K, unknown>)),
  };
}
