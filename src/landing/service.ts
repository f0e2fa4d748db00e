// Landing pages (spec: Landing page resource and status table): create, read, patch, publish/unpublish.
import { and, eq, sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db, Tables } from "../db/db";
import type { Auth, Waitlist } from "../http/api";
import { AppError, badRequest, conflict, notFound } from "../http/errors";
import { planOf } from "../account/plans";
import { parseBackground } from "./background";
import { countersOf } from "../analytics/service";
import { DEFAULT_BUTTON, HEADLINE, type CreatePageInput, type PatchPageInput } from "./model";

export type Page = Tables["landingPages"]["$inferSelect"];

/**
 * The columns a hosted page is rendered from: what publish freezes into `published_snapshot` (issue 16). The row
 * itself is the draft; while the page is published, visitors see the snapshot, so generate (and is_edit) change
 * only the draft and the live page stays as it was until the next publish.
 */
const LIVE_FIELDS = ["pageType", "headline", "description", "buttonText", "collectName", "collectPhone", "background", "theme", "seo", "aiHtml", "aiMeta"] as const;
type LiveFields = Pick<Page, (typeof LIVE_FIELDS)[number]>;

export const snapshotOf = (page: LiveFields): string => JSON.stringify(Object.fromEntries(LIVE_FIELDS.map((f) => [f, page[f]])));

/** The page as visitors see it: the published snapshot over the row (a page published before snapshots existed is its row). */
export function livePage(page: Page): Page {
  return page.publishedSnapshot ? { ...page, ...(JSON.parse(page.publishedSnapshot) as LiveFields) } : page;
}

/** A published page whose draft differs from what is live (a generated draft not yet published). */
export function hasUnpublishedChanges(page: Page): boolean {
  if (page.status !== "published" || !page.publishedSnapshot) return false;
  const live = JSON.parse(page.publishedSnapshot) as LiveFields;
  return LIVE_FIELDS.some((f) => (page[f] ?? null) !== (live[f] ?? null));
}

/** Writes `set` only if nobody changed the page since it was read (its version); null when someone did. */
async function updateIfUnchanged(db: Db, page: Page, set: Partial<Page>): Promise<Page | null> {
  const { landingPages } = db.t;
  const [updated] = await db.tx((tx) =>
    tx
      .update(landingPages)
      .set({ ...set, version: sql`${landingPages.version} + 1` as unknown as number })
      .where(and(eq(landingPages.id, page.id), eq(landingPages.version, page.version)))
      .returning(),
  );
  return updated ?? null;
}

/** Reads the page, computes a change from it and writes it, again from a fresh read if another write came between. */
async function changePage(db: Db, waitlistId: string, change: (page: Page) => Partial<Page>): Promise<Page> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const page = await findPage(db, waitlistId);
    const updated = await updateIfUnchanged(db, page, change(page));
    if (updated) return updated;
  }
  throw conflict("The landing page was changed by several requests at once: retry");
}

const MARKUP = /<\s*[a-z!/?]/i;

/** spec: all text fields are plain text; HTML is rejected. Blank optional text is stored as null. */
function plain(value: string | undefined | null, field: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (MARKUP.test(value)) throw badRequest(`${field} must be plain text: HTML is not allowed`);
  const v = value.trim();
  return v === "" ? null : v;
}

function headline(value: string): string {
  const v = plain(value, "headline");
  if (!v || v.length < HEADLINE.min) throw badRequest(`headline must be ${HEADLINE.min} to ${HEADLINE.max} characters`);
  return v;
}

function seo(input: PatchPageInput["seo"], current: string): string {
  const merged = { ...(JSON.parse(current) as Record<string, unknown>) };
  if (!input) return JSON.stringify(merged);
  for (const key of ["title", "description", "og_title", "og_description"] as const) {
    if (input[key] !== undefined) merged[key] = plain(input[key], `seo.${key}`) ?? null;
  }
  if (input.keywords !== undefined) merged.keywords = input.keywords.map((k, i) => plain(k, `seo.keywords[${i}]`)).filter(Boolean);
  return JSON.stringify(merged);
}

/** The columns a create (or the landing_page of a new waitlist) writes; validates everything first. */
export function newPageRow(waitlistId: string, input: CreatePageInput) {
  const at = now();
  return {
    id: `lp_${token(20)}`,
    waitlistId,
    pageType: "standard" as const,
    status: "draft" as const,
    headline: headline(input.headline),
    description: plain(input.description, "description") ?? null,
    buttonText: plain(input.button_text, "button_text") ?? DEFAULT_BUTTON,
    collectName: input.collect_name ?? false,
    collectPhone: input.collect_phone ?? false,
    background: input.background ? JSON.stringify(parseBackground(input.background)) : null,
    theme: input.theme ?? "light",
    seo: seo(input.seo, "{}"),
    createdAt: at,
    updatedAt: at,
  };
}

export const DRAFT_NOTE = "The page is a draft: publish it with POST .../landing-page/publish to make it live at hosted_page_url.";

export async function createPage(db: Db, w: Waitlist, input: CreatePageInput) {
  const row = newPageRow(w.id, input);
  try {
    await db.tx((tx) => tx.insert(tx.t.landingPages).values(row));
  } catch (err) {
    if (db.d.uniqueKey(err) !== null) throw conflict("This waitlist already has a landing page: change it with PATCH");
    throw err;
  }
  return {
    id: row.id,
    status: row.status,
    page_type: row.pageType,
    preview: { headline: row.headline, description: row.description, button_text: row.buttonText },
    hosted_page_url: null,
    draft_note: DRAFT_NOTE,
  };
}

export async function findPage(db: Db, waitlistId: string): Promise<Page> {
  const { landingPages } = db.t;
  const [page] = await db.select().from(landingPages).where(eq(landingPages.waitlistId, waitlistId));
  if (!page) throw notFound("This waitlist has no landing page yet: create one with POST .../landing-page");
  return page;
}

/** `{BASE_URL}/p/{slug}` once published, or the custom domain when one is set (served at its root). */
export function hostedPageUrl(page: Pick<Page, "status"> | undefined, w: Pick<Waitlist, "slug" | "customDomain">, baseUrl: string): string | null {
  if (page?.status !== "published") return null;
  if (w.customDomain) return `${new URL(baseUrl).protocol}//${w.customDomain}`;
  return `${baseUrl}/p/${w.slug}`;
}

export async function pageView(db: Db, page: Page, w: Waitlist, auth: Auth, baseUrl: string) {
  const ai = page.pageType === "ai";
  const counters = await countersOf(db, w.id);
  const s = JSON.parse(page.seo) as Record<string, any>;
  return {
    id: page.id,
    page_type: page.pageType,
    status: page.status,
    headline: page.headline,
    description: page.description,
    // spec: on AI pages these are null
    button_text: ai ? null : page.buttonText,
    collect_name: ai ? null : page.collectName,
    collect_phone: ai ? null : page.collectPhone,
    background: ai || !page.background ? null : (JSON.parse(page.background) as { type: string; value: string }),
    theme: page.theme,
    seo: { title: s.title ?? null, description: s.description ?? null, keywords: s.keywords ?? [], og_title: s.og_title ?? null, og_description: s.og_description ?? null },
    hosted_page_url: hostedPageUrl(page, w, baseUrl),
    has_unpublished_changes: hasUnpublishedChanges(page),
    analytics: { views: counters.views, sign_ups: counters.subscribers },
    ...(ai ? { ai: { credits_remaining: planOf(auth.account.plan).hasAi ? auth.account.aiCredits : 0, last_generated_at: page.lastGeneratedAt } } : {}),
  };
}

const COPY_FIELDS = ["headline", "description", "button_text", "collect_name", "collect_phone", "background"] as const;

/** The columns a patch changes, validated; on AI pages only theme and seo may change (409 otherwise). */
export function pageChanges(page: Page, input: PatchPageInput): Partial<Page> {
  if (page.pageType === "ai") {
    const copy = COPY_FIELDS.filter((f) => input[f] !== undefined);
    if (copy.length) throw conflict(`${copy.join(", ")} cannot be changed on an AI page: edit it with POST .../landing-page/generate (is_edit: true); theme and seo can be patched`);
  }
  const set: Partial<Page> = {};
  if (input.headline !== undefined) set.headline = headline(input.headline);
  if (input.description !== undefined) set.description = plain(input.description, "description") ?? null;
  if (input.button_text !== undefined) set.buttonText = plain(input.button_text, "button_text") ?? DEFAULT_BUTTON;
  if (input.collect_name !== undefined) set.collectName = input.collect_name;
  if (input.collect_phone !== undefined) set.collectPhone = input.collect_phone;
  if (input.background !== undefined) set.background = JSON.stringify(parseBackground(input.background));
  if (input.theme !== undefined) set.theme = input.theme;
  if (input.seo !== undefined) set.seo = seo(input.seo, page.seo);
  return set;
}

export async function patchPage(db: Db, w: Waitlist, input: PatchPageInput) {
  if (!input || Object.keys(input).length === 0) throw badRequest("Provide at least one field to change");
  return changePage(db, w.id, (page) => {
    const set: Partial<Page> = { ...pageChanges(page, input), updatedAt: now() };
    // spec: a published page changes live at once: the snapshot visitors see takes the same change in the same
    // statement (the version purges every instance's cache); a pending AI draft stays a draft
    if (page.status === "published" && page.publishedSnapshot) {
      const live = livePage(page);
      set.publishedSnapshot = snapshotOf({ ...live, ...pageChanges(live, input) });
    }
    return set;
  });
}

/** What publish checks (spec: 422): an email input, a submit button, a headline of at least 3 characters. */
export function publishProblems(page: Page): string[] {
  const problems: string[] = [];
  if ((page.headline ?? "").trim().length < HEADLINE.min) problems.push(`the headline must be at least ${HEADLINE.min} characters`);
  if (page.pageType === "ai") {
    const html = page.aiHtml ?? "";
    if (!/<input\b[^>]*\btype\s*=\s*["']?email\b/i.test(html)) problems.push("the page has no email input");
    if (!/<button\b(?![^>]*\btype\s*=\s*["']?(?:button|reset)\b)[^>]*>|<input\b[^>]*\btype\s*=\s*["']?submit\b/i.test(html)) problems.push("the page has no submit button");
  }
  return problems;
}

export async function publish(db: Db, w: Waitlist, unpublish: boolean, baseUrl: string) {
  if (unpublish) {
    const page = await findPage(db, w.id);
    const { landingPages } = db.t;
    await db.tx((tx) => tx.update(landingPages).set({ status: "unpublished", updatedAt: now(), version: sql`${landingPages.version} + 1` as unknown as number }).where(eq(landingPages.id, page.id)));
    return { status: "unpublished", hosted_page_url: null, notes: "The page is offline; publish it again to bring it back." };
  }
  // the draft that was checked is the one that goes live: a generate landing in between makes this read again
  await changePage(db, w.id, (page) => {
    const problems = publishProblems(page);
    if (problems.length) throw new AppError("unprocessable", `The page cannot be published: ${problems.join("; ")}`);
    const at = now();
    return { status: "published", publishedAt: at, updatedAt: at, publishedSnapshot: snapshotOf(page) };
  });
  const url = hostedPageUrl({ status: "published" }, w, baseUrl)!;
  return {
    status: "published",
    hosted_page_url: url,
    notes: `The page is live at ${url}. Its form posts to ${baseUrl}/s/${w.key}. ${
      w.ogImageUrl ? `Its social-share image is ${w.ogImageUrl}.` : `No custom social-share image is set: link previews show the one drawn from its name and colour, ${baseUrl}/og/${w.key}.png.`
    }`,
  };
}
