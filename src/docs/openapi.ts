// OpenAPI 3 document at /swagger/json and Swagger UI at /swagger, its assets served from the binary (no CDN).
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "text" };

const ASSETS: Record<string, { body: string; type: string }> = {
  "swagger-ui-bundle.js": { body: bundle as unknown as string, type: "text/javascript; charset=utf-8" },
  "swagger-ui.css": { body: css as unknown as string, type: "text/css; charset=utf-8" },
};

export function apiDocs() {
  return new Elysia({ name: "docs/openapi" })
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
        path: "/swagger",
        specPath: "/swagger/json",
        provider: "swagger-ui",
        exclude: { paths: [/^\/swagger/] },
        swagger: {
          url: "/swagger/json",
          cdn: "/swagger/assets/swagger-ui-bundle.js",
          theme: "/swagger/assets/swagger-ui.css",
          autoDarkMode: false,
          persistAuthorization: true,
        } as any,
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
