// The OpenAPI document: what Elysia generates from the routes' `response` and `detail`, completed with
// what they can't express: the guard's own answers, headers, HTML pages and redirects, public security.
import { webhooksSection } from "./webhooks";
import { toOpenAPISchema } from "@elysiajs/openapi";
import { guardStatuses, POLICY_EXTENSION, type Policy } from "../http/api";
import { errorResponse, HEADERS, HTML, rateLimitHeaders, RETRY_AFTER, LOCATION } from "./responses";
import { PUBLIC_OPERATIONS, type PublicOperation } from "./public-routes";

type Json = Record<string, any>;
interface RouteLike {
  method: string;
  path: string;
}
interface AppLike {
  getGlobalRoutes(): RouteLike[];
}

export const TAGS = [
  { name: "Account", description: "The account behind a key" },
  { name: "Waitlists", description: "Create and list waitlists (account key only)" },
  { name: "Subscribers", description: "Sign-ups and subscriber data" },
  { name: "Tags", description: "Labels on subscribers (extension)" },
  { name: "Broadcasts", description: "Emails the team writes to a segment of its list (extension)" },
  { name: "Email", description: "Bounce and complaint reports from mail providers (extension)" },
  { name: "Analytics", description: "Views and counters" },
  { name: "Settings", description: "Per-waitlist settings and keys (extension)" },
  { name: "Landing pages", description: "The hosted landing page, by hand or with AI" },
  { name: "Public form", description: "The form action HTML forms post to (no key)" },
  { name: "Pages", description: "Server-rendered pages (no key)" },
  { name: "Links", description: "The links in emails: GET and HEAD show a page, POST acts (no key)" },
  { name: "Docs", description: "Swagger UI, this document and the dashboard (no key)" },
  { name: "Operations", description: "Health" },
  { name: "Team", description: "Users, sign-in, sessions and roles (issue 48)" },
  { name: "Webhooks", description: "What a receiver gets for each event (issue 49): the document's webhooks section" },
];

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
const templateOf = (path: string) => path.replace(/:([^/]+)/g, "{$1}");

export function buildDocument(app: AppLike, info: { baseUrl: string; title: string; version: string; description: string }): Json {
  // static assets (/swagger/assets, /assets, /dashboard/assets) and the CORS preflight stay out
  // a copy: the generated schemas may be the routes' own, which validate requests (statedAsRules rewrites these)
  const generated = JSON.parse(JSON.stringify(toOpenAPISchema(app as any, { paths: [/\/assets\//] }))) as Json;
  const paths: Json = generated.paths;
  const served = new Set(app.getGlobalRoutes().map((r) => `${r.method.toLowerCase()} ${templateOf(r.path)}`));

  for (const op of PUBLIC_OPERATIONS) {
    if (!served.has(`${op.method} ${op.path}`)) continue;
    paths[op.path] ??= {};
    paths[op.path][op.method] = merge(paths[op.path][op.method], op);
  }
  // a HEAD route answers as its GET, without a body
  for (const key of served) {
    const [method, path] = key.split(" ");
    if (method !== "head" || paths[path]?.head || !paths[path]?.get) continue;
    const get = paths[path].get;
    const responses = Object.fromEntries(Object.entries(get.responses as Json).map(([status, r]) => [status, { description: r.description, ...(r.headers ? { headers: r.headers } : {}) }]));
    paths[path].head = { ...get, operationId: `head${get.operationId[0].toUpperCase()}${get.operationId.slice(1)}`, responses };
  }

  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) complete(item[method], method, path);
  }
  statedAsRules(paths);
  statedAsRules(generated.components?.schemas ?? {});
  addLinks(paths);

  return {
    openapi: "3.1.0",
    info: { title: info.title, version: info.version, description: info.description },
    // the origin the document was fetched from first, so Swagger UI works whatever host it was opened on
    servers: [
      { url: "/", description: "This server" },
      { url: info.baseUrl, description: "This server's BASE_URL" },
    ],
    tags: TAGS,
    paths,
    // issue 49: what a receiver gets, per event type (OpenAPI 3.1)
    webhooks: webhooksSection(),
    components: {
      ...(Object.keys(generated.components?.schemas ?? {}).length ? { schemas: generated.components.schemas } : {}),
      headers: HEADERS,
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" },
        // issue 48: the dashboard's sign-in (POST /api/v1/session); a change also sends X-CSRF-Token
        Session: { type: "apiKey", in: "cookie", name: "wl_session", description: "The session cookie of POST /api/v1/session; requests that change something also send its csrf_token as X-CSRF-Token" },
      },
    },
  };
}

const WAITLIST = "/api/v1/waitlist/{waitlistKey}";
const SAME_WAITLIST = { waitlistKey: "$request.path.waitlistKey" };

/**
 * OpenAPI links from each create to what acts on what it made (issue 44), so that stateful tools and generated
 * clients can chain them: target "METHOD path", and each of its path parameters as a runtime expression.
 */
const LINKS: Record<string, { status: string; links: Record<string, { target: string; parameters: Record<string, string>; description: string }> }> = {
  "post /api/v1/account/keys": {
    status: "201",
    links: { RevokeKey: { target: "delete /api/v1/account/keys/{id}", parameters: { id: "$response.body#/data/api_key/id" }, description: "Revoke the key just made" } },
  },
  "post /api/v1/waitlists": {
    status: "201",
    links: Object.fromEntries(
      [
        ["GetSettings", `get ${WAITLIST}/settings`, "The new waitlist's settings"],
        ["UpdateSettings", `patch ${WAITLIST}/settings`, "Change the new waitlist's settings"],
        ["SignUp", `post ${WAITLIST}/sign-up`, "Sign someone up to it"],
      ].map(([name, target, description]) => [name, { target, parameters: { waitlistKey: "$response.body#/data/waitlist/key" }, description }]),
    ),
  },
  [`post ${WAITLIST}/sign-up`]: {
    status: "200",
    links: Object.fromEntries(
      [
        ["GetSubscriber", "get", "The subscriber who signed up"],
        ["UpdateSubscriber", "put", "Change their name, phone, points or metadata"],
        ["DeleteSubscriber", "delete", "Remove them"],
      ].map(([name, method, description]) => [name, { target: `${method} ${WAITLIST}/subscribers/{idOrEmail}`, parameters: { ...SAME_WAITLIST, idOrEmail: "$request.body#/email" }, description }]),
    ),
  },
  [`post ${WAITLIST}/tags`]: {
    status: "201",
    links: { DeleteTag: { target: `delete ${WAITLIST}/tags/{tagId}`, parameters: { ...SAME_WAITLIST, tagId: "$response.body#/data/tag/id" }, description: "Delete the tag just made" } },
  },
  [`post ${WAITLIST}/landing-page`]: {
    status: "201",
    links: Object.fromEntries(
      [
        ["GetPage", "get", "The page just made"],
        ["UpdatePage", "patch", "Change it"],
      ].map(([name, method, description]) => [name, { target: `${method} ${WAITLIST}/landing-page`, parameters: SAME_WAITLIST, description }]),
    ),
  },
  [`post ${WAITLIST}/subscribers/invite`]: {
    status: "200",
    links: {
      GetInvited: {
        target: `get ${WAITLIST}/subscribers/{idOrEmail}`,
        parameters: { ...SAME_WAITLIST, idOrEmail: "$response.body#/data/invited/0/id" },
        description: "The first subscriber invited",
      },
      RejectInvited: {
        target: `post ${WAITLIST}/subscribers/{idOrEmail}/reject`,
        parameters: { ...SAME_WAITLIST, idOrEmail: "$response.body#/data/invited/0/id" },
        description: "Withdraw the first invitation",
      },
    },
  },
};

function addLinks(paths: Json): void {
  for (const [source, { status, links }] of Object.entries(LINKS)) {
    const [method, path] = source.split(" ");
    const response = paths[path]?.[method]?.responses?.[status];
    if (!response) throw new Error(`OpenAPI links: no ${status} answer of ${source}`);
    response.links = Object.fromEntries(
      Object.entries(links).map(([name, link]) => {
        const [targetMethod, targetPath] = link.target.split(" ");
        const operationId = paths[targetPath]?.[targetMethod]?.operationId;
        if (!operationId) throw new Error(`OpenAPI links: no operation ${link.target}`);
        return [name, { operationId, parameters: link.parameters, description: link.description }];
      }),
    );
  }
}

/**
 * The schemas as the handlers apply them (issue 44): Elysia's query integers ("a numeric string or an integer") are
 * integers with their bounds, a union marked `x-one-of` (branches that exclude each other) is a `oneOf`, and the
 * validation messages kept beside a schema (`error`) stay out.
 */
function statedAsRules(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(statedAsRules);
  if (node === null || typeof node !== "object") return;
  const schema = node as Json;
  if (Array.isArray(schema.anyOf)) {
    const numeric = schema.anyOf.find((b: Json) => b.type === "integer");
    const text = schema.anyOf.find((b: Json) => b.type === "string" && b.format === "integer");
    if (schema.anyOf.length === 2 && numeric && text) {
      delete schema.anyOf;
      Object.assign(schema, { ...numeric, ...schema, type: "integer" });
      delete schema.default;
    } else if (schema["x-one-of"]) {
      schema.oneOf = schema.anyOf;
      delete schema.anyOf;
    }
  }
  delete schema["x-one-of"];
  // a query integer checked as text (http/schema.ts QueryInt): an integer with its bounds, as a client sees it
  if (schema["x-query-integer"]) {
    const { minimum, maximum } = schema["x-query-integer"];
    delete schema["x-query-integer"];
    delete schema.pattern;
    delete schema.error;
    Object.assign(schema, { type: "integer", minimum, maximum });
  }
  if (typeof schema.error === "string" && (schema.type === "string" || schema.pattern)) delete schema.error;
  for (const value of Object.values(schema)) statedAsRules(value);
}

/** A hidden route becomes the table's operation; a documented one gains the table's statuses, content types and headers. */
function merge(existing: Json | undefined, op: PublicOperation): Json {
  const parameters = [
    ...[...op.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => ({ name, in: "path", required: true, schema: { type: "string" } })),
    ...(op.query ?? []).map((name) => ({ name, in: "query", required: false, schema: { type: "string" } })),
  ];
  const base: Json = existing ?? { tags: op.tags, summary: op.summary, ...(op.description ? { description: op.description } : {}), ...(parameters.length ? { parameters } : {}) };
  const responses: Json = { ...(base.responses ?? {}) };
  for (const [status, r] of Object.entries(op.responses)) {
    const had = responses[status] ?? {};
    responses[status] = {
      ...had,
      ...r,
      description: had.description ?? r.description,
      ...(had.headers || r.headers ? { headers: { ...had.headers, ...r.headers } } : {}),
      ...(had.content || r.content ? { content: { ...had.content, ...r.content } } : {}),
    };
  }
  return { ...base, operationId: op.operationId, security: [], responses };
}

/** What every operation can also answer, and the headers that come with each answer. */
function complete(op: Json, method: string, path: string): void {
  const policy: Policy | undefined = op[POLICY_EXTENSION];
  delete op[POLICY_EXTENSION];
  op.responses ??= {};
  const responses: Json = op.responses;
  if (policy) {
    for (const status of guardStatuses(policy, method.toUpperCase())) responses[status] ??= errorResponse(policy.errors ?? "standard", status);
    // only the guard answers 429 on an API route, and always with data.retry_after
    responses[429] = errorResponse(policy.errors ?? "standard", 429);
  } else {
    // no key: the operation is public
    op.security ??= [];
  }
  // every body is capped at 1 MB and 8 s as it is read, on every route (http/body-limit.ts); outside
  // /api a browser (Accept: text/html) gets a page (http/error-handler.ts)
  const isApi = path.startsWith("/api/");
  for (const status of isApi || method === "get" || method === "head" ? [413] : [408, 413]) {
    responses[status] ??= errorResponse("standard", status);
    if (!isApi) responses[status].content = { ...responses[status].content, ...HTML };
  }
  responses[500] ??= errorResponse("standard", 500);
  for (const [status, r] of Object.entries(responses)) {
    if (policy && status !== "413" && status !== "500") r.headers = { ...rateLimitHeaders(true), ...r.headers };
    if (status === "429") r.headers = { ...r.headers, ...RETRY_AFTER };
    // a redirect without Location is a bug, whatever a route's own detail says
    if (/^3\d\d$/.test(status)) r.headers = { ...r.headers, ...LOCATION };
  }
  op.operationId ??= `${method}${path.replace(/[{}]/g, "").replace(/(^|[/_-])(\w)/g, (_m, _s, c: string) => c.toUpperCase())}`;
  if (!op.summary) op.summary = op.operationId;
}
