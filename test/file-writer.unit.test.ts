// The group commit's own connection (src/db/file-writer.ts) answers as @libsql/client does for the same statements:
// values sent (booleans, dates, blobs, named values), rows read (by index and by name, integers as numbers, blobs),
// counts, and errors (codes the dialect and the error handler read); a failing statement rolls its transaction back.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createClient, LibsqlError, type Client, type InStatement, type ResultSet } from "@libsql/client";
import { sql } from "drizzle-orm";
import { toStatement } from "../src/db/sqlite/store";
import { fileWriter, type FileWriter } from "../src/db/sqlite/file-writer";
import { sqliteDialect } from "../src/db/sqlite/dialect";
import { clientTransaction } from "../src/db/sqlite/group-writer";
import { cacheStatements, onEveryConnection } from "../src/db/sqlite/statement-cache";
import { statementTemplate } from "../src/db/template";
import { removeDir, tempDir } from "./support/cleanup";

const dir = tempDir("waitlist-file-writer-");
// two files alike, one written through the client and one through the writer, so their row ids match too
let client: Client;
let writer: FileWriter;
let writerFile: Client;
const SCHEMA = "CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, flag INTEGER, at INTEGER, data BLOB, note TEXT)";
beforeAll(async () => {
  client = createClient({ url: `file:${join(dir, "client.db")}`, timeout: 5_000 });
  writerFile = createClient({ url: `file:${join(dir, "writer.db")}`, timeout: 5_000 });
  for (const c of [client, writerFile]) {
    await c.execute("PRAGMA journal_mode = WAL");
    await c.execute(SCHEMA);
  }
  writer = fileWriter(join(dir, "writer.db"), 5_000);
});
afterAll(async () => {
  await writer?.close();
  client?.close();
  writerFile?.close();
  removeDir(dir);
});

/** What a test compares: everything a caller of the group commit reads of a result. */
const seen = (r: ResultSet) => ({
  columns: r.columns,
  rows: r.rows.map((row) => ({ byIndex: Array.from(row as ArrayLike<unknown>), byName: { ...row }, length: row.length })),
  rowsAffected: r.rowsAffected,
  lastInsertRowid: r.lastInsertRowid,
  json: JSON.parse(JSON.stringify(r)),
});

/** The same statements in a write transaction of the client's, as the group commit runs them without a file writer. */
const onClient = (statements: InStatement[]) => clientTransaction(client, statements);

const blob = new Uint8Array([0, 1, 2, 255]).buffer;
const statements = (id: string): InStatement[] => [
  { sql: "INSERT INTO t (id, n, flag, at, data, note) VALUES (?, ?, ?, ?, ?, ?)", args: [id, 2 ** 40, true, new Date(1_700_000_000_000), blob, null] },
  { sql: "INSERT INTO t (id, n, flag, at, data, note) VALUES (:id, $n, @flag, 0, NULL, 'x') ON CONFLICT (id) DO NOTHING RETURNING id, n, flag, n AS n", args: { ":id": `${id}-2`, $n: 7, "@flag": false } },
  { sql: "UPDATE t SET note = 'y' WHERE id LIKE ?", args: [`${id}%`] },
  `SELECT id, n, flag, at, data, note, n FROM t WHERE id LIKE '${id}%' ORDER BY id`,
  // every name once: its rows share their index and length (file-writer.ts rowMaker)
  `SELECT id, n AS amount, note FROM t WHERE id LIKE '${id}%' ORDER BY id`,
];

test("the same statements give the same results, values, rows and counts as the client's", async () => {
  const byClient = await onClient(statements("c"));
  const byWriter = await writer.transaction(statements("c"));
  const normalize = (r: ResultSet) => JSON.parse(JSON.stringify(seen(r), (_, v) => (typeof v === "bigint" ? `${v}n` : v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v)));
  expect(byWriter.map(normalize)).toEqual(byClient.map(normalize));
  // the read's blob comes back as an ArrayBuffer, its integers as numbers
  const row = byWriter[3].rows[0];
  expect(row.data).toBeInstanceOf(ArrayBuffer);
  expect([...new Uint8Array(row.data as ArrayBuffer)]).toEqual([0, 1, 2, 255]);
  expect(row.n).toBe(2 ** 40);
  expect(row.at).toBe(1_700_000_000_000);
  expect(row.flag).toBe(1);
  expect(byWriter[1].rowsAffected).toBe(0); // a statement that returns rows counts none, as the client's
  expect(byWriter[2].rowsAffected).toBe(2);
});

test("an integer past 2^53 is refused as the client refuses it; an undefined value too", async () => {
  for (const c of [client, writerFile]) await c.execute("INSERT INTO t (id, n) VALUES ('big', 9007199254740993)");
  const read = { sql: "SELECT n FROM t WHERE id = 'big'", args: [] };
  const clientError = await onClient([read]).catch((e) => e);
  const writerError = await writer.transaction([read]).catch((e) => e);
  expect(writerError).toBeInstanceOf(RangeError);
  expect((writerError as Error).message).toBe((clientError as Error).message);
  // not `expect(promise).rejects`: bun:test waits for that promise in a nested event loop, which stalls the dispatch of
  // native threadsafe-function calls (the writer's COMMIT settles through one; oven-sh/bun#36831)
  const undefinedError = await writer.transaction([{ sql: "INSERT INTO t (id) VALUES (?)", args: [undefined as unknown as null] }]).catch((e) => e);
  expect((undefinedError as Error).message).toMatch(/undefined cannot be passed/);
});

test("a failing statement fails with the client's codes and rolls the whole transaction back", async () => {
  const failing = (id: string): InStatement[] => [
    { sql: "INSERT INTO t (id) VALUES (?)", args: [`${id}-new`] },
    { sql: "INSERT INTO t (id) VALUES (?)", args: ["c"] }, // there already
  ];
  const clientError = (await onClient(failing("fc")).catch((e) => e)) as LibsqlError;
  const writerError = (await writer.transaction(failing("fw")).catch((e) => e)) as LibsqlError | undefined;
  expect(writerError).toBeInstanceOf(LibsqlError);
  expect([writerError!.code, writerError!.extendedCode, writerError!.rawCode]).toEqual([clientError.code, clientError.extendedCode, clientError.rawCode]);
  // the client's batch names the code twice ("SQLITE_CONSTRAINT: SQLITE_CONSTRAINT: UNIQUE ..."); the cause is the same
  expect(clientError.message.endsWith(writerError!.message)).toBe(true);
  expect(writerError!.message).toBe("SQLITE_CONSTRAINT: UNIQUE constraint failed: t.id");
  expect(sqliteDialect.uniqueKey(writerError)).toBe("t.id");
  for (const c of [client, writerFile]) expect((await c.execute("SELECT id FROM t WHERE id IN ('fc-new', 'fw-new')")).rows).toEqual([]);
  // and the connection writes again afterwards
  expect((await writer.transaction([{ sql: "INSERT INTO t (id) VALUES ('after')", args: [] }]))[0].rowsAffected).toBe(1);
});

test("a statement marked as one row or none (a filled template's oneRow) answers as the client does, in one step", async () => {
  // one row inserted, then none (the id is there already): with RETURNING, as the sign-up's INSERT
  const insert = (id: string, n: number): InStatement =>
    Object.assign({ sql: "INSERT INTO t (id, n) VALUES (?, ?) ON CONFLICT (id) DO NOTHING RETURNING id, n, n + 1 AS next", args: [id, n] }, { oneRow: true });
  const twice = (id: string) => [insert(id, 1), insert(id, 2), { sql: "SELECT n FROM t WHERE id = ?", args: [id] }];
  const byClient = await onClient(twice("one"));
  const byWriter = await writer.transaction(twice("one"));
  expect(byWriter.map(seen)).toEqual(byClient.map(seen));
  expect(byWriter[0].rows.map((r): Record<string, unknown> => ({ ...r }))).toEqual([{ id: "one", n: 1, next: 2 }]);
  expect(byWriter[1].rows).toEqual([]);
  // the first insert was made, the second changed nothing
  expect(byWriter[2].rows.map((r) => r.n)).toEqual([1]);
});

test("a COMMIT that fails (a deferred foreign key) rejects with SQLite's codes, rolls back, and the connection writes again", async () => {
  // the COMMIT runs on the driver's thread; its failure must come back as any statement's does
  const path = join(dir, "deferred.db");
  const setup = createClient({ url: `file:${path}`, timeout: 5_000 });
  await setup.execute("PRAGMA journal_mode = WAL");
  await setup.executeMultiple(`CREATE TABLE parent (id TEXT PRIMARY KEY);
    CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);`);
  // foreign keys on for the writer's connection, as the service sets them up (statement-cache.ts)
  cacheStatements();
  const undo = onEveryConnection(path, "PRAGMA foreign_keys = ON");
  const deferred = fileWriter(path, 5_000);
  try {
    const orphan = { sql: "INSERT INTO child (id, parent) VALUES (?, ?)", args: ["c1", "nobody"] };
    // the statement itself passes: the constraint is checked at COMMIT
    const error = (await deferred.transaction([orphan]).catch((e) => e)) as LibsqlError;
    expect(error).toBeInstanceOf(LibsqlError);
    expect([error.code, error.extendedCode]).toEqual(["SQLITE_CONSTRAINT", "SQLITE_CONSTRAINT_FOREIGNKEY"]);
    expect((await setup.execute("SELECT id FROM child")).rows).toEqual([]);
    const results = await deferred.transaction([
      { sql: "INSERT INTO parent (id) VALUES ('p')", args: [] },
      { sql: "INSERT INTO child (id, parent) VALUES ('c2', 'p')", args: [] },
    ]);
    expect(results.map((r) => r.rowsAffected)).toEqual([1, 1]);
    expect((await setup.execute("SELECT id, parent FROM child")).rows.map((r): Record<string, unknown> => ({ ...r }))).toEqual([{ id: "c2", parent: "p" }]);
  } finally {
    await deferred.close();
    undo();
    setup.close();
  }
});

test("a run of one rows template's INSERTs runs as few statements: each answers its own row, a conflict none, places 1..n in each piece", async () => {
  const insert = statementTemplate(
    ["id", "n", "place"] as const,
    (v, row) => sql`INSERT INTO t (id, n, note) VALUES ${row(sql`(${v.id}, ${v.n}, 'place ' || CAST(${v.place} AS INTEGER))`)} ON CONFLICT (id) DO NOTHING RETURNING id, n, note`,
    { oneRow: true, rows: { key: "id", place: "place" } },
  );
  const statement = (id: string, n: number) => toStatement(insert({ id, n, place: 1 }));
  // a row there already, then a run of four (one of them that row again), a plain statement, and a run of one
  await writer.transaction([statement("r0", 0)]);
  const results = await writer.transaction([
    statement("r1", 1),
    statement("r0", 9),
    statement("r2", 2),
    statement("r3", 3),
    "UPDATE t SET flag = 1 WHERE id = 'r1'",
    statement("r4", 4),
  ]);
  expect(results.map((r) => r.rows.map((row) => ({ ...row }) as Record<string, unknown>))).toEqual([
    [{ id: "r1", n: 1, note: "place 1" }],
    [],
    [{ id: "r2", n: 2, note: "place 3" }],
    [{ id: "r3", n: 3, note: "place 4" }],
    [],
    [{ id: "r4", n: 4, note: "place 1" }],
  ]);
  expect(results[4].rowsAffected).toBe(1);
  const { rows } = await writerFile.execute("SELECT id, n, flag FROM t WHERE id LIKE 'r%' ORDER BY id");
  expect(rows.map((r) => [r.id, r.n, r.flag])).toEqual([["r0", 0, null], ["r1", 1, 1], ["r2", 2, null], ["r3", 3, null], ["r4", 4, null]]);
  // a run of eleven: pieces of eight and three rows (a statement is prepared for each count of rows: not all of them)
  const eleven = await writer.transaction(Array.from({ length: 11 }, (_, i) => statement(`s${i}`, i)));
  expect(eleven.map((r) => r.rows[0]?.note)).toEqual([...[1, 2, 3, 4, 5, 6, 7, 8], ...[1, 2, 3]].map((k) => `place ${k}`));
});

test("a rows template merges only fillings alike in its alike values; a merged piece has NULL for its alone fragment, between its around's before and after", async () => {
  const log: string[] = [];
  const insert = statementTemplate(
    ["id", "n", "kind"] as const,
    (v, row, alone) =>
      sql`INSERT INTO t (id, n, note) VALUES ${row(sql`(${v.id}, ${v.n}, ${v.kind})`)} ON CONFLICT (id) DO NOTHING RETURNING id, ${alone(sql.raw("(1 + 1)"))} AS two, note`,
    {
      oneRow: true,
      rows: {
        key: "id",
        alike: ["kind"],
        around: (v) => ({
          before(run) {
            log.push(`before ${v.kind} (${v.id}): ${run({ sql: "SELECT count(*) AS n FROM t WHERE note = ?", args: [v.kind as string] })[0].n} of its kind`);
          },
          after(rows, run) {
            log.push(`after ${v.kind}: ${rows.map((r) => r.id).join(" ")}, ${run({ sql: "SELECT count(*) AS n FROM t WHERE note = ?", args: [v.kind as string] })[0].n} of its kind`);
            for (const r of rows) r.two = -2;
          },
        }),
      },
    },
  );
  const statement = (id: string, kind: string) => toStatement(insert({ id, n: 0, kind }));
  await writer.transaction([statement("k0", "a")]);
  log.length = 0;
  const results = await writer.transaction([statement("k1", "a"), statement("k2", "a"), statement("k0", "a"), statement("k3", "b"), statement("k4", "b"), statement("k5", "c")]);
  expect(results.map((r) => r.rows.map((row) => ({ ...row }) as Record<string, unknown>))).toEqual([
    [{ id: "k1", two: -2, note: "a" }],
    [{ id: "k2", two: -2, note: "a" }],
    [],
    [{ id: "k3", two: -2, note: "b" }],
    [{ id: "k4", two: -2, note: "b" }],
    // alone: computed by its own statement, no hook
    [{ id: "k5", two: 2, note: "c" }],
  ]);
  expect(log).toEqual(["before a (k1): 1 of its kind", "after a: k1 k2, 3 of its kind", "before b (k3): 0 of its kind", "after b: k3 k4, 2 of its kind"]);
});

test("a run with something around it has it done once, however many pieces it is cut into, and its places run on through them", async () => {
  const log: string[] = [];
  const insert = statementTemplate(
    ["id", "place"] as const,
    (v, row) => sql`INSERT INTO t (id, n, note) VALUES ${row(sql`(${v.id}, 0, 'place ' || CAST(${v.place} AS INTEGER))`)} ON CONFLICT (id) DO NOTHING RETURNING id, note`,
    {
      oneRow: true,
      rows: {
        key: "id",
        place: "place",
        around: () => ({
          before: () => void log.push("before"),
          after: (rows) => void log.push(`after ${rows.map((r) => r.id).join(" ")}`),
        }),
      },
    },
  );
  const statement = (id: string) => toStatement(insert({ id, place: 1 }));
  await writer.transaction([statement("w0")]);
  log.length = 0;
  // eleven fillings, one of them there already: pieces of eight and three rows, one before and one after for all
  const ids = Array.from({ length: 11 }, (_, i) => (i === 5 ? "w0" : `w${i + 1}`));
  const results = await writer.transaction(ids.map(statement));
  expect(results.map((r) => r.rows[0]?.note ?? null)).toEqual(ids.map((id, i) => (id === "w0" ? null : `place ${i + 1}`)));
  expect(log).toEqual([`before`, `after ${ids.filter((id) => id !== "w0").join(" ")}`]);
});
