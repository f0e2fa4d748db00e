// Email templates: {{merge tags}} filled from the subscriber, a plain-text part (the Markdown as written) and an HTML
// part rendered from Markdown (marked) inside the waitlist's email look (issue 45: logo, colour, footer).
import { Marked } from "marked";
import { escapeHtml } from "../pages/html";

export interface TemplateValues {
  name: string | null;
  email: string;
  waitlist_name: string;
  position?: number;
  inflated_position?: number;
  points?: number;
  referral_count?: number;
  /** A milestone email's reward. */
  reward?: string;
  referral_code?: string;
  referral_link?: string;
  confirm_link?: string;
  status_link?: string;
  invite_link?: string;
  /** Issue 16: every email but the confirmation (RFC 8058 link, also in the List-Unsubscribe header). */
  unsubscribe_link?: string;
  /** Issue 47: the data download link (our own email's, not a merge tag of the team's templates). */
  data_link?: string;
}

/** How a waitlist's emails look (settings `email_template`). */
export interface EmailLook {
  /** Shown at the top when there is no logo, and as the logo's alt text. */
  name: string;
  logoUrl: string | null;
  /** Links and the top rule, `#rrggbb`. */
  color: string;
  /** The sender's postal address and anything else the law of the list's country wants at the bottom. */
  footer: string | null;
}

/** Link merge tags become clickable in the HTML part; `_url` names are accepted as aliases. */
const LINKS = new Set(["referral_link", "confirm_link", "status_link", "invite_link", "unsubscribe_link", "data_link"]);
const ALIASES: Record<string, string> = {
  referral_url: "referral_link",
  confirm_url: "confirm_link",
  status_url: "status_link",
  thank_you_link: "status_link",
  unsubscribe_url: "unsubscribe_link",
};
/** Every merge tag a template may use (its aliases too); anything else in `{{ }}` is refused where a template is written. */
export const MERGE_TAGS = [
  "first_name", "name", "email", "waitlist_name", "position", "inflated_position", "points", "referral_count", "referral_code",
  "reward", "referral_link", "status_link", "confirm_link", "invite_link", "unsubscribe_link",
] as const;
const KNOWN = new Set<string>([...MERGE_TAGS, ...Object.keys(ALIASES)]);
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;
/** Anything in double braces, to find the unknown ones (`{{ Name }}`, `{{first-name}}`). */
const BRACED = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The merge tags of `template` that are not known, as written. */
export const unknownMergeTags = (template: string): string[] => [...new Set([...template.matchAll(BRACED)].map((m) => m[1]).filter((tag) => !KNOWN.has(tag)))];

function lookup(values: TemplateValues, raw: string): { key: string; value: string } | null {
  const key = ALIASES[raw] ?? raw;
  if (key === "name") return { key, value: values.name?.trim() || "there" };
  if (key === "first_name") return { key, value: values.name?.trim().split(/\s+/)[0] || "there" };
  const v = (values as unknown as Record<string, unknown>)[key];
  return v === undefined || v === null ? null : { key, value: String(v) };
}

/** The line appended to a template that does not show `{{unsubscribe_link}}` itself (issue 16: the link is always visible). */
export const UNSUBSCRIBE_LINE = "Unsubscribe: {{unsubscribe_link}}";

export function withUnsubscribeLink(template: string): string {
  const shown = [...template.matchAll(PLACEHOLDER)].some((m) => (ALIASES[m[1]] ?? m[1]) === "unsubscribe_link");
  return shown ? template : `${template.trimEnd()}\n\n${UNSUBSCRIBE_LINE}`;
}

/** The text part: the template as written (Markdown reads as text), merge tags filled, the footer below a signature line. */
export function renderText(template: string, values: TemplateValues, look?: EmailLook): string {
  const body = template.replace(PLACEHOLDER, (_, raw) => lookup(values, raw)?.value ?? "");
  return look?.footer ? `${body.trimEnd()}\n\n-- \n${look.footer}` : body;
}

// GitHub-flavoured, single newlines kept as line breaks; raw HTML in a template is shown as text, never as markup
const markdown = new Marked({ gfm: true, breaks: true, renderer: { html: ({ text }) => escapeHtml(text) } });

/**
 * The HTML part. Merge tags become marks before the Markdown is parsed and values after, each escaped: neither a
 * subscriber's name nor a template can inject markup, and a value is never read as Markdown. A link merge tag is a
 * link's target where the template made it one (`[join]({{referral_link}})`), and a link of its own elsewhere.
 */
export function renderHtml(template: string, values: TemplateValues, look?: EmailLook): string {
  const filled: string[] = [];
  const marked = template.replace(PLACEHOLDER, (_, raw) => {
    filled.push(raw);
    return `wlmerge${filled.length - 1}x`;
  });
  let html = markdown.parse(marked, { async: false }) as string;
  html = html.replace(/wlmerge(\d+)x/g, (mark, i, offset: number) => {
    const found = lookup(values, filled[Number(i)]);
    if (!found) return "";
    const value = escapeHtml(found.value);
    const inAttribute = /="[^"]*$/.test(html.slice(Math.max(0, offset - 200), offset));
    return LINKS.has(found.key) && !inAttribute ? `<a href="${value}">${value}</a>` : value;
  });
  return layout(html, look);
}

const DEFAULT_LOOK: EmailLook = { name: "", logoUrl: null, color: "#111827", footer: null };

function layout(body: string, look: EmailLook = DEFAULT_LOOK): string {
  const color = /^#[0-9a-fA-F]{6}$/.test(look.color) ? look.color : DEFAULT_LOOK.color;
  const head = look.logoUrl
    ? `<p style="margin:0 0 24px"><img src="${escapeHtml(look.logoUrl)}" alt="${escapeHtml(look.name)}" height="40" style="height:40px;border:0"></p>`
    : look.name
      ? `<p style="margin:0 0 24px;font-weight:600;font-size:18px">${escapeHtml(look.name)}</p>`
      : "";
  const footer = look.footer
    ? `<p style="margin:32px 0 0;padding-top:16px;border-top:1px solid #e5e7eb;color:#6b7280;font-size:13px">${escapeHtml(look.footer).replace(/\r?\n/g, "<br>")}</p>`
    : "";
  return `<!doctype html><html><head><meta charset="utf-8"><style>a{color:${color}}</style></head><body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#111;max-width:560px;margin:0 auto;padding:24px;border-top:4px solid ${color}">${head}${body}${footer}</body></html>`;
}

export const renderSubject = (template: string, values: TemplateValues): string => renderText(template, values).replace(/[\r\n]+/g, " ").trim().slice(0, 200);
