// Turns a TypeBox validation failure into one sentence naming the field, never echoing schema internals.
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import type { ValidationError } from "elysia";

type Schema = Record<string, any>;

const LOCATION: Record<string, string> = { query: "query parameter ", params: "path parameter ", headers: "header " };

export function validationMessage(error: ValidationError): string {
  const first = error.all?.[0] as { path?: string; schema?: Schema; value?: unknown; message?: string } | undefined;
  if (!first) return "Invalid request";
  const path = (first.path ?? "").replace(/^\//, "").split("/").filter(Boolean);
  const field = `${LOCATION[error.type] ?? ""}${path.join(".") || (error.type === "body" ? "body" : "value")}`;
  if (first.message === "Unexpected property") {
    const parent = path.slice(0, -1).join(".");
    return `Unknown field "${path.join(".")}"${parent ? ` in ${parent}` : ""}; allowed: ${Object.keys(allowedAt(error, path.slice(0, -1))).join(", ") || "none"}`;
  }
  if (first.value === undefined) return `${field} is required`;
  const branch = unionBranch(first.schema, first.value, path);
  if (branch) return branch.message ?? inBranch(branch.schema, first.value, path);
  return `${field} ${expectation(first.schema ?? {})}`;
}

/** The first problem of `value` against `schema`, as the request's would be told (issue 47: a bulk item); null if none. */
export function valueMessage(schema: TSchema, value: unknown): string | null {
  const all = [...Value.Errors(schema, value)];
  if (!all.length) return null;
  return validationMessage({ all, type: "body", validator: { schema } } as unknown as ValidationError);
}

/**
 * For a union of objects (invite's exactly one of count, ids or emails; a background by its type), the branch the
 * value means: the one whose literal members (a `type`) it has, or whose one required member it gives. Null when
 * the schema is no such union; a message when the value means no branch.
 */
function unionBranch(schema: Schema | undefined, value: unknown, path: string[]): { schema: Schema; message?: string } | null {
  const branches = schema?.anyOf as Schema[] | undefined;
  if (!branches?.length || !branches.every((b) => b.type === "object" && b.properties) || value === null || typeof value !== "object") return null;
  const given = value as Record<string, unknown>;
  const literal = (b: Schema) => Object.entries(b.properties as Schema).filter(([, p]) => "const" in p);
  const byLiteral = branches.find((b) => literal(b).length > 0 && literal(b).every(([k, p]) => given[k] === p.const));
  if (byLiteral) return { schema: byLiteral };
  if (branches.every((b) => literal(b).length > 0)) {
    const [key] = literal(branches[0]);
    return { schema: branches[0], message: `${[...path, key[0]].join(".")} must be one of: ${branches.map((b) => (b.properties as Schema)[key[0]].const).join(", ")}` };
  }
  const only = branches.map((b) => (b.required as string[] | undefined) ?? []);
  if (only.every((r) => r.length === 1)) {
    const keys = only.map((r) => r[0]);
    const present = keys.filter((k) => given[k] !== undefined);
    if (present.length === 1) return { schema: branches[keys.indexOf(present[0])] };
    return { schema: schema!, message: `${path.length ? `${path.join(".")}: give` : "Give"} exactly one of ${keys.join(", ")}${present.length ? ` (got ${present.join(" and ")})` : ""}` };
  }
  // the branch whose required members the value gives (bounce reports: our own `events`, or a provider's body)
  const complete = branches.find((b) => ((b.required as string[] | undefined) ?? []).length > 0 && (b.required as string[]).every((k) => given[k] !== undefined));
  if (complete) return { schema: complete };
  return null;
}

/** The first problem of `value` against one branch, named by its path under `base`. */
function inBranch(schema: Schema, value: unknown, base: string[]): string {
  const [error] = [...Value.Errors(schema as TSchema, value)];
  if (!error) return `${base.join(".") || "body"} is invalid`;
  const path = [...base, ...error.path.replace(/^\//, "").split("/").filter(Boolean)];
  const field = path.join(".") || "body";
  if (error.value === undefined) return `${field} is required`;
  if ((error.schema as Schema).type === "object" && error.message.includes("Unexpected property")) return `Unknown field "${field}"`;
  return `${field} ${expectation(error.schema as Schema)}`;
}

/** The properties allowed in the object at `path` of the route's schema, for "unknown field" messages. */
function allowedAt(error: ValidationError, path: string[]): Schema {
  let schema: Schema | undefined = (error.validator as any)?.schema ?? error.validator;
  for (const part of path) schema = schema?.properties?.[part] ?? schema?.anyOf?.find((s: Schema) => s.properties)?.properties?.[part];
  return schema?.properties ?? schema?.anyOf?.find((s: Schema) => s.properties)?.properties ?? {};
}

function expectation(schema: Schema): string {
  if (Array.isArray(schema.anyOf)) {
    const branches = schema.anyOf as Schema[];
    if (branches.every((b) => "const" in b)) return `must be one of: ${branches.map((b) => b.const).join(", ")}`;
    // Elysia widens integers to integer-or-numeric-string; the bounds sit on the union or the branch
    const numeric = branches.find((b) => b.type === "integer" || b.type === "number");
    if (numeric) return numberExpectation({ ...numeric, ...pick(schema, ["minimum", "maximum"]) });
    const nullable = branches.some((b) => b.type === "null");
    const rest = branches.filter((b) => b.type !== "null");
    if (rest.length === 1) return `${expectation(rest[0])}${nullable ? " (or null)" : ""}`;
    return `must be ${branches.map(typeName).join(" or ")}`;
  }
  if ("const" in schema) return `must be ${JSON.stringify(schema.const)}`;
  switch (schema.type) {
    case "string":
      return stringExpectation(schema);
    case "integer":
    case "number":
      return numberExpectation(schema);
    case "boolean":
      return "must be true or false";
    case "array":
      return schema.maxItems !== undefined ? `must be an array of at most ${schema.maxItems} items` : "must be an array";
    case "object":
      return schema.minProperties ? `must be an object with at least ${schema.minProperties === 1 ? "one field" : `${schema.minProperties} fields`}` : "must be an object";
    default:
      return "is invalid";
  }
}

function stringExpectation(s: Schema): string {
  const { minLength: min, maxLength: max } = s;
  if (s.error) return String(s.error);
  if (min !== undefined && max !== undefined) return `must be a string of ${min} to ${max} characters`;
  if (max !== undefined) return `must be a string of at most ${max} characters`;
  if (min !== undefined) return `must be a string of at least ${min} characters`;
  if (s.pattern || s.format) return "is not in the expected format";
  return "must be a string";
}

function numberExpectation(s: Schema): string {
  const kind = s.type === "integer" ? "an integer" : "a number";
  if (s.minimum !== undefined && s.maximum !== undefined) return `must be ${kind} from ${s.minimum} to ${s.maximum}`;
  if (s.minimum !== undefined) return `must be ${kind} of at least ${s.minimum}`;
  if (s.maximum !== undefined) return `must be ${kind} of at most ${s.maximum}`;
  return `must be ${kind}`;
}

const typeName = (s: Schema): string =>
  ({ string: "a string", integer: "an integer", number: "a number", boolean: "a boolean", object: "an object", array: "an array", null: "null" })[
    s.type as string
  ] ?? "a valid value";

const pick = (o: Schema, keys: string[]) => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
