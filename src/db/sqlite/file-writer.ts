// The group commit's own connection to the database file (issue 19). Through the client, every statement of a group
// went through its general path: a pooled connection, its values converted, `safeIntegers` and `raw` asked of the
// statement again, the columns read, each row built property by property; 4-8% of a sign-up on the event loop.
// Here each statement is prepared once and remembered with what it returns. What comes out is what the client
// gives (values, rows, counts, errors), so the group commit's callers see no difference. The COMMIT runs on the
// driver's own thread, so the event loop goes on serving while the WAL is written and synced.
import Database from "libsql";
// libsql's promise API: the same native addon (one copy in the binary: scripts/build.ts), whose exec runs on the
// addon's thread pool
import AsyncDatabase from "libsql/promise";
import { LibsqlError, type InArgs, type InStatement, type InValue, type ResultSet, type Row } from "@libsql/client";
// the client's own result type (its toJSON included), from the package it is built on
import { ResultSetImpl } from "@libsql/core/util";
import type { RawStatement, Rows } from "../template";

interface Prepared {
  stmt: any;
  /** For a statement that returns rows: its column names and types, and how one of its rows is built; else null. */
  reader: { columns: string[]; columnTypes: string[]; rowOf: (values: unknown[]) => Row } | null;
}

export interface FileWriter {
  /**
   * Runs the statements in one write transaction (BEGIN IMMEDIATE); their results once it has committed, or the first
   * one's error after a rollback. Only one at a time (the group commit's mutex). `beforeCommit` is called with the
   * results once they have run, the write lock still held, right before the COMMIT.
   */
  transaction(statements: InStatement[], beforeCommit?: (results: ResultSet[]) => void): Promise<ResultSet[]>;
  /**
   * An interactive transaction (`db.tx`) on this connection: BEGIN IMMEDIATE, `fn` given this connection's way of
   * running statements (as `transaction` runs them; a statement's error as the client's), then the COMMIT off the event
   * loop as a group's; a ROLLBACK when `fn` throws. Only under the group writer's lock (`exclusive`).
   */
  interactive<T>(fn: (run: (statements: InStatement[]) => ResultSet[]) => Promise<T>, options?: { durable?: boolean }): Promise<T>;
  /** Closes the connection once a commit under way has ended. */
  close(): Promise<void>;
}

const KEPT = 256;

/** toStatement marks a filled template that returns one row or none (statementTemplate's `oneRow`). */
const isOneRow = (statement: InStatement) => typeof statement === "object" && (statement as { oneRow?: boolean }).oneRow === true;
/** And one whose consecutive fillings may run as one INSERT of many rows (statementTemplate's `rows`). */
const rowsOf = (statement: InStatement): Rows | undefined => (typeof statement === "object" ? (statement as { rows?: Rows }).rows : undefined);

/** Two fillings of one rows template that may be merged: their `alike` values are the same. */
const alike = (rows: Rows, a: InStatement, b: InStatement) => {
  const [x, y] = [(a as { args: unknown[] }).args, (b as { args: unknown[] }).args];
  return rows.alikeIndexes.every((i) => x[i] === y[i]);
};

/**
 * The most rows one merged INSERT takes. Each count of rows is a statement of its own to prepare and keep (the
 * sign-up's for every count from 2 to 64 held 11.6 MB, and the binary's highest RSS under the bench's loads went
 * 142 -> 154 MB): a run is cut into a piece of a multiple of 8 rows (up to 64) and one of the rest, 14 statements in
 * all (2.5 MB). Pieces of 64, 32, 16, ... rows (six statements, 1.2 MB) did fewer sign-ups: 1.023 / 1.059 of the
 * build before merging, against 1.085 / 1.081 for every count (bench/ab.ts, 12 rounds).
 */
const MAX_ROWS = 64;
const piece = (n: number) => (n < 8 ? n : Math.min(MAX_ROWS, n - (n % 8)));

/** `timeout` as the client's (its busy timeout); the connection's pragmas come with its first statement (statement-cache.ts). */
export function fileWriter(path: string, timeout: number): FileWriter {
  // opened at the first write: a command that only reads opens none
  let conn: Database.Database | null = null;
  const connection = () => (conn ??= new Database(path, { timeout } as any));
  const prepared = new Map<string, Prepared>();
  const prepare = (text: string): Prepared => {
    let p = prepared.get(text);
    if (p) return p;
    const stmt = connection().prepare(text);
    if (stmt.reader) {
      stmt.raw(true);
      stmt.safeIntegers(true);
      const columns = stmt.columns() as { name: string; type: string | null }[];
      const names = columns.map((c) => c.name);
      p = { stmt, reader: { columns: names, columnTypes: columns.map((c) => c.type ?? ""), rowOf: rowMaker(names) } };
    } else p = { stmt, reader: null };
    if (prepared.size >= KEPT) prepared.clear();
    prepared.set(text, p);
    return p;
  };
  const plain = (text: string) => void prepare(text).stmt.run([]);
  /**
   * COMMIT on the addon's thread (its exec, given this connection): the WAL's writes and fsync (~0.4 ms a group under
   * load) no longer hold the event loop. It is still SQLite's own COMMIT: the transaction becomes visible to other
   * connections and processes only after its fsync, and the callers hear of it only after that. Nothing else uses the
   * connection meanwhile (the group commit's mutex is held until this settles).
   */
  const commitOffThread = (): Promise<void> => asyncExec.call({ db: (conn as unknown as { db: unknown }).db }, "COMMIT");
  let committing: Promise<unknown> = Promise.resolve();

  const execute = (statement: InStatement): ResultSet => {
    const text = typeof statement === "string" ? statement : statement.sql;
    const args = typeof statement === "string" ? [] : argsToSql(statement.args);
    const { stmt, reader } = prepare(text);
    if (reader) {
      // one step for a statement that returns one row or none: `all` also makes an iterator over a native cursor
      // (~4 us of a sign-up's INSERT). Every change of an INSERT/UPDATE/DELETE with RETURNING is made at its first step.
      let values: unknown[][];
      if (isOneRow(statement)) {
        const row = stmt.get(args) as unknown[] | undefined;
        values = row ? [row] : [];
      } else values = stmt.all(args);
      return new ResultSetImpl(reader.columns, reader.columnTypes, values.map(reader.rowOf), 0, undefined);
    }
    const info = stmt.run(args) as { changes: number; lastInsertRowid: number | bigint };
    return new ResultSetImpl([], [], [], info.changes, BigInt(info.lastInsertRowid));
  };

  const runRaw = (statement: RawStatement) => execute(statement).rows as unknown as Record<string, unknown>[];

  /**
   * A piece of a run of one template's INSERTs as one INSERT of their rows (issue 19): a sign-up's INSERT cost ~15%
   * less a row that way in a loop. Its triggers and RETURNING run row by row as before (each row's RETURNING sees the
   * rows before it). `first` is the place of its first row in the run. Each filling's answer is its row, found by its
   * key, or none.
   */
  const executeRows = (fillings: InStatement[], rows: Rows, first: number): ResultSet[] => {
    const args: unknown[] = [];
    const keys: unknown[] = [];
    fillings.forEach((statement, k) => {
      const values = argsToSql((statement as { args: InArgs }).args) as unknown[];
      if (rows.placeIndex >= 0) values[rows.placeIndex] = first + k;
      keys.push(values[rows.keyIndex]);
      for (const value of values) args.push(value);
    });
    const { stmt, reader } = prepare(rows.text(fillings.length));
    if (!reader) throw new Error("a rows template returns its rows");
    const byKey = new Map<unknown, Row>();
    for (const values of stmt.all(args) as unknown[][]) byKey.set(values[0], reader.rowOf(values));
    return keys.map((key) => {
      const row = byKey.get(key);
      return new ResultSetImpl(reader.columns, reader.columnTypes, row ? [row] : [], 0, undefined);
    });
  };

  /**
   * A run of one rows template's fillings, cut into pieces of many rows, with what the template puts around it (the
   * sign-up's: its counters written once for all the rows, not by the trigger for each) done once for the whole run.
   * The sign-up's five statements around a piece cost as much as three to five of its rows (bench/README.md), and a
   * run of more than eight rows, not a multiple of eight, is two pieces (1.7 a group under the bench's sign-up load).
   * With something around it, a row's place runs on through the pieces (nothing moves the waitlist's `last_seq` until
   * after the run: the k-th row's seq is `last_seq + k`); without, each piece starts again at 1 (its triggers move
   * `last_seq` row by row). Each filling's answer is its row, or none (`after` changes the rows in place).
   */
  const executeRun = (run: InStatement[], rows: Rows): ResultSet[] => {
    const around = rows.around?.((run[0] as { args: unknown[] }).args);
    around?.before(runRaw);
    const results: ResultSet[] = [];
    for (let at = 0, size = piece(run.length); at < run.length; at += size, size = piece(run.length - at)) {
      results.push(...executeRows(run.slice(at, at + size), rows, around ? at + 1 : 1));
    }
    around?.after(results.flatMap((result) => result.rows) as unknown as Record<string, unknown>[], runRaw);
    return results;
  };

  /** The statements in order, each run of one rows template's INSERTs as a few statements of many rows. */
  const executeAll = (statements: InStatement[]): ResultSet[] => {
    const results: ResultSet[] = [];
    for (let i = 0; i < statements.length; ) {
      const rows = rowsOf(statements[i]);
      let end = i + 1;
      if (rows) while (end < statements.length && rowsOf(statements[end]) === rows && alike(rows, statements[i], statements[end])) end++;
      if (end - i > 1) results.push(...executeRun(statements.slice(i, end), rows!));
      else results.push(execute(statements[i]));
      i = end;
    }
    return results;
  };

  return {
    async transaction(statements, beforeCommit) {
      try {
        plain("BEGIN IMMEDIATE");
        try {
          const results = executeAll(statements);
          beforeCommit?.(results);
          await (committing = commitOffThread());
          return results;
        } finally {
          if (conn?.inTransaction) plain("ROLLBACK");
        }
      } catch (err) {
        throw libsqlError(err);
      }
    },
    async interactive(fn, options) {
      // not durable (db.ts TxOptions): its COMMIT appends to the WAL without an fsync; the connection's own setting after
      let restore: string | null = null;
      try {
        if (options?.durable === false) {
          const level = Number(execute("PRAGMA synchronous").rows[0]?.[0]);
          if (level > 1) {
            restore = `PRAGMA synchronous = ${level}`;
            plain("PRAGMA synchronous = NORMAL");
          }
        }
        plain("BEGIN IMMEDIATE");
        const result = await fn((statements) => {
          try {
            return executeAll(statements);
          } catch (err) {
            throw libsqlError(err);
          }
        });
        await (committing = commitOffThread());
        return result;
      } catch (err) {
        throw libsqlError(err);
      } finally {
        if (conn?.inTransaction) plain("ROLLBACK");
        if (restore) plain(restore);
      }
    },
    async close() {
      await committing.catch(() => {});
      conn?.close();
      conn = null;
      prepared.clear();
    },
  };
}

const asyncExec = AsyncDatabase.prototype.exec as (this: { db: unknown }, sql: string) => Promise<void>;

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Rows as the client's: each value by column name (enumerable), by index and `length` (neither enumerable). Index and
 * length come from a prototype shared by the statement's rows, so a row is one object given plain properties in the
 * same order each time; defining 2n + 1 properties on each row left it a dictionary (0.54 us against 0.03 for the
 * sign-up's row of six, in a loop). A repeated column name (the first one holds the name) or `__proto__` takes the
 * client's way.
 */
function rowMaker(columns: string[]): (values: unknown[]) => Row {
  if (new Set(columns).size !== columns.length || columns.includes("__proto__")) return (values) => rowOf(values, columns);
  const shape = Object.create(Object.prototype);
  Object.defineProperty(shape, "length", { value: columns.length });
  columns.forEach((name, i) => Object.defineProperty(shape, i, { get: function (this: Record<string, unknown>) { return this[name]; } }));
  return (values) => {
    const row = Object.create(shape);
    for (let i = 0; i < columns.length; i++) row[columns[i]] = valueFromSql(values[i]);
    return row;
  };
}

/** Each value by index and by column name (the first of a repeated name), `length` not enumerable; as the client builds them. */
function rowOf(values: unknown[], columns: string[]): Row {
  const row = {} as Row;
  Object.defineProperty(row, "length", { value: values.length });
  for (let i = 0; i < values.length; i++) {
    const value = valueFromSql(values[i]);
    Object.defineProperty(row, i, { value });
    if (!Object.hasOwn(row, columns[i])) Object.defineProperty(row, columns[i], { value, enumerable: true, configurable: true, writable: true });
  }
  return row;
}

/** Integers as numbers, refusing one a number cannot hold exactly; blobs as ArrayBuffers (the client's "number" mode). */
function valueFromSql(value: unknown): unknown {
  if (typeof value === "bigint") {
    if (value < MIN_SAFE || value > MAX_SAFE) throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    return Number(value);
  }
  if (value instanceof Buffer) return value.buffer;
  return value;
}

const MIN_INT64 = -9223372036854775808n;
const MAX_INT64 = 9223372036854775807n;

/** The client's conversions of values sent: booleans as 1/0, dates as ms, ArrayBuffers as Buffers; named values without their sigil. */
function argsToSql(args: InArgs | undefined): unknown[] | Record<string, unknown> {
  if (args === undefined) return [];
  if (Array.isArray(args)) return args.map(valueToSql);
  const named: Record<string, unknown> = {};
  for (const name in args) named[/^[@$:]/.test(name) ? name.slice(1) : name] = valueToSql((args as Record<string, InValue>)[name]);
  return named;
}

function valueToSql(value: InValue | undefined): unknown {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    return value;
  }
  if (typeof value === "bigint") {
    if (value < MIN_INT64 || value > MAX_INT64) throw new RangeError("bigint is too large to be represented as a 64-bit integer and passed as argument");
    return value;
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value instanceof Date) return value.valueOf();
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
}

/** The driver's error as the client's: the base code (SQLITE_CONSTRAINT), the extended one, the raw number. */
function libsqlError(err: unknown): unknown {
  if (!(err instanceof Database.SqliteError)) return err;
  const e = err as Error & { code: string; rawCode?: number };
  const base = /^SQLITE_[A-Z]+/.exec(e.code)?.[0] ?? "SQLITE_UNKNOWN";
  return new LibsqlError(e.message, base, e.code, e.rawCode, e);
}
