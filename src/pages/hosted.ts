// The hosted landing page /p/{slug} (DESIGN §4): escaped text, SEO and Open Graph tags, theme and background,
// a form posting to /s/{waitlistKey} with a honeypot; its own CSP allows exactly its one inline <style> by hash.
import { formFieldsOf } from "../waitlists/form-fields";
import { createHash } from "node:crypto";
import type { Page } from "../landing/service";
import type { Waitlist } from "../http/api";
import { escapeHtml } from "./html";
import { captchaWidget } from "./captcha-widget";
import { shareImageTag } from "./og-image";
import { ORIGIN_FIELDS, type Origin } from "../analytics/sources";

export const REF_SLOT = "<!--ref-->";

const THEMES = {
  light: { text: "#111827", muted: "#4b5563", card: "rgba(255,255,255,.94)", border: "#e5e7eb", input: "#fff", bg: "#f3f4f6", accent: "#4f46e5", accentText: "#fff" },
  dark: { text: "#f3f4f6", muted: "#9ca3af", card: "rgba(17,24,39,.92)", border: "#374151", input: "#111827", bg: "#0b0f19", accent: "#818cf8", accentText: "#0b0f19" },
};

export interface RenderedPage {
  html: string;
  csp: string;
}

/** A dashboard preview may be framed by the dashboard (same origin) and never submits its form. */
export function pageCsp(styleHashes: string[] = [], preview = false): string {
  const styles = ["'self'", ...styleHashes.map((h) => `'sha256-${h}'`)].join(" ");
  const [formAction, frameAncestors] = preview ? ["'none'", "'self'"] : ["'self'", "'none'"];
  return `default-src 'none'; style-src ${styles}; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action ${formAction}; base-uri 'none'; frame-ancestors ${frameAncestors}`;
}

/**
 * Issue 46: the waitlist's share image, a large card with it: `og_image_url`, or without one the image drawn from its
 * name and colour (pages/og-routes.ts), 1200x630.
 */
export function socialImage(w: Pick<Waitlist, "ogImageUrl" | "key" | "name" | "emailColor">, baseUrl: string): string {
  // the drawing's tag in the address: a new name or colour is a new image to link previews that keep the old one
  const url = escapeHtml(w.ogImageUrl ?? `${baseUrl}/og/${w.key}.png?v=${shareImageTag({ name: w.name, color: w.emailColor }).slice(1, 9)}`);
  const size = w.ogImageUrl ? "" : `\n<meta property="og:image:width" content="1200">\n<meta property="og:image:height" content="630">`;
  return `<meta property="og:image" content="${url}">${size}
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:image" content="${url}">`;
}

function head(page: Page, w: Waitlist, urls: { baseUrl: string; pageUrl: string }, style: string, stylesheet: string | null): string {
  const seo = JSON.parse(page.seo) as { title?: string; description?: string; keywords?: string[]; og_title?: string; og_description?: string };
  const title = seo.title || page.headline || w.name;
  const description = seo.description || page.description || "";
  return `<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<meta name="description" content="${escapeHtml(description)}">
${seo.keywords?.length ? `<meta name="keywords" content="${escapeHtml(seo.keywords.join(", "))}">` : ""}
<link rel="canonical" href="${escapeHtml(urls.pageUrl)}">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<meta property="og:type" content="website">
<meta property="og:title" content="${escapeHtml(seo.og_title || title)}">
<meta property="og:description" content="${escapeHtml(seo.og_description || description)}">
<meta property="og:url" content="${escapeHtml(urls.pageUrl)}">
${socialImage(w, urls.baseUrl)}
${stylesheet ? `<link rel="stylesheet" href="${stylesheet}">` : ""}
<style>${style}</style>
</head>`;
}

const hashOf = (style: string) => createHash("sha256").update(style).digest("base64");

/** An AI page: its sanitized body and stylesheet (ai/sanitize.ts) in our shell, under the same CSP as standard pages. */
function renderAiPage(page: Page, w: Waitlist, urls: { baseUrl: string; pageUrl: string }, preview: boolean): RenderedPage {
  const meta = JSON.parse(page.aiMeta ?? "{}") as { css?: string };
  // the CSS was filtered when the page was generated: no url(), @import, escapes or markup characters
  const style = `*{box-sizing:border-box}body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}\n${meta.css ?? ""}`;
  // the ref slot goes right after the (rewritten) form tag, so a referral link works on AI pages too
  // with the captcha on (issue 16), the widget goes just before the form's end
  const body = (page.aiHtml ?? "").replace(/(<form\b[^>]*>)/i, `$1${REF_SLOT}`).replace(/<\/form>/i, `${questionFields(w)}${captchaWidget(w)}</form>`);
  const html = `<!doctype html>
<html lang="en" data-theme="${escapeHtml(page.theme)}">
${head(page, w, urls, style, null)}
<body>
${body}
</body>
</html>`;
  return { html, csp: pageCsp([hashOf(style)], preview) };
}

export function renderHostedPage(page: Page, w: Waitlist, urls: { baseUrl: string; pageUrl: string }, preview = false): RenderedPage {
  if (page.pageType === "ai") return renderAiPage(page, w, urls, preview);
  const theme = THEMES[page.theme === "dark" ? "dark" : "light"];
  const background = page.background ? (JSON.parse(page.background) as { value: string }).value : theme.bg;
  // every value here was parsed and re-emitted by us (landing/background.ts) or is a constant
  const style = `:root{--text:${theme.text};--muted:${theme.muted};--card:${theme.card};--border:${theme.border};--input:${theme.input};--accent:${theme.accent};--accent-text:${theme.accentText};--bg:${theme.bg}}body{background:${background}}`;
  const fields = [
    page.collectName ? `<label>Name<input name="name" type="text" autocomplete="name" maxlength="200"></label>` : "",
    `<label>Email<input name="email" type="email" autocomplete="email" required maxlength="254" placeholder="you@example.com"></label>`,
    page.collectPhone ? `<label>Phone<input name="phone" type="tel" autocomplete="tel" maxlength="200"></label>` : "",
    questionFields(w),
  ].join("");
  const html = `<!doctype html>
<html lang="en" data-theme="${escapeHtml(page.theme)}">
${head(page, w, urls, style, "/assets/hosted.css")}
<body>
<main class="hero">
<h1>${escapeHtml(page.headline)}</h1>
${page.description ? `<p class="description">${escapeHtml(page.description)}</p>` : ""}
<form method="post" action="/s/${escapeHtml(w.key)}">
${fields}
<div class="hp" aria-hidden="true"><label>Website<input name="website" type="text" tabindex="-1" autocomplete="off"></label></div>
${REF_SLOT}
${captchaWidget(w)}
<button type="submit">${escapeHtml(page.buttonText || "Join the waitlist")}</button>
</form>
<p class="fine">No spam. Unsubscribe any time.</p>
</main>
</body>
</html>`;
  return { html, csp: pageCsp([hashOf(style)], preview) };
}

/** Issue 46: the waitlist's own questions as form controls, named by their keys (every text escaped). */
export function questionFields(w: Waitlist): string {
  return formFieldsOf(w)
    .map((f) => {
      const label = escapeHtml(f.label);
      const name = escapeHtml(f.key);
      const required = f.required ? " required" : "";
      const max = f.max_length ? ` maxlength="${f.max_length}"` : "";
      switch (f.type) {
        case "textarea":
          return `<label>${label}<textarea name="${name}" rows="3"${f.max_length ? max : ' maxlength="2000"'}${required}></textarea></label>`;
        case "select":
          return `<label>${label}<select name="${name}"${required}><option value="">Choose…</option>${f.options.map((o) => `<option>${escapeHtml(o)}</option>`).join("")}</select></label>`;
        case "multiselect":
          return `<fieldset class="choices"><legend>${label}${f.required ? " (at least one)" : ""}</legend>${f.options
            .map((o) => `<label class="choice"><input type="checkbox" name="${name}" value="${escapeHtml(o)}">${escapeHtml(o)}</label>`)
            .join("")}</fieldset>`;
        case "checkbox":
          return `<label class="choice"><input type="checkbox" name="${name}" value="on"${required}>${label}</label>`;
        case "number":
          return `<label>${label}<input name="${name}" type="number" step="any" inputmode="decimal"${required}></label>`;
        case "url":
          return `<label>${label}<input name="${name}" type="url"${f.max_length ? max : ' maxlength="2000"'}${required}></label>`;
        default:
          return `<label>${label}<input name="${name}" type="text"${f.max_length ? max : ' maxlength="200"'}${required}></label>`;
      }
    })
    .join("");
}

/** The `ref` query parameter if it is a plausible referral code, else null. */
export const refCode = (ref: string | null): string | null => (ref && /^[A-Za-z0-9_-]{1,64}$/.test(ref) ? ref : null);

/** What a visitor's link and arrival give a page's form: the referral code, the UTM parameters, the referring host. */
export interface PageVisitor {
  ref: string | null;
  origin: Origin;
}

/** The hidden inputs that carry them into the form post ("" for none; every value escaped, only a plausible code kept). */
export function visitorInputs(v: PageVisitor | null): string {
  if (!v) return "";
  const code = refCode(v.ref);
  let inputs = code ? `<input type="hidden" name="ref" value="${escapeHtml(code)}">` : "";
  for (const field of ORIGIN_FIELDS) {
    const value = v.origin[field];
    if (value !== null) inputs += `<input type="hidden" name="${field}" value="${escapeHtml(value)}">`;
  }
  return inputs;
}

/** A rendered page with the visitor's hidden inputs in its slot. */
export const withInputs = (html: string, inputs: string): string => html.replace(REF_SLOT, inputs);
