// Issue 46: where visitors and sign-ups come from: a link's UTM parameters and the host of the page before ours,
// read the same way from a page's query string, a form post, a widget's post and API metadata.
export const UTM_FIELDS = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"] as const;
export type UtmField = (typeof UTM_FIELDS)[number];
/** Every field a sign-up's origin is posted in (forms, widget) and given in (API metadata). */
export const ORIGIN_FIELDS = [...UTM_FIELDS, "referrer_host"] as const;
export type OriginField = (typeof ORIGIN_FIELDS)[number];

export const UTM_MAX = 200;
const HOST_MAX = 253;

/** A sign-up's or a view's origin: each value trimmed, null when absent. */
export type Origin = Record<OriginField, string | null>;

export const noOrigin = (): Origin => ({ utm_source: null, utm_medium: null, utm_campaign: null, utm_term: null, utm_content: null, referrer_host: null });

/** A host name (lower case, no port, no trailing dot) from a host or a URL; null when it is not one. */
export function hostName(value: string): string | null {
  let host = value.trim().toLowerCase();
  if (!host) return null;
  if (host.includes("/") || host.includes(":")) {
    try {
      host = new URL(host.includes("://") ? host : `http://${host}`).hostname;
    } catch {
      return null;
    }
  }
  host = host.replace(/\.$/, "");
  return host.length <= HOST_MAX && /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(host) && !host.includes("..") ? host : null;
}

const clean = (value: unknown, max: number): string | null => {
  const v = typeof value === "string" ? value.trim() : "";
  return v && v.length <= max && !v.includes("\0") ? v : null;
};

/**
 * A visitor's origin as a page, a form, a widget or API metadata hands it over: a value that is not usable (not a
 * string, too long, not a host) is not taken, never an error (a visitor does not choose the links they follow, and
 * the spec keeps every metadata key as a custom field whatever it holds).
 */
export function lenientOrigin(get: (field: OriginField) => unknown): Origin {
  const origin = noOrigin();
  for (const field of UTM_FIELDS) origin[field] = clean(get(field), UTM_MAX);
  const host = clean(get("referrer_host"), HOST_MAX);
  origin.referrer_host = host === null ? null : hostName(host);
  return origin;
}

/**
 * The source a visit or sign-up is counted under (`GET .../stats/sources`): the link's utm_source, else the host the
 * visitor came from; with the link's medium and campaign. Null values for a visit from nowhere (typed or bookmarked).
 */
export function sourceOf(o: Origin): { source: string | null; medium: string | null; campaign: string | null } {
  return { source: o.utm_source ?? o.referrer_host, medium: o.utm_medium, campaign: o.utm_campaign };
}
