// The data layer's rules (issue 43): services know no engine. Outside src/db/ and src/cli/ no file imports a database
// driver (Bun's SQL client included), an engine's drizzle module or an engine's folder, nor asks which engine runs;
// no SQLite- or PostgreSQL-only builder call; and src/ has no import circle (type-only and dynamic imports count, as
// madge counts them: `npx madge --circular --extensions ts src`).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Db } from "../src/db/db";

const SRC = resolve(import.meta.dir, "..", "src");

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every module a file names: static imports and re-exports (type-only too), `import()` and `require()`. */
function specifiersOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s[^;'"]*?\bfrom\s*["']([^"']+)["']/g, /^\s*import\s*["']([^"']+)["']/gm, /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.push(m[1]);
  return found;
}

/** The files of src/ a file imports (relative specifiers resolved as TypeScript does). */
function localImports(file: string): string[] {
  return specifiersOf(readFileSync(file, "utf8")).flatMap((spec) => {
    if (!spec.startsWith(".")) return [];
    const base = resolve(dirname(file), spec);
    const hit = [base, `${base}.ts`, join(base, "index.ts")].find((p) => p.endsWith(".ts") && existsSync(p));
    return hit ? [hit] : [];
  });
}

/** Each circle once, as the files along it. */
function circles(files: string[], importsOf: (file: string) => string[]): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of importsOf(file)) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found;
}

const files = sourceFiles();
const rel = (path: string) => relative(SRC, path);
/** Files that may know the engines: the data layer itself, and the CLI's file and server commands. */
const mayKnowEngines = (path: string) => rel(path).startsWith("db/") || rel(path).startsWith("cli/");
const services = files.filter((f) => !mayKnowEngines(f));

/** Drivers and the drizzle modules bound to one engine or driver. */
const ENGINE_MODULE = /^(?:@libsql\/|libsql(?:\/|$)|bun:sqlite$|postgres$|pg(?:\/|$)|pg-|better-sqlite3|drizzle-orm\/(?!pg-core$|sqlite-core$)[^/]+)/;
/** Bun's own SQL client (PostgreSQL's driver): its names imported from "bun", or reached through the `Bun` global. */
const BUN_SQL = [/\b(?:import|export)\s+(?:type\s+)?\{[^}]*\b(?:SQL|sql|SQLQuery|ReservedSQL|TransactionSQL)\b[^}]*\}\s*from\s*["']bun["']/, /\bBun\.(?:SQL|sql)\b/];
/** What tells which engine runs, or reaches past the facade into one. */
const ASKS_ENGINE = [/\bd\.name\b/, /\bisPgUrl\b/, /\$client\b/, /\$writer\b/, /\browLocks\b/];
/** Builder calls only one engine has: SQLite's terminal calls (`.values()` too, but a Map has one), PostgreSQL's locking and DISTINCT ON and ilike. */
const ONE_ENGINE_CALL = [/\.(?:get|all|run)\(\s*\)/, /\bdb\.batch\(/, /\.for\(\s*["'`]/, /\bselectDistinctOn\(/, /\bdistinctOn\(/, /\bilike\(/];

/**
 * Checked by the compiler, never run (`npm run typecheck`, which CI runs): on `Db` a builder call only SQLite has is
 * a type error, and so is reaching for the embedded driver. Each line below compiling again fails the typecheck
 * ("unused @ts-expect-error").
 */
function oneEngineCallsDoNotCompile(db: Db) {
  // @ts-expect-error SQLite's terminal call
  void db.select().from(db.t.waitlists).get();
  // @ts-expect-error SQLite's terminal call
  void db.select().from(db.t.waitlists).all();
  // @ts-expect-error SQLite's terminal call
  void db.delete(db.t.waitlists).run();
  // @ts-expect-error the embedded client is not on the facade
  void db.$client;
}
void oneEngineCallsDoNotCompile;

describe("services know no engine (issue 43)", () => {
  test("the rule's patterns catch what they are for (control)", () => {
    expect(specifiersOf(`import type { Client } from "@libsql/client";\nconst m = await import("./pg/open");\nexport { x } from "./y";`)).toEqual([
      "@libsql/client",
      "./y",
      "./pg/open",
    ]);
    for (const m of ["@libsql/client", "libsql", "libsql/promise", "bun:sqlite", "postgres", "pg", "drizzle-orm/libsql", "drizzle-orm/postgres-js", "drizzle-orm/bun-sql"])
      expect(ENGINE_MODULE.test(m)).toBe(true);
    for (const m of ["drizzle-orm", "drizzle-orm/pg-core", "drizzle-orm/sqlite-core", "elysia", "./db"]) expect(ENGINE_MODULE.test(m)).toBe(false);
    for (const t of [`import { SQL } from "bun";`, `import type { SQL as Sql } from "bun";`, `const c = new Bun.SQL(url);`, `await Bun.sql\`SELECT 1\`;`])
      expect(BUN_SQL.some((p) => p.test(t))).toBe(true);
    for (const t of [`import type { Server } from "bun";`, `Bun.serve({})`]) expect(BUN_SQL.some((p) => p.test(t))).toBe(false);
    expect(circles(["a", "b", "c"], (f) => ({ a: ["b"], b: ["c"], c: ["a"] })[f]!)).toEqual([["a", "b", "c", "a"]]);
  });

  test("no file outside src/db/ and src/cli/ imports a driver, an engine's drizzle module or an engine's folder", () => {
    const offending = services.flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return [
        ...specifiersOf(text)
          .filter((spec) => ENGINE_MODULE.test(spec) || /(?:^|\/)db\/(?:sqlite|pg)(?:\/|$)/.test(spec))
          .map((spec) => `${rel(file)}: ${spec}`),
        ...BUN_SQL.filter((p) => p.test(text)).map((p) => `${rel(file)}: Bun's SQL client (${p.source})`),
      ];
    });
    expect(offending).toEqual([]);
  });

  test("no such file asks which engine runs, or calls the builder in a way only one engine has", () => {
    const offending = services.flatMap((file) => {
      const lines = readFileSync(file, "utf8").split("\n");
      return lines.flatMap((line, i) =>
        [...ASKS_ENGINE, ...ONE_ENGINE_CALL].filter((p) => p.test(line.replace(/\/\/.*$/, ""))).map((p) => `${rel(file)}:${i + 1}: ${p.source}`),
      );
    });
    expect(offending).toEqual([]);
  });

  test("src/ has no import circle", () => {
    expect(circles(files, localImports).map((c) => c.map(rel).join(" -> "))).toEqual([]);
  });
});
