// The AI landing-page builder (spec: POST .../landing-page/generate; DESIGN §4 AI pages): credits, the model call,
// lenient parsing, sanitizing, and the stored conversation that `is_edit` continues.
import { eq, sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { Auth, Waitlist } from "../http/api";
import { AppError, badRequest, conflict } from "../http/errors";
import { planOf } from "../account/plans";
import { chat, UpstreamTimedOut, type ChatMessage } from "./client";
import { parseGeneratedPage } from "./reply";
import { sanitizePage } from "./sanitize";
import { snapshotOf } from "../landing/service";

export const PROMPT_MAX = 2000;
/** Turns kept for `is_edit` (user + assistant messages), so a long conversation does not grow without end. */
const HISTORY_MAX = 12;

export function systemPrompt(w: Pick<Waitlist, "name" | "key">): string {
  return [
    `You design a single landing page for the waitlist "${w.name}".`,
    `Answer with one JSON object and nothing else: {"title": string (3-120 chars, the page headline), "description": string (one or two sentences), "style": string (a few words naming the visual style), "primary_color": string (a hex color like #4f46e5), "html": string}.`,
    `"html" is the content of <body> only: semantic HTML with a <style> block or style attributes for the design.`,
    `It must contain exactly one <form method="post" action="/s/${w.key}"> with <input type="email" name="email" required> and a <button type="submit">. It may add <input type="text" name="name">.`,
    `Use no scripts, no event handlers, no iframes, no images, no web fonts, no url() in CSS and no external resources of any kind: the page is served with a strict Content-Security-Policy.`,
  ].join("\n");
}

const plainText = (value: string, max: number) => value.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim().slice(0, max);

export async function generate(db: Db, config: Config, auth: Auth, w: Waitlist, input: { prompt: string; is_edit?: boolean }) {
  if (!config.aiBaseUrl) throw new AppError("unavailable", "AI generation is not configured on this server (set AI_BASE_URL, AI_MODEL and AI_API_KEY)");
  const prompt = input.prompt.trim();
  if (!prompt) throw badRequest("prompt is required");
  const { landingPages } = db.t;
  const [existing] = await db.select().from(landingPages).where(eq(landingPages.waitlistId, w.id));
  if (input.is_edit && existing?.pageType !== "ai") throw conflict("There is no AI page to edit: generate one first (is_edit false)");
  if (!planOf(auth.account.plan).hasAi) throw new AppError("payment_required", "Not enough AI credits: the balance is 0 (the Free plan includes no AI credits)");

  // one statement that cannot go below zero: of two calls with one credit left, one gets 402
  const [took] = await db.rows<{ ai_credits: number }>(
    sql`UPDATE accounts SET ai_credits = ai_credits - 1 WHERE id = ${auth.account.id} AND ai_credits > 0 RETURNING ai_credits`,
  );
  if (!took) throw new AppError("payment_required", "Not enough AI credits: the balance is 0; each generation costs 1");
  const refund = () => db.exec(sql`UPDATE accounts SET ai_credits = ai_credits + 1 WHERE id = ${auth.account.id}`);

  const history: ChatMessage[] = input.is_edit && existing?.aiConversation ? JSON.parse(existing.aiConversation) : [];
  const ask: ChatMessage = { role: "user", content: input.is_edit ? `Change the page: ${prompt}` : prompt };
  let reply: string;
  try {
    reply = await chat(config, [{ role: "system", content: systemPrompt(w) }, ...history, ask]);
  } catch (err) {
    // DESIGN §4: a timeout keeps the credit (the model may have done the work); other failures refund it
    if (err instanceof UpstreamTimedOut) throw new AppError("timeout", `The AI model did not answer within ${Math.round(config.aiTimeoutMs / 1000)} s; one credit was used`);
    await refund();
    throw new AppError("bad_gateway", `AI generation failed upstream (${(err as Error).message}); your credit was refunded, so it is safe to retry`);
  }
  const page = parseGeneratedPage(reply);
  if (!page) {
    await refund();
    throw new AppError("bad_gateway", "The AI model's answer was not a page; your credit was refunded, so it is safe to retry");
  }
  const clean = sanitizePage(page.html, `/s/${w.key}`);
  const title = plainText(page.title, 120) || plainText(w.name, 120);
  const description = plainText(page.description, 1000);
  const meta = { title, description, style: plainText(page.style, 200), primary_color: /^#[0-9a-f]{3,8}$/i.test(page.primary_color.trim()) ? page.primary_color.trim() : "", css: clean.css };
  const conversation = JSON.stringify([...history, ask, { role: "assistant", content: reply }].slice(-HISTORY_MAX));
  const at = now();
  const values = {
    pageType: "ai" as const,
    headline: title,
    description,
    aiHtml: clean.html,
    aiMeta: JSON.stringify(meta),
    aiConversation: conversation,
    lastGeneratedAt: at,
    updatedAt: at,
  };
  const live = existing?.status === "published";
  if (existing) {
    // issue 16: generate changes the draft only. A published page stays published and online as it was (its
    // snapshot, frozen here for a page published before snapshots existed) until the next publish; decided in SQL,
    // so a publish or unpublish during the model call is not undone
    await db.tx((tx) =>
      tx
        .update(landingPages)
        .set({
          ...values,
          status: sql`CASE WHEN ${landingPages.status} = 'published' THEN 'published' ELSE 'draft' END` as unknown as "draft",
          publishedSnapshot: sql`CASE WHEN ${landingPages.status} = 'published' THEN COALESCE(${landingPages.publishedSnapshot}, ${snapshotOf(existing)}) ELSE ${landingPages.publishedSnapshot} END` as unknown as string,
          version: sql`${landingPages.version} + 1` as unknown as number,
        })
        .where(eq(landingPages.id, existing.id)),
    );
  } else {
    await db.tx((tx) => tx.insert(landingPages).values({ id: `lp_${token(20)}`, waitlistId: w.id, status: "draft", theme: "light", seo: "{}", createdAt: at, ...values }));
  }
  return {
    // spec: generate answers status draft: what it made is a draft, whatever is live
    status: "draft",
    page_type: "ai",
    preview: { title, description, style: meta.style, primary_color: meta.primary_color },
    credits_remaining: Number(took.ai_credits),
    note: live
      ? "The generated page is a draft: the published page stays online unchanged until you publish this draft with POST .../landing-page/publish. Edit it with is_edit: true."
      : "The generated page is a draft: check it, then publish it with POST .../landing-page/publish. Edit it with is_edit: true.",
  };
}
