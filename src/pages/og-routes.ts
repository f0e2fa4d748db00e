// GET /og/{waitlistKey}.png (issue 46 item 5): the waitlist's generated share image, the og:image of its hosted and
// status pages while it has no og_image_url. The same bytes from every instance, so an ETag of what it shows.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import type { Db } from "../db/db";
import { notFoundPage } from "./layout";
import { renderShareImage, shareImageTag } from "./og-image";

const CACHE_CONTROL = "public, max-age=3600";

/** If-None-Match names this ETag, or any (`*`); weak comparison, as RFC 9110 §13.1.2 asks of GET. */
const isKnownTo = (ifNoneMatch: string | null, etag: string) =>
  ifNoneMatch !== null && (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag));

export function ogImageRoutes(deps: { db: Db }) {
  const { db } = deps;
  const { waitlists } = db.t;
  return new Elysia({ name: "pages/og-routes" }).get(
    "/og/:file",
    async ({ params, request }) => {
      const key = /^(.+)\.png$/.exec(params.file)?.[1];
      const [look] = key ? await db.select({ name: waitlists.name, color: waitlists.emailColor }).from(waitlists).where(eq(waitlists.key, key)) : [];
      if (!look) return notFoundPage("Image not found", "There is no share image at this address.");
      const etag = shareImageTag(look);
      if (isKnownTo(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers: { etag, "cache-control": CACHE_CONTROL } });
      return new Response(await renderShareImage(look), { headers: { "content-type": "image/png", etag, "cache-control": CACHE_CONTROL } });
    },
    { detail: { hide: true }, params: t.Object({ file: t.String() }) },
  );
}
