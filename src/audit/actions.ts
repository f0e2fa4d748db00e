// Issue 48: what each change made through the API is recorded as, by route. Every route that may change something
// is here or in UNAUDITED (test/keys-audit.e2e.test.ts checks the document's routes against both).

const W = "/api/v1/waitlist/:waitlistKey";

export const ACTIONS: Record<string, string> = {
  "POST /api/v1/account/keys": "key.create",
  "DELETE /api/v1/account/keys/:id": "key.revoke",
  "POST /api/v1/account/users": "user.invite",
  "PATCH /api/v1/account/users/:id": "user.update",
  "DELETE /api/v1/account/users/:id": "user.remove",
  "DELETE /api/v1/account/sessions/:id": "session.revoke",
  "DELETE /api/v1/session": "session.sign_out",
  "POST /api/v1/session/totp": "session.totp_start",
  "POST /api/v1/session/totp/confirm": "session.totp_on",
  "DELETE /api/v1/session/totp": "session.totp_off",
  "POST /api/v1/waitlists": "waitlist.create",
  [`PATCH ${W}/settings`]: "settings.update",
  [`POST ${W}/api-key`]: "waitlist_key.regenerate",
  [`POST ${W}/settings/webhook/test`]: "webhook.test",
  [`POST ${W}/settings/webhook/rotate-secret`]: "webhook.rotate_secret",
  [`POST ${W}/webhooks`]: "webhook.create",
  [`PATCH ${W}/webhooks/:webhookId`]: "webhook.update",
  [`DELETE ${W}/webhooks/:webhookId`]: "webhook.delete",
  [`POST ${W}/webhooks/:webhookId/rotate-secret`]: "webhook.rotate_secret",
  [`POST ${W}/webhooks/:webhookId/test`]: "webhook.test",
  [`POST ${W}/webhooks/:webhookId/deliveries/:deliveryId/retry`]: "webhook.retry",
  [`POST ${W}/webhooks/:webhookId/replay`]: "webhook.replay",
  [`POST ${W}/subscribers/bulk`]: "subscriber.bulk",
  [`POST ${W}/subscribers/import`]: "subscriber.import",
  [`POST ${W}/subscribers/invite`]: "subscriber.invite",
  [`POST ${W}/subscribers/:idOrEmail/reject`]: "subscriber.reject",
  [`PUT ${W}/subscribers/:idOrEmail`]: "subscriber.update",
  [`DELETE ${W}/subscribers/:idOrEmail`]: "subscriber.delete",
  [`POST ${W}/subscribers/:idOrEmail/tags`]: "subscriber.tag",
  [`DELETE ${W}/subscribers/:idOrEmail/tags/:tagIdOrName`]: "subscriber.untag",
  [`POST ${W}/tags`]: "tag.create",
  [`DELETE ${W}/tags/:tagId`]: "tag.delete",
  [`POST ${W}/broadcasts`]: "broadcast.create",
  [`PATCH ${W}/broadcasts/:id`]: "broadcast.update",
  [`DELETE ${W}/broadcasts/:id`]: "broadcast.delete",
  [`POST ${W}/broadcasts/:id/test`]: "broadcast.test",
  [`POST ${W}/broadcasts/:id/send`]: "broadcast.send",
  [`POST ${W}/broadcasts/:id/cancel`]: "broadcast.cancel",
  [`POST ${W}/landing-page`]: "landing_page.create",
  [`PATCH ${W}/landing-page`]: "landing_page.update",
  [`POST ${W}/landing-page/preview`]: "landing_page.preview",
  [`POST ${W}/landing-page/generate`]: "landing_page.generate",
  [`POST ${W}/landing-page/publish`]: "landing_page.publish",
};

/**
 * Changes that are no team member's: the visitors' own events, sent with a key by a team's backend on a visitor's
 * behalf, and a provider's reports (the subscriber, the view, the email's status are their record; and the hot path);
 * and what is done before anyone is signed in (a sign-in, a link's password, a reset link asked for).
 */
export const UNAUDITED = new Set([
  `POST ${W}/sign-up`,
  `POST ${W}/log-view`,
  "POST /api/v1/email/events",
  "POST /api/v1/session",
  "POST /api/v1/session/password",
  "POST /api/v1/session/reset",
]);

/** Whether a request may be audited at all: a scope is opened for it (a cheap test of method and URL). */
export function mayChange(method: string, url: string): boolean {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const query = url.indexOf("?", start);
  const path = url.slice(start, query === -1 ? undefined : query);
  if (!path.startsWith("/api/")) return false;
  return !path.endsWith("/sign-up") && !path.endsWith("/log-view") && path !== "/api/v1/email/events";
}
