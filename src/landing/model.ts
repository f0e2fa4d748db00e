// TypeBox models of the landing-page endpoints (spec: Landing page, Landing pages endpoints; caps in Limits).
import { t } from "elysia";

export const HEADLINE = { min: 3, max: 120 };
export const DESCRIPTION_MAX = 1000;
export const BUTTON_MAX = 40;
export const SEO = { title: 70, description: 200, keywords: 10, keyword: 40, ogTitle: 70, ogDescription: 200 };
export const DEFAULT_BUTTON = "Join the waitlist";

export const PAGE_FIELDS = ["headline", "description", "button_text", "collect_name", "collect_phone", "background", "theme", "seo"] as const;

const Seo = t.Object(
  {
    title: t.Optional(t.String({ maxLength: SEO.title })),
    description: t.Optional(t.String({ maxLength: SEO.description })),
    keywords: t.Optional(t.Array(t.String({ maxLength: SEO.keyword }), { maxItems: SEO.keywords })),
    og_title: t.Optional(t.String({ maxLength: SEO.ogTitle })),
    og_description: t.Optional(t.String({ maxLength: SEO.ogDescription })),
  },
  { additionalProperties: false },
);

const Background = t.Object(
  {
    type: t.Union([t.Literal("color"), t.Literal("gradient")]),
    value: t.String({ maxLength: 400, description: "A hex color, or a linear-/radial-gradient() of hex or rgb() colors" }),
  },
  { additionalProperties: false },
);

const fields = {
  description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
  button_text: t.Optional(t.String({ maxLength: BUTTON_MAX })),
  collect_name: t.Optional(t.Boolean()),
  collect_phone: t.Optional(t.Boolean()),
  background: t.Optional(Background),
  theme: t.Optional(t.Union([t.Literal("light"), t.Literal("dark")])),
  seo: t.Optional(Seo),
};

export const CreatePageBody = t.Object(
  { headline: t.String({ minLength: HEADLINE.min, maxLength: HEADLINE.max }), ...fields },
  { additionalProperties: false, description: "Plain text only: HTML in any field is refused" },
);
export type CreatePageInput = typeof CreatePageBody.static;

export const PatchPageBody = t.Object(
  { headline: t.Optional(t.String({ minLength: HEADLINE.min, maxLength: HEADLINE.max })), ...fields },
  { additionalProperties: false },
);
export type PatchPageInput = typeof PatchPageBody.static;

const nullableString = t.Union([t.String(), t.Null()]);

export const LandingPage = t.Object({
  id: t.String(),
  page_type: t.String(),
  status: t.String(),
  headline: nullableString,
  description: nullableString,
  button_text: nullableString,
  collect_name: t.Union([t.Boolean(), t.Null()]),
  collect_phone: t.Union([t.Boolean(), t.Null()]),
  background: t.Union([t.Object({ type: t.String(), value: t.String() }), t.Null()]),
  theme: t.String(),
  seo: t.Object({
    title: nullableString,
    description: nullableString,
    keywords: t.Array(t.String()),
    og_title: nullableString,
    og_description: nullableString,
  }),
  hosted_page_url: nullableString,
  has_unpublished_changes: t.Boolean({
    description:
      "Extension: true while the page is published and its draft (a newer generate or is_edit) differs from the live page; status stays published and the live page is unchanged until publish",
  }),
  analytics: t.Object({ views: t.Number(), sign_ups: t.Number() }),
  ai: t.Optional(t.Object({ credits_remaining: t.Union([t.Number(), t.Null()]), last_generated_at: t.Union([t.Number(), t.Null()]) })),
});

export const PageResponse = t.Object({ success: t.Boolean(), data: t.Object({ landing_page: LandingPage }) });

export const CreatedPageResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({
    landing_page: t.Object({
      id: t.String(),
      status: t.String(),
      page_type: t.String(),
      preview: t.Object({ headline: t.String(), description: nullableString, button_text: t.String() }),
      hosted_page_url: t.Null(),
      draft_note: t.String(),
    }),
  }),
});

export const PublishResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({ status: t.String(), hosted_page_url: nullableString, notes: t.String() }),
});
