// Where a waitlist's public links lead (issue 16): every referral and share link is built here, so none leads nowhere.
import type { Waitlist } from "../http/api";

/** A custom domain's origin, built as hosted_page_url builds it (landing/service.ts): BASE_URL's scheme, the domain's host. */
export const customDomainOrigin = (domain: string, baseUrl: string) => `${new URL(baseUrl).protocol}//${domain}`;

/**
 * The team's own form (`signup_url`, its query string kept), else the custom domain's root, else the hosted page
 * `/p/{slug}`, which shows a plain sign-up form while no page is published (pages/signup-form.ts).
 */
export function referralLink(w: Pick<Waitlist, "slug" | "customDomain" | "signupUrl">, code: string, baseUrl: string): string {
  if (w.signupUrl) {
    const url = new URL(w.signupUrl);
    url.searchParams.set("ref", code);
    return url.toString();
  }
  const ref = `?ref=${encodeURIComponent(code)}`;
  if (w.customDomain) return `${customDomainOrigin(w.customDomain, baseUrl)}/${ref}`;
  return `${baseUrl}/p/${w.slug}${ref}`;
}
