// Serving published landing pages at /p/{slug} and at / on a custom domain: an in-memory cache checked
// against the page's version whenever anything was committed (so a change on any instance is seen by the next request
// on every instance), and a counted view.
import { eq, sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { knownView, logView, visitorKey } from "../analytics/service";
import type { Logger } from "../log";
import { hostedPageUrl, livePage } from "../landing/service";
import { notFoundPage, PAGE_HEADERS } from "./layout";
import { renderHostedPage, visitorInputs, withInputs, type PageVisitor, type RenderedPage } from "./hosted";
import { sourceOf } from "../analytics/sources";
import { createHash } from "node:crypto";
import { plainSignUpPage } from "./signup-form";
import { customDomainOrigin } from "../waitlists/links";
import { readCache } from "../db/read-cache";

const MAX_CACHED = 500;

/**
 * A published page as served: its HTML (with the ref slot), its tag (a hash of what is sent, so every instance
 * tags the same page alike), and its bytes without a ref, plain and gzipped, made once per version (issue 19).
 */
interface Entry {
  version: string;
  page: RenderedPage;
  tag: string;
  /** UTF-8, sent as they are: a string would be copied with the ref slot filled and encoded again per request */
  plain: PageBytes;
  gzipped: PageBytes;
  headers: { "content-security-policy": string; "cache-control": string; vary: string };
}

/** Published pages may be kept by the browser, but are asked for again each time (a 304 when unchanged). */
const REVALIDATE = "no-cache";

/**
 * A page's bytes as a Blob, whose bytes a Response shares: one made from a Uint8Array copies them (20 KB with nine
 * headers: 5.1-5.7 us a Response against 1.9-2.3 us, in a loop). In the server the page took 31.2-31.6 us of the event
 * loop against 32.0-33.9 (bench/README.md). A class of its own because Elysia answers a plain Blob as a file
 * (`accept-ranges`, `content-range`, 206 to a Range request); this one it hands to `new Response` with the route's
 * headers, as it did the bytes.
 */
class PageBytes extends Blob {}

function entryOf(version: string, page: RenderedPage): Entry {
  const plain = new TextEncoder().encode(withInputs(page.html, ""));
  return {
    version,
    page,
    tag: createHash("sha256").update(page.csp).update("\0").update(page.html).digest("base64url").slice(0, 27),
    plain: new PageBytes([plain]),
    gzipped: new PageBytes([Bun.gzipSync(plain)]),
    headers: { "content-security-policy": page.csp, "cache-control": REVALIDATE, vary: "accept-encoding" },
  };
}

type Visitor = PageVisitor & { ip: string; userAgent: string };

interface Head {
  page_id: string;
  waitlist_id: string;
  status: string;
  page_version: number;
  updated_at: number;
}

export function createPageServer(deps: { db: Db; config: Config; log: Logger }) {
  const { db, config } = deps;
  const cache = new Map<string, Entry>();
  // issue 19: which page an address shows, and its version, read again only once something was committed
  const heads = readCache<string, Head | undefined>(db, { max: MAX_CACHED, tables: ["waitlists", "landing_pages"] });
  const headOf = (where: "slug" | "domain", value: string) =>
    heads.get(`${where}\0${value}`, async () => {
      const match = where === "slug" ? sql`w.slug = ${value}` : sql`w.custom_domain = ${value}`;
      const [head] = await db.rows<Head>(sql`
        SELECT p.id AS page_id, w.id AS waitlist_id, p.status, p.version AS page_version, w.updated_at
        FROM waitlists w JOIN landing_pages p ON p.waitlist_id = w.id WHERE ${match}`);
      return head;
    });

  /** The page as a Response, or (the published page, the common case) its HTML with its headers put in `set`. */
  async function serve(where: "slug" | "domain", value: string, visitor: Visitor, request: Request, set: { headers: Record<string, unknown> }): Promise<Response | string | Blob> {
    const head = await headOf(where, value);
    if (!head || head.status !== "published") return plainPage(where, value, visitor);
    const version = `${head.page_version}:${head.updated_at}`;
    let entry = cache.get(head.page_id);
    if (!entry || entry.version !== version) {
      const { landingPages, waitlists } = db.t;
      const [w] = await db.select().from(waitlists).where(eq(waitlists.id, head.waitlist_id));
      const [page] = await db.select().from(landingPages).where(eq(landingPages.id, head.page_id));
      if (!w || !page || page.status !== "published") return plainPage(where, value, visitor);
      entry = entryOf(version, renderHostedPage(livePage(page), w, { baseUrl: config.baseUrl, pageUrl: hostedPageUrl(page, w, config.baseUrl)! }));
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
      cache.set(head.page_id, entry);
    }
    countView(head.waitlist_id, visitor);
    // a visitor's referral code and origin go into the page: its tag names them too (a hash, as they are the visitor's)
    const inputs = visitorInputs(visitor);
    const etag = inputs ? `"${entry.tag}-${createHash("sha256").update(inputs).digest("base64url").slice(0, 16)}"` : `"${entry.tag}"`;
    // the same bytes as last time (the tag hashes them): the browser shows its copy
    if (request.headers.get("if-none-match")?.split(/\s*,\s*/).includes(etag)) return new Response(null, { status: 304, headers: { etag, "cache-control": REVALIDATE } });
    // bytes or a string: Elysia builds one Response with these headers (a returned Response would be copied to merge them)
    Object.assign(set.headers, PAGE_HEADERS, entry.headers, { etag });
    if (!inputs && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
      return new Response(entry.gzipped, { headers: { ...(set.headers as Record<string, string>), "content-encoding": "gzip" } });
    }
    return inputs ? withInputs(entry.page.html, inputs) : entry.plain;
  }

  /** The page counts its own views, deduplicated like log-view (DESIGN §4), with where they came from; it never waits for the count. */
  function countView(waitlistId: string, visitor: Visitor) {
    if (knownView(db, waitlistId, visitor.ip, visitor.userAgent)) return;
    const from = { ...sourceOf(visitor.origin), referral: visitor.ref !== null };
    void visitorKey(db, null, visitor.ip, visitor.userAgent)
      .then((key) => logView(db, waitlistId, key, from))
      .catch((err) => deps.log.warn("view not counted", { error: (err as Error)?.message ?? String(err) }));
  }

  // issue 19: read again only once something was committed (anywhere)
  const plainPages = readCache<string, { waitlistId: string; page: RenderedPage } | null>(db, { max: MAX_CACHED, tables: ["waitlists"] });

  /** Issue 16: no published page yet (or any more): a plain sign-up form, so a referral link never leads nowhere. */
  async function plainPage(where: "slug" | "domain", value: string, visitor: Visitor): Promise<Response> {
    const found = await plainPages.get(`${where}\0${value}`, async () => {
      const { waitlists } = db.t;
      const [w] = await db.select().from(waitlists).where(where === "slug" ? eq(waitlists.slug, value) : eq(waitlists.customDomain, value));
      if (!w) return null;
      const pageUrl = where === "slug" ? `${config.baseUrl}/p/${w.slug}` : customDomainOrigin(value, config.baseUrl);
      return { waitlistId: w.id, page: plainSignUpPage(w, { baseUrl: config.baseUrl, pageUrl }) };
    });
    if (!found) return notFoundPage("Page not found", "There is no waitlist here.");
    countView(found.waitlistId, visitor);
    return new Response(withInputs(found.page.html, visitorInputs(visitor)), { headers: { ...PAGE_HEADERS, "content-security-policy": found.page.csp } });
  }

  return {
    bySlug: (slug: string, visitor: Visitor, request: Request, set: { headers: Record<string, unknown> }) => serve("slug", slug, visitor, request, set),
    byDomain: (host: string, visitor: Visitor, request: Request, set: { headers: Record<string, unknown> }) => serve("domain", host, visitor, request, set),
  };
}
