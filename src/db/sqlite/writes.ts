// What a statement writes on the embedded engine, derived from the schema rather than kept by hand (issue 43 item 4):
// - the tables it names (INSERT INTO, REPLACE INTO, UPDATE, DELETE FROM, also behind a WITH);
// - what their foreign keys' ON DELETE and ON UPDATE actions change in other tables (drizzle's table objects);
// - what the triggers the migrations leave write when it fires them (their CREATE TRIGGER text, drizzle/*.sql),
//   and what those writes fire and cascade to in turn.
// The read caches hold across this process's own commits that wrote none of their tables (own-commits.ts), so a
// table missing here would serve stale rows. test/writes.unit.test.ts compares this model with a migrated database:
// its tables, foreign keys and triggers, and which tables a cascaded delete really changes.
import { getTableName, is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { migrations } from "../migrations.gen";
import * as schema from "../schema";

/** What a group of statements wrote: table names, "waitlists#counts" for the counters the triggers keep, or everything. */
export type Written = ReadonlySet<string> | "all";

/** This engine's own tables beside the schema's: the migrations' log and the deferred counters' marker (sign-ups.ts). */
export const ENGINE_TABLES = ["schema_migrations", "counters_deferred"] as const;

type Op = "INSERT" | "UPDATE" | "DELETE";

export interface Trigger {
  name: string;
  table: string;
  op: Op;
  /** The columns of UPDATE OF, or null for every column. */
  columns: string[] | null;
  /** Its WHEN condition, or "". */
  when: string;
  /** Its statements, between BEGIN and END. */
  body: string;
  /** Its CREATE TRIGGER statement as the migration has it. */
  sql: string;
}

/** The schema's tables (drizzle's objects). */
export const schemaTables = (): SQLiteTable[] => (Object.values(schema) as unknown[]).filter((v): v is SQLiteTable => is(v, SQLiteTable));

export interface Cascade {
  parent: string;
  child: string;
  onDelete: string;
  onUpdate: string;
}

/** Every foreign key, as its parent, child and actions. */
export function foreignKeys(tables = schemaTables()): Cascade[] {
  return tables.flatMap((table) =>
    getTableConfig(table).foreignKeys.map((fk) => ({
      parent: getTableName(fk.reference().foreignTable),
      child: getTableName(table),
      onDelete: fk.onDelete ?? "no action",
      onUpdate: fk.onUpdate ?? "no action",
    })),
  );
}

const NAME = String.raw`[\`"\[]?(\w+)[\`"\]]?`;
const CREATE_TRIGGER = new RegExp(
  String.raw`^CREATE\s+(?:TEMP\w*\s+)?TRIGGER\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}\s+(?:BEFORE\s+|AFTER\s+|INSTEAD\s+OF\s+)?(INSERT|DELETE|UPDATE(?:\s+OF\s+([^]*?))?)\s+ON\s+${NAME}((?:\s+FOR\s+EACH\s+ROW)?(?:\s+WHEN\s+[^]*?)?)\s+BEGIN\b([^]*)\bEND\s*;?\s*$`,
  "i",
);
const DROP_TRIGGER = new RegExp(String.raw`^DROP\s+TRIGGER\s+(?:IF\s+EXISTS\s+)?${NAME}`, "i");
const DROP_TABLE = new RegExp(String.raw`^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${NAME}`, "i");
const unquote = (s: string) => s.trim().replace(/^[`"[]|[`"\]]$/g, "");

/** The triggers the migrations leave, by name: each CREATE TRIGGER, less those dropped since (or with their table). */
export function triggersOf(texts: string[] = migrations.map((m) => m.sql)): Map<string, Trigger> {
  const triggers = new Map<string, Trigger>();
  for (const text of texts) {
    // each statement without the comment lines before it
    for (const statement of text.split("--> statement-breakpoint").map((s) => s.replace(/^(?:\s*--[^\n]*\n)*/, "").trim()).filter(Boolean)) {
      const create = CREATE_TRIGGER.exec(statement);
      if (create) {
        const [, name, event, columns, table, when, body] = create;
        const op = event.split(/\s/)[0].toUpperCase() as Op;
        triggers.set(name, {
          name,
          table,
          op,
          columns: columns ? columns.split(",").map(unquote) : null,
          when: when.replace(/^\s*(?:FOR\s+EACH\s+ROW\s*)?(?:WHEN\s+)?/i, "").trim(),
          body,
          sql: statement,
        });
        continue;
      }
      if (/^CREATE\s+(?:TEMP\w*\s+)?TRIGGER\b/i.test(statement)) throw new Error(`a trigger the write model cannot read: ${statement.slice(0, 120)}`);
      const dropped = DROP_TRIGGER.exec(statement);
      if (dropped) triggers.delete(dropped[1]);
      const table = DROP_TABLE.exec(statement);
      if (table) for (const [name, t] of triggers) if (t.table === table[1]) triggers.delete(name);
    }
  }
  return triggers;
}

/** A statement's direct writes: the table, how, and (an UPDATE) the columns its SET assigns. */
interface Target {
  table: string;
  ops: Op[];
  set: string[] | null;
}

// an upsert's DO UPDATE names no table
const TARGET = /\b(INSERT\s+(?:OR\s+(\w+)\s+)?INTO|REPLACE\s+INTO|(?<!\bDO\s+)UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+[`"[]?(\w+)[`"\]]?/gi;

function targetsOf(text: string): Target[] {
  const targets: Target[] = [];
  for (const m of text.matchAll(TARGET)) {
    const verb = m[1].toUpperCase();
    const table = m[3].toLowerCase();
    if (verb.startsWith("UPDATE")) targets.push({ table, ops: ["UPDATE"], set: setColumns(text.slice(m.index! + m[0].length)) });
    else if (verb.startsWith("DELETE")) targets.push({ table, ops: ["DELETE"], set: null });
    else {
      // a REPLACE deletes the row it replaces; an upsert updates it
      const ops: Op[] = ["INSERT"];
      if (verb.startsWith("REPLACE") || m[2]?.toUpperCase() === "REPLACE") ops.push("DELETE");
      if (/\bDO\s+UPDATE\b/i.test(text.slice(m.index!))) ops.push("UPDATE");
      targets.push({ table, ops, set: null });
    }
  }
  return targets;
}

/** The columns an UPDATE's SET assigns (the text after `UPDATE table`), or null when it cannot tell. */
function setColumns(rest: string): string[] | null {
  const set = /^\s+SET\s+/i.exec(rest);
  if (!set) return null;
  const columns: string[] = [];
  let depth = 0;
  let start = set[0].length;
  for (let i = start; i <= rest.length; i++) {
    const c = rest[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    const end = i === rest.length || c === ";" || (depth === 0 && /^\s(?:WHERE|FROM|RETURNING)\b/i.test(rest.slice(i, i + 11)));
    if ((depth === 0 && c === ",") || end) {
      const column = /^\s*[`"]?(\w+)[`"]?\s*=/.exec(rest.slice(start, i));
      if (!column) return null;
      columns.push(column[1].toLowerCase());
      start = i + 1;
      if (end) break;
    }
  }
  return columns;
}

/** A statement that writes: INSERT, UPDATE, DELETE or REPLACE, also behind a WITH. */
const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b|^\s*WITH\b[^]*\b(?:INSERT|UPDATE|DELETE)\b/i;
export const writes = (sql: string) => WRITE.test(sql);

export interface WriteModel {
  /** What the statements write, with their cascades and triggers. */
  writtenBy(statements: string[]): Written;
  /** Per table, its counter columns: an UPDATE of those alone is written as `table#counts`. */
  counters: Map<string, Set<string>>;
}

/**
 * The model over the schema's foreign keys and the migrations' triggers.
 *
 * A table's counter columns are those its UPDATE triggers want unchanged (`WHEN NEW.c = OLD.c`), less what such a
 * trigger sets itself: `waitlists_version` bumps a waitlist's version for every change but its counts, so an UPDATE
 * of only `subscribers_count`, `views_count` or `last_seq` leaves what the caches read of a waitlist as it was.
 */
export function writeModel(keys: Cascade[] = foreignKeys(), triggers: Trigger[] = [...triggersOf().values()]): WriteModel {
  const counters = new Map<string, Set<string>>();
  for (const t of triggers) {
    if (t.op !== "UPDATE") continue;
    const unchanged = [...t.when.matchAll(/\bNEW\.(\w+)\s*=\s*OLD\.(\w+)/gi)].filter((m) => m[1] === m[2]).map((m) => m[1].toLowerCase());
    const own = new Set(targetsOf(t.body).filter((x) => x.table === t.table).flatMap((x) => x.set ?? []));
    const kept = unchanged.filter((c) => !own.has(c));
    if (kept.length) counters.set(t.table, new Set(kept));
  }
  /** A trigger that wants the counters unchanged does not fire for an UPDATE of counters alone. */
  const skipsCounters = (t: Trigger) => counters.has(t.table) && [...counters.get(t.table)!].every((c) => new RegExp(`\\bNEW\\.${c}\\s*=\\s*OLD\\.${c}\\b`, "i").test(t.when));

  const countersOnly = (target: Target) => {
    const kept = counters.get(target.table);
    return !!kept && target.set !== null && target.set.every((c) => kept.has(c));
  };

  /** Adds what writing `table` by `op` writes (the table, its cascades, its triggers') to `written`. */
  const visit = (table: string, op: Op, onlyCounters: boolean, written: Set<string>, seen: Set<string>) => {
    const key = `${table} ${op} ${onlyCounters}`;
    if (seen.has(key)) return;
    seen.add(key);
    written.add(onlyCounters ? `${table}#counts` : table);
    for (const k of keys) {
      if (k.parent !== table) continue;
      const action = op === "DELETE" ? k.onDelete : op === "UPDATE" && !onlyCounters ? k.onUpdate : "no action";
      if (action === "cascade") visit(k.child, op, false, written, seen);
      else if (action === "set null" || action === "set default") visit(k.child, "UPDATE", false, written, seen);
    }
    for (const t of triggers) {
      if (t.table !== table || t.op !== op || (onlyCounters && skipsCounters(t))) continue;
      for (const target of targetsOf(t.body)) for (const o of target.ops) visit(target.table, o, o === "UPDATE" && countersOnly(target), written, seen);
    }
  };

  const byText = new Map<string, Written>();
  const KNOWN_TEXTS = 1_024;
  const ofText = (text: string): Written => {
    let written = byText.get(text);
    if (written) return written;
    const targets = targetsOf(text);
    // a write whose target this cannot read: everything, to be safe
    if (!targets.length && WRITE.test(text)) return "all";
    const found = new Set<string>();
    const seen = new Set<string>();
    for (const target of targets) for (const op of target.ops) visit(target.table, op, op === "UPDATE" && countersOnly(target), found, seen);
    if (byText.size >= KNOWN_TEXTS) byText.clear();
    byText.set(text, found);
    return found;
  };

  return {
    counters,
    // per statement text, once: a group repeats the same few texts (a turn's sign-ups are one INSERT each)
    writtenBy(statements) {
      const written = new Set<string>();
      for (const text of statements) {
        const one = ofText(text);
        if (one === "all") return "all";
        for (const table of one) written.add(table);
      }
      return written;
    },
  };
}

let model: WriteModel | null = null;

/** What the statements write (the schema's model, built on first use). */
export function writtenBy(statements: string[]): Written {
  model ??= writeModel();
  return model.writtenBy(statements);
}
