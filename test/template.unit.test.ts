// A statement template (src/db/template.ts) says the same as the `sql` it stands for: the embedded engine's fast path
// (its text and values as they are) and every engine's own rendering of its chunks give the statement written out
// with drizzle's `sql` and the same values, and one template's calls do not share values.
import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { renderPg } from "../src/db/pg/render";
import { toStatement } from "../src/db/sqlite/store";
import { filledOf, statementTemplate } from "../src/db/template";

const sqlite = new SQLiteSyncDialect();
const pg = new PgDialect();
/** The embedded engine's statement: text and values. */
const statement = (query: ReturnType<typeof sql>) => toStatement(query) as { sql: string; args: unknown[] };

/** The statement written out with drizzle's `sql`: with plain values, or with a template's marks for them. */
const written = (values: Record<"id" | "email" | "points" | "referrer", unknown>) =>
  sql`INSERT INTO t (id, email, points, ref) VALUES (${values.id}, ${values.email}, ${values.points}, (SELECT id FROM t WHERE id = ${values.referrer})) ON CONFLICT (email) DO NOTHING ${sql.raw("RETURNING id, (SELECT count(*) FROM t) AS n")} -- ${values.id}`;
const NAMES = ["id", "email", "points", "referrer"] as const;
const insert = statementTemplate(NAMES, written);

const cases = [
  { id: "a1", email: "a@x.io", points: 50, referrer: null },
  { id: "b2", email: "it's \"quoted\" ?", points: 0, referrer: "a1" },
];

test("a filled template renders as the statement written with sql, on the embedded fast path and on each engine's renderer", () => {
  for (const values of cases) {
    const filled = insert(values);
    const expected = written(values);
    expect(filledOf(filled)).toBeDefined();
    expect(statement(filled)).toEqual(statement(expected));
    const { sql: text, params } = sqlite.sqlToQuery(expected);
    expect(statement(filled)).toEqual({ sql: text, args: params });
    expect(sqlite.sqlToQuery(filled)).toEqual(sqlite.sqlToQuery(expected));
    expect(pg.sqlToQuery(filled)).toEqual(pg.sqlToQuery(expected));
    expect(pg.sqlToQuery(filled).sql).toContain("$5");
  }
});

test("each call keeps its own values", () => {
  const [a, b] = cases.map((values) => insert(values));
  expect(statement(a).args).toEqual(["a1", "a@x.io", 50, null, "a1"]);
  expect(statement(b).args).toEqual(["b2", "it's \"quoted\" ?", 0, "a1", "b2"]);
});

test("a template that names a column or a value it was not given is refused when it is made", () => {
  const t = { id: sql.identifier("id") };
  expect(() => statementTemplate(["x"] as const, (v) => sql`SELECT ${t.id} FROM t WHERE x = ${v.x}`)).toThrow(/text, fragments and its named values/);
  expect(() => statementTemplate(["x"] as const, () => sql`SELECT 1 FROM t WHERE x = ${sql.placeholder("y")}`)).toThrow(/named values/);
  expect(() => statementTemplate(["x"] as const, () => sql`SELECT 1 FROM t WHERE x = ${"literal"}`)).toThrow(/named values/);
});

test("a template made as one row or none says so to the embedded writer, with the same text and values", () => {
  const one = statementTemplate(NAMES, written, { oneRow: true });
  const [values] = cases;
  expect(toStatement(one(values)) as object).toEqual({ ...statement(written(values)), oneRow: true });
  expect(toStatement(insert(values))).not.toHaveProperty("oneRow");
});

test("a fragment marked alone must hold no values and follow the row", () => {
  const make = (build: Parameters<typeof statementTemplate<"id">>[1]) => () => statementTemplate(["id"] as const, build, { rows: { key: "id" } });
  expect(make((v, row, alone) => sql`INSERT INTO t (id) VALUES ${row(sql`(${v.id})`)} RETURNING id, ${alone(sql`${v.id}`)} AS x`)).toThrow(/inside its row/);
  expect(make((v, row, alone) => sql`INSERT INTO t (id, n) SELECT ${alone(sql.raw("1"))} FROM ${row(sql`(${v.id})`)} RETURNING id`)).toThrow(/alone/);
  expect(make((v, row, alone) => sql`INSERT INTO t (id) VALUES ${row(sql`(${v.id})`)} RETURNING id, ${alone(sql.raw("1"))} AS x`)).not.toThrow();
});

test("each engine's one-pass rendering of a hand-written statement is drizzle's own; what it does not flatten drizzle renders", () => {
  const ids = ["a", "b", "c"];
  const statements = [
    sql`SELECT 1`,
    sql`SELECT * FROM t WHERE id = ${"x?"} AND n > ${3} AND ok = ${true} AND gone IS ${null}`,
    sql`SELECT * FROM t WHERE id IN (${sql.join(ids.map((id) => sql`${id}`), sql`, `)}) ${sql`AND (a, b) > (${1.5}, ${2})`} ${sql``}`,
    sql`UPDATE t SET v = ${"it's"} WHERE id = ${"a"}${sql.raw(" RETURNING id")}`,
    sql`UPDATE t SET n = ${sql.placeholder("prev_changed")} WHERE id = ${"a"}`,
    // a list, a column name: drizzle's
    sql`SELECT * FROM t WHERE id IN ${ids}`,
    sql`SELECT ${sql.identifier("id")} FROM t WHERE id = ${"a"}`,
  ];
  const drizzlePg = (query: ReturnType<typeof sql>) => {
    const { sql: text, params } = pg.sqlToQuery(query);
    return { sql: text, params };
  };
  for (const query of statements) {
    expect(renderPg(query)).toEqual({ ...drizzlePg(query), placeholders: query === statements[4] });
    const { sql: text, params } = sqlite.sqlToQuery(query);
    if (query !== statements[4]) expect(statement(query)).toEqual({ sql: text, args: params });
  }
  // a filled template: its text once, in PostgreSQL's form
  const filled = insert(cases[1]);
  expect(renderPg(filled)).toEqual({ ...drizzlePg(written(cases[1])), placeholders: false });
});
