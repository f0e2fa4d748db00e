// TypeBox models of the landing-page endpoints (spec: Landing page, Landing pages endpoints; caps in Limits).
import { t } from "elysia";
import { HEADLINE_PATTERN, MARKUP_FREE_PATTERN, Matching } from "../http/schema";
import { COLOR_PATTERN, GRADIENT_PATTERN } from "./background";

export const HEADLINE = { min: 3, max: 120 };
export const DESCRIPTION_MAX = 1000;
export const BUTTON_MAX = 40;
export const SEO = { title: 70, description: 200, keywords: 10, keyword: 40, ogTitle: 70, ogDescription: 200 };
export const DEFAULT_BUTTON = "Join the waitlist";

export const PAGE_FIELDS = ["headline", "description", "button_text", "collect_name", "collect_phone", "background", "theme", "seo"] as const;

/** Plain text: markup (a `<` before a letter, !, / or ?) is refused. */
const Plain = (maxLength: number) => Matching(MARKUP_FREE_PATTERN, { maxLength, error: `must be plain text (HTML is not allowed) of at most ${maxLength} characters` });

const Seo = t.Object(
  {
    title: t.Optional(Plain(SEO.title)),
    description: t.Optional(Plain(SEO.description)),
    keywords: t.Optional(t.Array(Plain(SEO.keyword), { maxItems: SEO.keywords })),
    og_title: t.Optional(Plain(SEO.ogTitle)),
    og_description: t.Optional(Plain(SEO.ogDescription)),
  },
  { additionalProperties: false },
);

const Background = t.Union(
  [
    t.Object(
      {
        type: t.Literal("color"),
        value: Matching(COLOR_PATTERN, { maxLength: 400, error: "must be a hex color like #4f46e5 (or rgb()/rgba()) when background.type is color" }),
      },
      { additionalProperties: false },
    ),
    t.Object(
      {
        type: t.Literal("gradient"),
        value: Matching(GRADIENT_PATTERN, {
          maxLength: 400,
          error: "must be a CSS linear-gradient() or radial-gradient() of 2 to 10 hex or rgb() colors when background.type is gradient",
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: "A hex color (type color), or a linear-/radial-gradient() of hex or rgb() colors (type gradient)", "x-one-of": true },
);

const Headline = Matching(HEADLINE_PATTERN, { maxLength: HEADLINE.max, error: `must be plain text (HTML is not allowed) of ${HEADLINE.min} to ${HEADLINE.max} characters` });

const fields = {
  description: t.Optional(Plain(DESCRIPTION_MAX)),
  button_text: t.Optional(Plain(BUTTON_MAX)),
  collect_name: t.Optional(t.Boolean()),
  collect_phone: t.Optional(t.Boolean()),
  background: t.Optional(Background),
  theme: t.Optional(t.Union([t.Literal("light"), t.Literal("dark")])),
  seo: t.Optional(Seo),
};

export const CreatePageBody = t.Object(
  { headline: Headline, ...fields },
  { additionalProperties: false, description: "Plain text only: HTML in any field is refused" },
);
export type CreatePageInput = typeof CreatePageBody.static;

export const PatchPageBody = t.Object(
  { headline: t.Optional(Headline), ...fields },
  { additionalProperties: false, minProperties: 1, description: "At least one field; plain text only" },
);
export type PatchPageInput = typeof PatchPageBody.static;

/** The preview's fields: PATCH's, and an empty object previews the page as it is. */
export const PreviewPageBody = t.Object({ headline: t.Optional(Headline), ...fields }, { additionalProperties: false });

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
