// Issue 48: the role each route needs of a signed-in user. owner: everything (users, everyone's keys); admin:
// everything but users and others' keys; editor: subscribers, tags, pages, broadcasts, no settings or keys; viewer:
// reads. An API key acts with the account's full power, within its scopes.
import { ACTIONS } from "../audit/actions";
import type { Role } from "../db/schema";

const EDITOR_FAMILIES = new Set(["subscriber", "tag", "landing_page", "broadcast"]);
/** Reads that show what only an admin may change. */
const ADMIN_READS = ["/api/v1/account/keys", "/api/v1/account/audit", "/api/v1/account/users"];
/** Issue 49: a webhook endpoint read alone shows its signing secret. */
const SECRET_READS = new Set(["/api/v1/waitlist/:waitlistKey/webhooks/:webhookId"]);

export function requiredRole(method: string, route: string): Role {
  if (method === "GET" || method === "HEAD") return ADMIN_READS.some((p) => route.startsWith(p)) || SECRET_READS.has(route) ? "admin" : "viewer";
  const action = ACTIONS[`${method} ${route}`];
  if (!action) return "admin";
  const family = action.slice(0, action.indexOf("."));
  if (family === "user") return "owner";
  // a user's own sessions and second factor: anyone signed in (the handlers check whose)
  if (family === "session") return "viewer";
  return EDITOR_FAMILIES.has(family) ? "editor" : "admin";
}
