// Serving published landing pages at /p/{slug} and at / on a custom domain: an in-memory cache checked
// against the page's version on every request (so a change on any instance purges every instance), and a counted view.
import { eq, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { landingPages, waitlists } from "../db/schema";
import { logView, visitorKey } from "../analytics/service";
import type { Logger } from "../log";
import { hostedPageUrl, livePage } from "../landing/service";
import { notFoundPage, PAGE_HEADERS } from "./layout";
import { renderHostedPage, withRef, type RenderedPage } from "./hosted";

const MAX_CACHED = 500;

export function createPageServer(deps: { db: Db; config: Config; log: Logger }) {
  const { db, config } = deps;
  const cache = new Map<string, { version: string; page: RenderedPage }>();

  async function serve(where: "slug" | "domain", value: string, visitor: { ip: string; userAgent: string; ref: string | null }): Promise<Response> {
    const match = where === "slug" ? sql`w.slug = ${value}` : sql`w.custom_domain = ${value}`;
    const [head] = await db.all<{ page_id: string; waitlist_id: string; status: string; version: string }>(sql`
      SELECT p.id AS page_id, w.id AS waitlist_id, p.status, p.version || ':' || w.updated_at AS version
      FROM waitlists w JOIN landing_pages p ON p.waitlist_id = w.id WHERE ${match}`);
    if (!head || head.status !== "published") return notFoundPage("Page not found", "There is no published page here.");
    let entry = cache.get(head.page_id);
    if (!entry || entry.version !== head.version) {
      const [w] = await db.select().from(waitlists).where(eq(waitlists.id, head.waitlist_id));
      const [page] = await db.select().from(landingPages).where(eq(landingPages.id, head.page_id));
      if (!w || !page || page.status !== "published") return notFoundPage("Page not found", "There is no published page here.");
      entry = { version: head.version, page: renderHostedPage(livePage(page), w, { baseUrl: config.baseUrl, pageUrl: hostedPageUrl(page, w, config.baseUrl)! }) };
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
      cache.set(head.page_id, entry);
    }
    // the page counts its own views, deduplicated like log-view (DESIGN §4); it never waits for the count
    void visitorKey(db, null, visitor.ip, visitor.userAgent)
      .then((key) => logView(db, head.waitlist_id, key))
      .catch((err) => deps.log.warn("view not counted", { error: (err as Error)?.message ?? String(err) }));
    return new Response(withRef(entry.page.html, visitor.ref), { headers: { ...PAGE_HEADERS, "content-security-policy": entry.page.csp } });
  }

  return {
    bySlug: (slug: string, visitor: { ip: string; userAgent: string; ref: string | null }) => serve("slug", slug, visitor),
    byDomain: (host: string, visitor: { ip: string; userAgent: string; ref: string | null }) => serve("domain", host, visitor),
  };
}
