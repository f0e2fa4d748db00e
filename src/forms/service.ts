// The public form action POST /s/{waitlistKey} (DESIGN §4): who may post, and what a form post means as a sign-up.
import type { Waitlist } from "../http/api";
import { badRequest } from "../http/errors";
import type { SignUpInput } from "../subscribers/model";
import { lenientOrigin, ORIGIN_FIELDS, UTM_FIELDS } from "../analytics/sources";

/** The Origin's host, else the Referer's; null when neither is usable. */
export function submittingHost(request: Request): string | null {
  for (const header of ["origin", "referer"]) {
    const value = request.headers.get(header);
    if (!value || value === "null") continue;
    try {
      return new URL(value).hostname.toLowerCase();
    } catch {}
  }
  return null;
}

/** DESIGN §4: the service's own host, the waitlist's custom domain, or one of its allowed_domains (`*.x` matches subdomains). */
export function isAllowedHost(host: string | null, w: Pick<Waitlist, "customDomain" | "allowedDomains">, ownHost: string): boolean {
  if (!host) return false;
  if (host === ownHost || host === w.customDomain) return true;
  // a BASE_URL on localhost (the default) is reached as 127.0.0.1 too
  if (ownHost === "localhost" && (host === "127.0.0.1" || host === "[::1]" || host === "::1")) return true;
  const allowed = JSON.parse(w.allowedDomains) as string[];
  return allowed.some((d) => (d.startsWith("*.") ? host.endsWith(d.slice(1)) : host === d));
}

// `altcha` is the captcha's payload (issue 16): checked by the route, never kept as metadata
const KNOWN = new Set<string>(["email", "name", "phone", "ref", "referred_by", "fingerprint", "visitor_id", "website", "altcha", ...ORIGIN_FIELDS]);

function text(value: unknown): string | undefined {
  if (Array.isArray(value)) return text(value[0]);
  return typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : undefined;
}

/** 400 for a field name or text value holding a NUL character, which PostgreSQL's text cannot store. */
export function refuseNul(fields: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (key.includes("\0") || (text(value) ?? "").includes("\0")) throw badRequest(`${key.includes("\0") ? "a field name" : key} must not contain a NUL character`);
  }
}

/**
 * Issue 46: where the sign-up came from, as posted (the hosted pages and the widget copy the UTM parameters and the
 * referring host into the form); a post without any UTM field takes those of the `Referer`'s query (a team's own
 * form on a page opened from a campaign link). Unusable values are dropped: never a 400 for a link's parameters.
 */
function originOf(f: Record<string, unknown>, referer: string | null) {
  const posted = (field: string) => text(f[field]);
  if (UTM_FIELDS.some((k) => posted(k)?.trim()) || !referer) return lenientOrigin(posted);
  let query: URLSearchParams;
  try {
    query = new URL(referer).searchParams;
  } catch {
    return lenientOrigin(posted);
  }
  return lenientOrigin((field) => (field === "referrer_host" ? posted(field) : query.get(field)));
}

/** A form post as a sign-up; null when the honeypot was filled (a bot: answered as a success, nothing stored). */
export function formSignUp(fields: Record<string, unknown> | null | undefined, questions: string[] = [], referer: string | null = null): SignUpInput | null {
  const f = fields && typeof fields === "object" ? fields : {};
  if (text(f.website)?.trim()) return null;
  refuseNul(f);
  const email = text(f.email);
  if (!email?.trim()) throw badRequest("email is required");
  const metadata: Record<string, unknown> = {};
  // issue 46: a field named by one of the waitlist's questions is its answer (as posted: checked by the sign-up)
  const answers: Record<string, unknown> = {};
  for (const key of questions) if (f[key] !== undefined) answers[key] = f[key];
  for (const [key, value] of Object.entries(f)) {
    if (KNOWN.has(key) || questions.includes(key)) continue;
    const v = text(value);
    if (v !== undefined) metadata[key] = v;
  }
  const ref = text(f.ref) ?? text(f.referred_by);
  if (ref?.trim()) metadata.referred_by = ref.trim();
  const fingerprint = text(f.fingerprint);
  if (fingerprint?.trim()) metadata.fingerprint = fingerprint.trim();
  for (const [field, value] of Object.entries(originOf(f, referer))) if (value !== null) metadata[field] = value;
  for (const [field, max] of [["email", 254], ["name", 200], ["phone", 200]] as const) {
    const v = text(f[field]);
    if (v && v.length > max) throw badRequest(`${field} must be at most ${max} characters`);
  }
  return { email, name: text(f.name) ?? null, phone: text(f.phone) ?? null, metadata, answers: answers as SignUpInput["answers"] };
}

/** A client that asked for JSON gets the sign-up JSON; a browser gets redirects and pages. */
export const wantsJson = (request: Request) => {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json") && !accept.includes("text/html");
};
