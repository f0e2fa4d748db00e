// Composition root: the ordered router set-up (errors, request log, auth, features, docs) in one place.
import { auditRoutes, auditScopes } from "./audit/routes";
import { auditWrites } from "./audit/writes";
import { userRoutes } from "./users/routes";
import { Elysia, NotFoundError, t } from "elysia";
import { sql } from "drizzle-orm";
import type { Config } from "./config";
import type { Db } from "./db/db";
import type { Logger } from "./log";
import { errorHandler } from "./http/error-handler";
import { requestLog } from "./http/request-log";
import { createMetrics, formSignUpCounter } from "./http/metrics";
import { apiGuard } from "./http/api";
import { accountRoutes } from "./account/routes";
import { waitlistRoutes } from "./waitlists/routes";
import { subscriberRoutes } from "./subscribers/routes";
import { tagRoutes } from "./tags/routes";
import { broadcastRoutes } from "./broadcasts/routes";
import { emailRoutes } from "./email/routes";
import { analyticsRoutes } from "./analytics/routes";
import { webhookRoutes } from "./webhooks/routes";
import { pageRoutes } from "./pages/routes";
import { importRoutes } from "./imports/routes";
import { ogImageRoutes } from "./pages/og-routes";
import { dashboardRoutes } from "./dashboard/routes";
import { securityHeaders } from "./http/security-headers";
import { landingRoutes } from "./landing/routes";
import { formRoutes } from "./forms/routes";
import { apiDocs } from "./docs/openapi";
import type { Dispatcher } from "./outbox/dispatcher";

export interface AppDeps {
  config: Config;
  db: Db;
  log: Logger;
  dispatcher: Dispatcher;
}

/** A health check that takes longer than this reports the database unavailable (a PostgreSQL server that stopped answering). */
export const HEALTH_TIMEOUT_MS = 3_000;

/**
 * A read of a table, so a read transaction starts on the embedded file and a PostgreSQL connection is used (a bare
 * `SELECT 1` is answered by SQLite without opening the database). Rejects after HEALTH_TIMEOUT_MS.
 */
async function databaseAnswers(db: Db): Promise<void> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("health check timed out")), HEALTH_TIMEOUT_MS)));
  try {
    await Promise.race([db.rows(sql`SELECT 1 AS ok FROM meta LIMIT 1`), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function buildApp(deps: AppDeps) {
  const { config } = deps;
  // issue 48: a request's first write carries its audit row (audit/writes.ts)
  const db = auditWrites(deps.db);
  const api = apiGuard(deps);
  const dispatch = deps.dispatcher.dispatch;
  const metrics = createMetrics({ db, token: config.metricsToken });
  const app: Elysia = new Elysia({ normalize: false })
    .use(errorHandler({ log: deps.log, routes: () => app.routes }))
    .use(requestLog(deps.log, metrics?.observe))
    .use(auditScopes())
    .use(securityHeaders())
    // no key, slug, token or email holds a NUL character (PostgreSQL's text cannot), so such a path names nothing
    .onRequest(({ request }) => {
      const url = request.url;
      if (!url.includes("%00")) return;
      const query = url.indexOf("?");
      if ((query === -1 ? url : url.slice(0, query)).includes("%00")) throw new NotFoundError();
    })
    .use(api)
    .get(
      "/healthz",
      async ({ set }) => {
        try {
          await databaseAnswers(db);
          return { status: "ok" };
        } catch {
          set.status = 503;
          return { status: "unavailable" };
        }
      },
      { response: { 200: t.Object({ status: t.String() }), 503: t.Object({ status: t.String() }) }, detail: { tags: ["Operations"], summary: "Health check (database round trip)" } },
    )
    .use(metrics?.routes ?? new Elysia({ name: "http/metrics-off" }))
    .use(accountRoutes({ db, api }))
    .use(auditRoutes({ db, api }))
    .use(userRoutes({ db, config, api, dispatcher: deps.dispatcher }))
    .use(waitlistRoutes({ db, config, api, dispatcher: deps.dispatcher }))
    .use(subscriberRoutes({ db, config, api, dispatch }))
    .use(importRoutes({ db, config, api }))
    .use(tagRoutes({ db, config, api, dispatch }))
    .use(broadcastRoutes({ db, config, api, dispatch }))
    .use(emailRoutes({ db, api, dispatch, log: deps.log }))
    .use(analyticsRoutes({ db, config, api }))
    .use(webhookRoutes({ db, config, api, dispatcher: deps.dispatcher }))
    .use(landingRoutes({ db, config, api }))
    .use(formRoutes({ db, config, dispatch: formSignUpCounter(dispatch) }))
    .use(pageRoutes({ db, config, dispatch, log: deps.log }))
    .use(ogImageRoutes({ db }))
    .use(dashboardRoutes())
    .use(apiDocs(config)) as unknown as Elysia;
  return app;
}
