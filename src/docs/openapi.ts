// OpenAPI 3 document at /swagger/json and Swagger UI at /swagger, its assets served from the binary (no CDN).
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "text" };

const START = `window.ui = SwaggerUIBundle({ dom_id: "#swagger-ui", url: "/swagger/json", persistAuthorization: true });\n`;

const ASSETS: Record<string, { body: string; type: string }> = {
  "start.js": { body: START, type: "text/javascript; charset=utf-8" },
  "swagger-ui-bundle.js": { body: bundle as unknown as string, type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { body: css as unknown as string, type: "text/css; charset=utf-8" },
};

/** Swagger UI's page: its bundle and a start-up script, all from this server, under a CSP (no inline script). */
const UI_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Waitlist API</title>
<link rel="stylesheet" href="/swagger/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/swagger/assets/swagger-ui-bundle.js"></script>
<script src="/swagger/assets/start.js"></script>
</body>
</html>`;
// Swagger UI sets some styles inline as it renders
const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function apiDocs() {
  return new Elysia({ name: "docs/openapi" })
    .get("/swagger", () => new Response(UI_PAGE, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": UI_CSP } }), { detail: { hide: true } })
    .get(
      "/swagger/assets/:file",
      ({ params, set }) => {
        const asset = ASSETS[params.file];
        if (!asset) {
          set.status = 404;
          return { statusCode: 404, error: "Not Found", message: `No asset ${params.file}` };
        }
        return new Response(asset.body, { headers: { "content-type": asset.type, "cache-control": "public, max-age=86400" } });
      },
      { detail: { hide: true } },
    )
    .use(
      openapi({
        // the UI page is ours (above): the plugin serves the document only
        path: "/swagger",
        specPath: "/swagger/json",
        provider: null,
        exclude: { paths: [/^\/swagger/] },
        documentation: {
          info: {
            title: "Waitlist API",
            version: "1.0.0",
            description: "Waitlists, subscribers, referrals, landing pages and analytics. Authenticate with an X-Api-Key header: an account key (wl_acct_...) or a per-waitlist key (wl_...).",
          },
          components: { securitySchemes: { ApiKey: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
          tags: [
            { name: "Account", description: "The account behind a key" },
            { name: "Waitlists", description: "Create and list waitlists (account key only)" },
            { name: "Subscribers", description: "Sign-ups and subscriber data" },
            { name: "Tags", description: "Labels on subscribers (extension)" },
            { name: "Analytics", description: "Views and counters" },
            { name: "Settings", description: "Per-waitlist settings and keys (extension)" },
            { name: "Operations", description: "Health" },
          ],
        },
      }),
    );
}
