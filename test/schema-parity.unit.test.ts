// The two schemas (SQLite's schema.ts and PostgreSQL's schema.pg.ts) hold the same tables, columns, keys and
// indexes (issue 18, DIALECTS.md 3): a change to one without the other fails here.
import { expect, test } from "bun:test";
import { getTableConfig as liteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import * as lite from "../src/db/schema";
import * as pg from "../src/db/schema.pg";
import { migrations, pgMigrations } from "../src/db/migrations.gen";

const liteTables = Object.entries(lite).filter(([, v]) => v instanceof SQLiteTable) as [string, SQLiteTable][];
const pgTables = Object.entries(pg).filter(([, v]) => v instanceof PgTable) as [string, PgTable][];

/** What must agree: name, nullability, default presence, primary key, unique, generated; not the SQL type. */
const shape = (c: { name: string; notNull: boolean; hasDefault: boolean; primary: boolean; isUnique: boolean; generated?: unknown }) =>
  `${c.name} notNull=${c.notNull} default=${c.hasDefault} pk=${c.primary} unique=${c.isUnique} generated=${Boolean(c.generated)}`;

test("both dialects define the same tables under the same export names", () => {
  expect(pgTables.map(([n]) => n).sort()).toEqual(liteTables.map(([n]) => n).sort());
  expect(liteTables.length).toBeGreaterThan(15);
});

test("every table has the same columns, keys and indexes on both dialects", () => {
  for (const [name, table] of liteTables) {
    const l = liteConfig(table);
    const p = pgConfig((pg as any)[name] as PgTable);
    expect(p.name).toBe(l.name);
    expect(p.columns.map(shape)).toEqual(l.columns.map(shape));
    expect(p.primaryKeys.map((k) => k.columns.map((c) => c.name))).toEqual(l.primaryKeys.map((k) => k.columns.map((c) => c.name)));
    expect(p.foreignKeys.map((f) => f.reference().columns.map((c) => c.name).join())).toEqual(l.foreignKeys.map((f) => f.reference().columns.map((c) => c.name).join()));
    const idx = (i: { config: { name?: string; unique: boolean; where?: unknown } }) => `${i.config.name} unique=${i.config.unique} partial=${Boolean(i.config.where)}`;
    expect(p.indexes.map(idx).sort()).toEqual(l.indexes.map(idx).sort());
  }
});

test("millisecond times are 64-bit on PostgreSQL (an int4 overflows in 1970)", () => {
  for (const [, table] of pgTables) {
    for (const c of pgConfig(table).columns) {
      if (/_at$|_until$|window_start/.test(c.name)) expect(`${pgConfig(table).name}.${c.name} ${c.getSQLType()}`).toBe(`${pgConfig(table).name}.${c.name} bigint`);
    }
  }
});

test("the binary embeds the migrations of both dialects", () => {
  expect(migrations.length).toBeGreaterThan(10);
  expect(pgMigrations.map((m) => m.tag)).toContain("0001_triggers");
});
