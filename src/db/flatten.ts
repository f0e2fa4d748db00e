// A statement the services write by hand (text, nested fragments, values and placeholders) as one text and its
// values, in one pass; each engine's store marks a value its own way (`?`, `$n`). drizzle's general renderer walks
// every fragment through its entity checks, a tracing span and partial queries merged at each level: ~8% of a sign-up
// on the embedded engine (issue 19), 16% of the server's main thread under an import on PostgreSQL (issue 47,
// bench/README.md). Anything else (a table, a column, a typed parameter, a list, inlined values) answers null: the
// store has drizzle render it.
import { Placeholder, SQL, StringChunk } from "drizzle-orm";

export interface Flat {
  sql: string;
  params: unknown[];
  /** A value is a placeholder, filled in when the statement runs. */
  placeholders: boolean;
}

export function flatten(query: SQL, mark: (n: number) => string): Flat | null {
  const params: unknown[] = [];
  let text = "";
  let placeholders = false;
  const walk = (q: SQL): boolean => {
    if ((q as unknown as { shouldInlineParams: boolean }).shouldInlineParams) return false;
    for (const chunk of q.queryChunks) {
      if (chunk instanceof StringChunk) text += chunk.value.length === 1 ? chunk.value[0] : chunk.value.join("");
      else if (chunk instanceof SQL) {
        if (!walk(chunk)) return false;
      } else if (chunk === null || typeof chunk === "string" || typeof chunk === "number" || typeof chunk === "boolean" || typeof chunk === "bigint") {
        params.push(chunk);
        text += mark(params.length);
      } else if (chunk instanceof Placeholder) {
        placeholders = true;
        params.push(chunk);
        text += mark(params.length);
      } else if (chunk !== undefined) return false;
    }
    return true;
  };
  return walk(query) ? { sql: text, params, placeholders } : null;
}
