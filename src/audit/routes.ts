// Issue 48: each request that may change something runs in an audit scope (scope.ts), and the account's audit log is
// read back through GET /api/v1/account/audit.
import { Elysia, t } from "elysia";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { QueryInt } from "../http/schema";
import { mayChange } from "./actions";
import { auditPage, AUDIT_LIMIT } from "./log";
import { closeScope, openScope } from "./scope";

/** Opens a request's scope at its start (synchronously, so all it does runs inside) and closes it at its end. */
export function auditScopes() {
  return new Elysia({ name: "audit/scopes" })
    .onRequest(({ request }) => {
      if (mayChange(request.method, request.url)) openScope();
    })
    .onAfterResponse({ as: "global" }, () => closeScope());
}

const Entry = t.Object({
  id: t.String(),
  at: t.Number({ description: "Unix ms" }),
  actor: t.Object({ type: t.Union([t.Literal("user"), t.Literal("key")]), id: t.String(), name: t.String() }),
  action: t.String({ description: "What was done, like subscriber.update, settings.update, key.revoke" }),
  target: t.Union([t.String(), t.Null()], { description: "What it was done to, as the request's path names it past /api/v1/ (emails masked)" }),
  ip: t.Union([t.String(), t.Null()]),
  user_agent: t.Union([t.String(), t.Null()]),
});

export function auditRoutes(deps: { db: Db; api: ReturnType<typeof apiGuard> }) {
  const { db } = deps;
  return new Elysia({ name: "audit/routes", prefix: "/api/v1" }).use(deps.api).get(
    "/account/audit",
    async ({ auth, query }) => ({ success: true, data: await auditPage(db, auth.account.id, { ...query, limit: query.limit === undefined ? undefined : Number(query.limit) }) }),
    {
      api: { key: "account", bucket: "account" },
      query: t.Object(
        {
          actor: t.Optional(t.String({ description: "Only this actor's entries (a key's or a user's id)" })),
          action: t.Optional(t.String({ description: "Only this action (subscriber.update), or a family of them (subscriber)" })),
          since: t.Optional(t.String({ description: "Only entries from this time on: Unix ms or an ISO 8601 time" })),
          before: t.Optional(t.String({ description: "The page after this one: the previous page's next_cursor" })),
          limit: t.Optional(QueryInt({ minimum: 1, maximum: AUDIT_LIMIT, description: `Entries per page, 1 to ${AUDIT_LIMIT}, default 20` })),
        },
        { additionalProperties: false },
      ),
      response: {
        200: t.Object({ success: t.Boolean(), data: t.Object({ entries: t.Array(Entry), next_cursor: t.Union([t.String(), t.Null()]) }) }),
        ...errorResponses(400, 401, 403, 429),
      },
      detail: {
        tags: ["Account"],
        summary: "Audit log",
        description:
          "Every change made through the API (issue 48), newest first: who (the key, or the user), what (action and target), when, from which IP and user agent. Written in the change's own transaction; sign-ups, views and providers' email events are the visitors' own records, not entries here. Never holds a secret or a full subscriber email.",
      },
    },
  );
}
