// Issue 16: what /p/{slug} (and a custom domain's /) shows while no page is published: a plain sign-up form,
// so that a referral link never leads nowhere. It is the standard hosted page with only the waitlist's name.
import type { Waitlist } from "../http/api";
import type { Page } from "../landing/service";
import { renderHostedPage, type RenderedPage } from "./hosted";

export function plainSignUpPage(w: Waitlist, urls: { baseUrl: string; pageUrl: string }): RenderedPage {
  const page = {
    id: `plain-${w.id}`,
    waitlistId: w.id,
    pageType: "standard",
    status: "published",
    headline: `Join the ${w.name} waitlist`,
    description: null,
    buttonText: null,
    collectName: false,
    collectPhone: false,
    background: null,
    theme: "light",
    seo: JSON.stringify({ title: `Join the ${w.name} waitlist` }),
  } as Partial<Page> as Page;
  return renderHostedPage(page, w, urls);
}
