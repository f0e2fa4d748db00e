// Landing-page endpoints (spec: Landing pages): create, get, patch, publish/unpublish, with their rate-limit buckets.
import { Elysia, t } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/db";
import type { apiGuard } from "../http/api";
import { errorResponses } from "../http/error-schemas";
import { Text } from "../http/schema";
import { CreatedPageResponse, CreatePageBody, PageResponse, PatchPageBody, PreviewPageBody, PublishResponse } from "./model";
import { createPage, findPage, pageView, patchPage, publish } from "./service";
import { createPreview, PREVIEW_TTL_MS } from "./preview";
import { generate, PROMPT_MAX } from "../ai/service";
import { warmShareImage } from "../pages/og-image";

export function landingRoutes(deps: { db: Db; config: Config; api: ReturnType<typeof apiGuard> }) {
  const { db, config } = deps;
  const params = t.Object({ waitlistKey: t.String() });
  return new Elysia({ name: "landing/routes", prefix: "/api/v1/waitlist/:waitlistKey/landing-page" })
    .use(deps.api)
    .post(
      "",
      async ({ auth, body, set }) => {
        const landing_page = await createPage(db, auth.waitlist!, body);
        set.status = 201;
        return { success: true, data: { landing_page } };
      },
      {
        api: { key: "any", bucket: "landing_create", landing: true },
        params,
        body: CreatePageBody,
        response: { 201: CreatedPageResponse, ...errorResponses(400, 401, 403, 409, 429, 503) },
        detail: { tags: ["Landing pages"], summary: "Create the landing page", description: "Creates a draft. Unknown keys are refused with the list of allowed keys; text is plain (HTML is refused)." },
      },
    )
    .get("", async ({ auth }) => ({ success: true, data: { landing_page: await pageView(db, await findPage(db, auth.waitlist!.id), auth.waitlist!, auth, config.baseUrl) } }), {
      api: { key: "any", bucket: "landing_get", landing: true },
      params,
      response: { 200: PageResponse, ...errorResponses(401, 403, 404, 429, 503) },
      detail: { tags: ["Landing pages"], summary: "Get the landing page" },
    })
    .patch(
      "",
      async ({ auth, body }) => ({ success: true, data: { landing_page: await pageView(db, await patchPage(db, auth.waitlist!, body), auth.waitlist!, auth, config.baseUrl) } }),
      {
        api: { key: "any", bucket: "landing_update", landing: true },
        params,
        body: PatchPageBody,
        response: { 200: PageResponse, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
        detail: { tags: ["Landing pages"], summary: "Update the landing page", description: "Any subset of the create fields. A published page changes at once. On AI pages only theme and seo can change (409 otherwise)." },
      },
    )
    .post("/preview", async ({ auth, body }) => ({ success: true, data: await createPreview(db, auth.waitlist!, body, config.baseUrl) }), {
      api: { key: "any", bucket: "landing_preview", landing: true },
      params,
      body: PreviewPageBody,
      response: {
        200: t.Object({ success: t.Boolean(), data: t.Object({ preview_url: t.String(), expires_at: t.Number() }) }),
        ...errorResponses(400, 401, 403, 409, 429, 503),
      },
      detail: {
        tags: ["Landing pages"],
        summary: "Preview unsaved changes (extension)",
        description: `Renders the page as it would be with these fields applied (same fields and rules as PATCH; an empty object previews the page as it is, or a new draft), without saving anything. preview_url serves it for ${PREVIEW_TTL_MS / 60_000} minutes; its form does not submit. Used by the dashboard's live preview.`,
      },
    })
    .post(
      "/generate",
      async ({ auth, body }) => ({ success: true, data: await generate(db, config, auth, auth.waitlist!, body) }),
      {
        api: { key: "any", bucket: "landing_generate", landing: true },
        params,
        body: t.Object(
          {
            prompt: Text({ maxLength: PROMPT_MAX, description: "What the page should be (required, max 2000 characters)" }),
            is_edit: t.Optional(t.Boolean({ description: "true continues the conversation of the existing AI page" })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: t.Object({
            success: t.Boolean(),
            data: t.Object({
              status: t.String(),
              page_type: t.String(),
              preview: t.Object({ title: t.String(), description: t.String(), style: t.String(), primary_color: t.String() }),
              credits_remaining: t.Number(),
              note: t.String(),
            }),
          }),
          ...errorResponses(400, 401, 402, 403, 409, 429, 502, 503, 504),
        },
        detail: {
          tags: ["Landing pages"],
          summary: "Generate or edit the page with AI",
          description: "Synchronous (typically 20 to 50 s); costs 1 AI credit. 502 refunds the credit; 504 (timeout) does not. The HTML is sanitized before it is stored.",
        },
      },
    )
    .post("/publish", async ({ auth, body }) => {
      const data = await publish(db, auth.waitlist!, body?.unpublish === true, config.baseUrl);
      // issue 46: the generated share image is drawn at publish time, not by the first link preview that asks
      if (data.status === "published" && !auth.waitlist!.ogImageUrl) warmShareImage({ name: auth.waitlist!.name, color: auth.waitlist!.emailColor });
      return { success: true, data };
    }, {
      api: { key: "any", bucket: "landing_publish", landing: true },
      params,
      body: t.Optional(t.Object({ unpublish: t.Optional(t.Boolean({ description: "true takes the page offline (status unpublished)" })) }, { additionalProperties: false })),
      response: { 200: PublishResponse, ...errorResponses(400, 401, 403, 404, 422, 429, 503) },
      detail: { tags: ["Landing pages"], summary: "Publish or unpublish the landing page", description: "422 when the page lacks an email input or a submit button, or its headline is under 3 characters." },
    });
}
