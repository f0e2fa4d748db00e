// A statement whose text is put together once, its values filled in per call (issue 19): the sign-up's INSERT has
// 26 values and two nested fragments, and building it with drizzle's `sql` and flattening it again was about 8% of a
// sign-up's time on the event loop. A filled statement is a drizzle `SQL` like any other: the embedded engine takes
// its text and values as they are (toStatement), anything else renders its chunks, made only when asked for.
import { Placeholder, SQL, StringChunk, sql } from "drizzle-orm";

const FILLED = Symbol("filled template");

interface Filled {
  /** The text with `?` for each value (SQLite's form). */
  text: string;
  args: unknown[];
  /** The statement returns one row or none (an INSERT of one row with RETURNING): the writer steps it once. */
  oneRow: boolean;
}

/** The text and values of a filled template, for the embedded engine; undefined for any other statement. */
export const filledOf = (query: SQL): Filled | undefined => (query as { [FILLED]?: Filled })[FILLED];

/**
 * `build` writes the statement with `values.name` where each value goes; it must hold only text, nested `sql`
 * fragments and those values (no columns or tables: they render per engine). Returns the statement for given values.
 * `oneRow`: the statement never returns more than one row, so the embedded writer takes its answer in one step
 * (file-writer.ts); a second row would be dropped.
 */
export function statementTemplate<K extends string>(
  names: readonly K[],
  build: (values: Record<K, SQL>) => SQL,
  options: { oneRow?: boolean } = {},
): (values: Record<K, unknown>) => SQL {
  const oneRow = options.oneRow ?? false;
  const marks = Object.fromEntries(names.map((name) => [name, sql`${sql.placeholder(name)}`])) as Record<K, SQL>;
  // the text between values, and which value goes in each gap
  const parts: string[] = [""];
  const order: K[] = [];
  const walk = (chunks: unknown[]) => {
    for (const chunk of chunks) {
      if (chunk instanceof StringChunk) parts[parts.length - 1] += chunk.value.join("");
      else if (chunk instanceof SQL) walk(chunk.queryChunks);
      else if (chunk instanceof Placeholder && names.includes(chunk.name as K)) {
        order.push(chunk.name as K);
        parts.push("");
      } else throw new Error(`a statement template holds text, fragments and its named values only (found ${String(chunk)})`);
    }
  };
  walk(build(marks).queryChunks);
  const text = parts.join("?");
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
    query[FILLED] = { text, args, oneRow };
    return query;
  };
}
