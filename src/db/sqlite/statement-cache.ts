// Prepared-statement cache for the embedded database. @libsql/client prepares every statement on every
// call and asks for its columns twice; profiling a sign-up showed ~40% of its time in those two steps.
// Statements are reused per connection (SQLite re-prepares them itself after a schema change).
// It also asks every statement `raw(true)` to learn whether it returns rows, which throws a native
// exception for each INSERT or UPDATE: a statement's answer is remembered, and the repeat is a cheap throw.
// The same hook sets up each connection before its first statement (onEveryConnection).
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import Database from "libsql";

const CACHE_SIZE = 256;
const cached = Symbol("statementCache");
const setUp = Symbol("connectionSetUp");
let patched = false;

/**
 * What SQLite keeps per connection (`synchronous`, `foreign_keys`) for every connection to the file at `path`:
 * @libsql/client's pool opens connections as it needs them, and a PRAGMA run through the client reached only the
 * connection it borrowed (DATABASE_SYNC=normal held on the first one alone). Returns the undo, for `close`.
 */
const perFile = new Map<string, string[]>();
export function onEveryConnection(path: string, pragmas: string): () => void {
  const key = resolve(path);
  // a stack: the newest opener's settings count, and closing one leaves the others'
  const openers = perFile.get(key) ?? [];
  perFile.set(key, [...openers, pragmas]);
  let undone = false;
  return () => {
    if (undone) return;
    undone = true;
    const left = [...(perFile.get(key) ?? [])];
    left.splice(left.lastIndexOf(pragmas), 1);
    if (left.length) perFile.set(key, left);
    else perFile.delete(key);
  };
}

const samePath = (a: string, b: string) => {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
};

function setUpConnection(db: any, prepare: (this: any, sql: string) => any): void {
  // SQLite refuses `synchronous` inside a transaction (a script through `exec` may open one first): next time then
  if (db.inTransaction) return;
  db[setUp] = true;
  if (perFile.size === 0) return;
  const main = (prepare.call(db, "PRAGMA database_list").all() as { name: string; file: string }[]).find((r) => r.name === "main")?.file;
  if (!main) return;
  for (const [path, openers] of perFile) if (samePath(path, main)) db.exec(openers[openers.length - 1]);
}

export function cacheStatements(): void {
  if (patched) return;
  patched = true;
  const proto = (Database as any).prototype;
  const prepare = proto.prepare;
  let statementPatched = false;
  proto.prepare = function (this: any, sql: string) {
    if (!this[setUp]) setUpConnection(this, prepare);
    const cache: Map<string, any> = (this[cached] ??= new Map());
    let stmt = cache.get(sql);
    if (stmt) {
      // least recently used goes first
      cache.delete(sql);
      cache.set(sql, stmt);
      return stmt;
    }
    stmt = prepare.call(this, sql);
    if (!statementPatched) {
      statementPatched = true;
      const sp = Object.getPrototypeOf(stmt);
      const columns = sp.columns;
      const memo = new WeakMap<object, unknown>();
      sp.columns = function (this: object) {
        let c = memo.get(this);
        if (c === undefined) memo.set(this, (c = columns.call(this)));
        return c;
      };
      const raw = sp.raw;
      const notReader = new WeakSet<object>();
      const NOT_READER = new TypeError("The raw() method is only for statements that return data");
      sp.raw = function (this: object, toggle?: boolean) {
        if (notReader.has(this)) throw NOT_READER;
        try {
          return raw.call(this, toggle);
        } catch (err) {
          notReader.add(this);
          throw err;
        }
      };
    }
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, stmt);
    return stmt;
  };
}
