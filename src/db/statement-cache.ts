// Prepared-statement cache for the embedded database. @libsql/client prepares every statement on every
// call and asks for its columns twice; profiling a sign-up showed ~40% of its time in those two steps.
// Statements are reused per connection (SQLite re-prepares them itself after a schema change).
// It also asks every statement `raw(true)` to learn whether it returns rows, which throws a native
// exception for each INSERT or UPDATE: a statement's answer is remembered, and the repeat is a cheap throw.
import Database from "libsql";

const CACHE_SIZE = 256;
const cached = Symbol("statementCache");
let patched = false;

export function cacheStatements(): void {
  if (patched) return;
  patched = true;
  const proto = (Database as any).prototype;
  const prepare = proto.prepare;
  let statementPatched = false;
  proto.prepare = function (this: any, sql: string) {
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
