// Email templates from the waitlist settings: {{placeholders}} filled, a text part and an escaped HTML part.
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
}

/** Link placeholders become clickable in the HTML part; `_url` names are accepted as aliases. */
const LINKS = new Set(["referral_link", "confirm_link", "status_link", "invite_link", "unsubscribe_link"]);
const ALIASES: Record<string, string> = {
  referral_url: "referral_link",
  confirm_url: "confirm_link",
  status_url: "status_link",
  thank_you_link: "status_link",
  unsubscribe_url: "unsubscribe_link",
};
const PLACEHOLDER = /\{\{\s*([a-z_]+)\s*\}\}/g;

function lookup(values: TemplateValues, raw: string): { key: string; value: string } | null {
  const key = ALIASES[raw] ?? raw;
  if (key === "name") return { key, value: values.name?.trim() || "there" };
  const v = (values as unknown as Record<string, unknown>)[key];
  return v === undefined || v === null ? null : { key, value: String(v) };
}

/** The line appended to a template that does not show `{{unsubscribe_link}}` itself (issue 16: the link is always visible). */
export const UNSUBSCRIBE_LINE = "Unsubscribe: {{unsubscribe_link}}";

export function withUnsubscribeLink(template: string): string {
  const shown = [...template.matchAll(PLACEHOLDER)].some((m) => (ALIASES[m[1]] ?? m[1]) === "unsubscribe_link");
  return shown ? template : `${template.trimEnd()}\n\n${UNSUBSCRIBE_LINE}`;
}

export function renderText(template: string, values: TemplateValues): string {
  return template.replace(PLACEHOLDER, (whole, raw) => lookup(values, raw)?.value ?? "");
}

/** Literal text and values are escaped separately, so neither a template nor a subscriber's name can inject markup. */
export function renderHtml(template: string, values: TemplateValues): string {
  let html = "";
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    html += escapeHtml(template.slice(last, m.index));
    const found = lookup(values, m[1]);
    if (found) html += LINKS.has(found.key) ? `<a href="${escapeHtml(found.value)}">${escapeHtml(found.value)}</a>` : escapeHtml(found.value);
    last = m.index! + m[0].length;
  }
  html += escapeHtml(template.slice(last));
  const paragraphs = html.split(/\n{2,}/).map((p) => `<p style="margin:0 0 16px">${p.replace(/\n/g, "<br>")}</p>`);
  return `<!doctype html><html><body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#111;max-width:560px;margin:0 auto;padding:24px">${paragraphs.join("")}</body></html>`;
}

export const renderSubject = (template: string, values: TemplateValues): string => renderText(template, values).replace(/[\r\n]+/g, " ").trim().slice(0, 200);
