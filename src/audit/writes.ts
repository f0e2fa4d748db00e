// Issue 48: the Db facade's writes carry the request's audit row (scope.ts) in their transaction, on either engine:
// a `write` group gets its INSERT as its last statement, an `exec` and a `tx` run it in the same transaction.
import { sql, type SQL } from "drizzle-orm";
import { now, sortableToken } from "../clock";
import type { Db } from "../db/db";
import { putBack, take, type AuditEntry } from "./scope";

const WRAPPED = Symbol("audited writes");

export const auditInsert = (e: AuditEntry, at = now()): SQL =>
  sql`INSERT INTO audit_log (id, account_id, at, actor_type, actor_id, actor_name, action, target, ip, user_agent)
    VALUES (${`aud_${sortableToken(20)}`}, ${e.accountId}, ${at}, ${e.actor.type}, ${e.actor.id}, ${e.actor.name}, ${e.action}, ${e.target}, ${e.ip}, ${e.userAgent})`;

/** Makes `db`'s own `write`, `exec` and `tx` carry the audit row of the request they run for (once per db). */
export function auditWrites(db: Db): Db {
  const marked = db as Db & { [WRAPPED]?: true };
  if (marked[WRAPPED]) return db;
  marked[WRAPPED] = true;
  const write = db.write.bind(db);
  const exec = db.exec.bind(db);
  const tx = db.tx.bind(db);
  const carrying = async <T>(entry: AuditEntry, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      putBack(entry);
      throw err;
    }
  };
  db.write = (queries) => {
    const entry = take();
    if (!entry) return write(queries);
    return carrying(entry, async () => (await write([...queries, auditInsert(entry)])).slice(0, -1));
  };
  db.exec = (query) => {
    const entry = take();
    if (!entry) return exec(query);
    return carrying(entry, () =>
      tx(async (t) => {
        const result = await t.exec(query);
        await t.exec(auditInsert(entry));
        return result;
      }),
    );
  };
  db.tx = (fn, options) => {
    const entry = take();
    if (!entry) return tx(fn, options);
    return carrying(entry, () =>
      tx(async (t) => {
        const result = await fn(t);
        await t.exec(auditInsert(entry));
        return result;
      }, options),
    );
  };
  return db;
}
