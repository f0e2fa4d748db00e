// The shell of every server-rendered page: escaped title, first-party CSS/JS, and the security headers.
import { escapeHtml } from "./html";

/** No third-party request can load; inline script and style are refused (DESIGN §4). */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "cache-control": "no-store",
};

export function page(title: string, body: string, opts: { script?: boolean; description?: string; social?: string } = {}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
${opts.description ? `<meta name="description" content="${escapeHtml(opts.description)}">` : ""}
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
${opts.social ?? ""}
<link rel="stylesheet" href="/assets/pages.css">
</head>
<body>
<main>
${body}
</main>
${opts.script ? '<script src="/assets/pages.js" defer></script>' : ""}
</body>
</html>`;
}

export const htmlResponse = (html: string, status = 200) => new Response(html, { status, headers: PAGE_HEADERS });

/** A friendly page for a link that leads nowhere (DESIGN §4: not a JSON error). */
export const notFoundPage = (title: string, message: string) =>
  htmlResponse(page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`), 404);
