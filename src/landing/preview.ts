// Dashboard previews (DESIGN §9): the landing page with unsaved edits applied, validated like a PATCH,
// kept for ten minutes and served at /preview/{token} by the hosted page's own renderer.
import { and, eq, gt, lte } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import type { PatchPageInput } from "./model";
import { newPageRow, pageChanges, type Page } from "./service";

export const PREVIEW_TTL_MS = 10 * 60_000;
const PLACEHOLDER_HEADLINE = "Your headline";

/** The page as it would be with `input` applied (a new standard draft when there is no page yet). */
export async function createPreview(db: Db, w: Waitlist, input: PatchPageInput, baseUrl: string) {
  const { landingPages, landingPreviews } = db.t;
  const [existing] = await db.select().from(landingPages).where(eq(landingPages.waitlistId, w.id));
  const base: Page = existing ?? {
    ...newPageRow(w.id, { headline: PLACEHOLDER_HEADLINE }),
    aiHtml: null,
    aiMeta: null,
    aiConversation: null,
    lastGeneratedAt: null,
    version: 0,
    publishedAt: null,
  };
  const page: Page = { ...base, ...pageChanges(base, input ?? {}) };
  const row = { token: token(32), waitlistId: w.id, page: JSON.stringify(page), expiresAt: now() + PREVIEW_TTL_MS };
  await db.tx((tx) => tx.insert(landingPreviews).values(row));
  return { preview_url: `${baseUrl}/preview/${row.token}`, expires_at: row.expiresAt };
}

/** A preview that has not expired, with its waitlist as it is now. */
export async function findPreview(db: Db, previewToken: string, at = now()): Promise<{ page: Page; waitlist: Waitlist } | null> {
  const { landingPreviews, waitlists } = db.t;
  const [found] = await db
    .select({ page: landingPreviews.page, waitlist: waitlists })
    .from(landingPreviews)
    .innerJoin(waitlists, eq(waitlists.id, landingPreviews.waitlistId))
    .where(and(eq(landingPreviews.token, previewToken), gt(landingPreviews.expiresAt, at)));
  return found ? { page: JSON.parse(found.page) as Page, waitlist: found.waitlist } : null;
}

export const prunePreviews = (db: Db, at = now()) => db.delete(db.t.landingPreviews).where(lte(db.t.landingPreviews.expiresAt, at));
