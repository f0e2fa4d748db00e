// A statement's text and values for PostgreSQL: a filled template's text (made once per template), or the statement
// flattened in one pass (flatten.ts); anything else rendered by drizzle.
import { Placeholder, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { flatten, type Flat } from "../flatten";
import { filledOf } from "../template";

const drizzle = new PgDialect();
const dollar = (n: number) => `$${n}`;

/**
 * A template's text with `?` for each value (template.ts) in PostgreSQL's `$n`, made once per text; null when it
 * holds a question mark of its own (drizzle renders it then).
 */
const pgTexts = new Map<string, string | null>();
const pgText = (text: string, values: number) => {
  let out = pgTexts.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/\?/g, () => dollar(++n));
    if (n !== values) out = null;
    pgTexts.set(text, out);
  }
  return out;
};

export function renderPg(query: SQL): Flat {
  const filled = filledOf(query);
  const text = filled && pgText(filled.text, filled.args.length);
  if (filled && text) return { sql: text, params: filled.args, placeholders: false };
  const flat = flatten(query, dollar);
  if (flat) return flat;
  const rendered = drizzle.sqlToQuery(query);
  return { sql: rendered.sql, params: rendered.params, placeholders: rendered.params.some((p) => p instanceof Placeholder) };
}
