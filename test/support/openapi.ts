// Checks real HTTP answers against the server's own OpenAPI document with ajv (issue 16 item 8): the
// operation by path template, the status, the required headers and their values, the content type and the body.
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import type { Response, TestServer } from "./server";

type Json = Record<string, any>;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

export interface Operation {
  method: string;
  path: string;
  /** "GET /p/{slug}" */
  id: string;
  op: Json;
  pattern: RegExp;
  literals: number;
}

export interface OpenApiChecker {
  doc: Json;
  operations: Operation[];
  /** The document's operation for a request, or null when no path template and method match. */
  find(method: string, url: string): Operation | null;
  /** Every way the answer differs from the document; empty when it conforms. Records the operation as exercised. */
  check(method: string, url: string, res: Response): string[];
  /** Operation id -> statuses seen. */
  exercised: Map<string, Set<number>>;
  /** A schema with every `$ref` of the document inlined. */
  inline(schema: any): any;
  /** A node, or what its `$ref` names. */
  resolve(node: any): any;
}

export function openApiChecker(doc: Json): OpenApiChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const resolve = (node: any): any => {
    if (node && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
      return resolve(node.$ref.slice(2).split("/").map((p: string) => p.replace(/~1/g, "/").replace(/~0/g, "~")).reduce((n: any, p: string) => n?.[p], doc));
    }
    return node;
  };
  // component schemas are inlined so that each response schema compiles on its own
  const inline = (schema: any, depth = 0): any => {
    if (depth > 50 || schema === null || typeof schema !== "object") return schema;
    if (Array.isArray(schema)) return schema.map((s) => inline(s, depth + 1));
    if (typeof schema.$ref === "string") return inline(resolve(schema), depth + 1);
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inline(v, depth + 1)]));
  };

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
      operations.push({
        method: method.toUpperCase(),
        path,
        id: `${method.toUpperCase()} ${path}`,
        op: item[method],
        pattern: new RegExp(`^${source}$`),
        literals: path.split("/").filter((s) => s && !s.startsWith("{")).length,
      });
    }
  }
  // a literal segment wins over a parameter (/subscribers/export before /subscribers/{idOrEmail})
  const ordered = [...operations].sort((a, b) => b.literals - a.literals);
  const exercised = new Map<string, Set<number>>();

  function find(method: string, url: string): Operation | null {
    const pathname = new URL(url, "http://x").pathname;
    const match = (m: string) => ordered.find((o) => o.method === m && o.pattern.test(pathname)) ?? null;
    // HEAD is GET without the body (RFC 9110 §9.3.2), and Elysia answers it for every GET route
    return match(method.toUpperCase()) ?? (method.toUpperCase() === "HEAD" ? match("GET") : null);
  }

  function check(method: string, url: string, res: Response): string[] {
    const where = `${method} ${url} -> ${res.status}`;
    const operation = find(method, url);
    if (!operation) return [`${where}: no operation in the document`];
    if (!exercised.has(operation.id)) exercised.set(operation.id, new Set());
    exercised.get(operation.id)!.add(res.status);
    const responses: Json = operation.op.responses ?? {};
    const declared = resolve(responses[String(res.status)] ?? responses[`${String(res.status)[0]}XX`] ?? responses.default);
    if (!declared) return [`${where}: status ${res.status} is not documented for ${operation.id} (documented: ${Object.keys(responses).join(", ")})`];
    const problems: string[] = [];

    for (const [name, h] of Object.entries((declared.headers ?? {}) as Json)) {
      const header = resolve(h);
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      const schema = header.schema ?? {};
      const typed = schema.type === "integer" || schema.type === "number" ? Number(value) : value;
      const validate = compile(`header ${operation.id} ${res.status} ${name}`, schema);
      if (!validate(typed)) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
    }

    const content: Json | undefined = declared.content;
    const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    const hasBody = method.toUpperCase() !== "HEAD" && res.text.length > 0;
    if (!content || Object.keys(content).length === 0) {
      if (hasBody) problems.push(`${where}: a ${type || "untyped"} body where the document declares none`);
      return problems;
    }
    // an empty text of a declared type is a body (a JSON Lines export of no rows is no line)
    if (!hasBody && resolve(content[type]?.schema)?.type === "string") return problems;
    if (!hasBody) {
      if (method.toUpperCase() !== "HEAD") problems.push(`${where}: no body, but the document declares ${Object.keys(content).join(", ")}`);
      return problems;
    }
    const media = content[type] ?? content[`${type.split("/")[0]}/*`] ?? content["*/*"];
    if (!media) return [...problems, `${where}: content type ${type || "(none)"} is not documented (documented: ${Object.keys(content).join(", ")})`];
    if (!media.schema) return problems;
    let value: unknown = res.text;
    if (type === "application/json" || type.endsWith("+json")) {
      try {
        value = JSON.parse(res.text);
      } catch {
        return [...problems, `${where}: the body is not JSON`];
      }
    }
    const validate = compile(`body ${operation.id} ${res.status} ${type}`, media.schema);
    if (!validate(value)) problems.push(`${where}: body ${ajv.errorsText(validate.errors)}: ${res.text.slice(0, 300)}`);
    return problems;
  }

  function compile(key: string, schema: Json): ValidateFunction {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile(inline(schema));
      compiled.set(key, validate);
    }
    return validate;
  }

  return { doc, operations, find, check, exercised, inline, resolve };
}

/**
 * `s.request`, with every answer checked against the document: problems are collected (not thrown) so
 * that one run reports them all.
 */
export function recorded(s: TestServer, checker: OpenApiChecker, problems: string[]): TestServer["request"] {
  return async (method, path, opts) => {
    const res = await s.request(method, path, opts);
    problems.push(...checker.check(method, path, res));
    // documented on every operation, and always our bug
    if (res.status === 500) problems.push(`${method} ${path} -> 500: ${res.text.slice(0, 200)}`);
    return res;
  };
}

/** Runs `@redocly/cli lint` with the recommended ruleset on a document; returns its totals and problems. */
export async function redoclyLint(file: string): Promise<{ errors: number; warnings: number; problems: { ruleId: string; severity: string; message: string; location: unknown }[] }> {
  const root = new URL("../..", import.meta.url).pathname;
  const proc = Bun.spawn([`${root}node_modules/.bin/redocly`, "lint", "--extends", "recommended", "--format", "json", file], {
    cwd: root,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const start = stdout.indexOf("{");
  if (start < 0) throw new Error(`redocly printed no JSON: ${stdout}${stderr}`);
  const report = JSON.parse(stdout.slice(start));
  return { errors: report.totals.errors, warnings: report.totals.warnings, problems: report.problems };
}
