// TypeBox models of the waitlist and settings endpoints (spec: Waitlists; DESIGN §4 settings extension).
import { SAME_NAME } from "../db/fold";
import { t, type TSchema } from "elysia";
import { CreatePageBody } from "../landing/model";
import { ANSWER_MAX, FORM_FIELDS_MAX, KEY_PATTERN, LABEL_MAX, OPTION_MAX, OPTIONS_MAX, type FieldType } from "./form-fields";
import { HOST_OR_BLANK_PATTERN, HOST_OR_WILDCARD_PATTERN, HTTP_URL_PATTERN, Int, Matching, OrNull, PLAIN_TEXT_PATTERN, SLUG_PATTERN, Text } from "../http/schema";

export const NAME_MAX = 100;
export const CATEGORY_MAX = 100;
export const DESCRIPTION_MAX = 1000;
export const SUBJECT_MAX = 200;
export const EMAIL_BODY_MAX = 20_000;
export const URL_MAX = 2048;
export const DOMAINS_MAX = 50;
export const POINTS_MAX = 1_000_000;
export const OFFSET_MAX = 1_000_000_000;

const points = Int({ minimum: 0, maximum: POINTS_MAX });

export const ReferralRewards = t.Object(
  { enabled: t.Optional(t.Boolean()), signup_points: t.Optional(points), referral_points: t.Optional(points) },
  { additionalProperties: false },
);

export const CreateWaitlistBody = t.Object(
  {
    name: Text({ maxLength: NAME_MAX, description: `Required; trimmed; globally unique, ${SAME_NAME}` }),
    slug: t.Optional(
      Matching(SLUG_PATTERN, {
        maxLength: NAME_MAX,
        error: "must be lowercase letters and digits separated by single dashes (e.g. my-launch)",
        description: "Lowercase letters, digits and single dashes; derived from the name when omitted",
      }),
    ),
    category: t.Optional(t.String({ maxLength: CATEGORY_MAX })),
    description: t.Optional(t.String({ maxLength: DESCRIPTION_MAX })),
    referral_rewards: t.Optional(ReferralRewards),
    validate_emails: t.Optional(t.Boolean()),
    landing_page: t.Optional(CreatePageBody),
  },
  {
    additionalProperties: false,
    // without a slug, the name must give one: a letter or digit (the handler says so too)
    if: { not: { properties: { slug: { type: "string" } }, required: ["slug"] } },
    then: { properties: { name: { pattern: "[A-Za-z0-9]" } } },
    description: "Without a slug, the name must contain a letter or digit (A-Z, a-z, 0-9) to derive one",
  },
);
export type CreateWaitlistInput = typeof CreateWaitlistBody.static;

const WaitlistCreated = t.Object({
  id: t.String(),
  key: t.String(),
  slug: t.String(),
  name: t.String(),
  form_action_url: t.String(),
  hosted_page_url: t.Null(),
  created_at: t.Number(),
});

export const CreateWaitlistResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({ waitlist: WaitlistCreated, notes: t.String() }),
});

export const ListWaitlistsResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({
    waitlists: t.Array(
      t.Object({ id: t.String(), key: t.String(), name: t.String(), slug: t.String(), subscribers: t.Number(), views: t.Number(), created_at: t.Number() }),
    ),
    total: t.Number(),
  }),
});

const EmailTemplatePatch = {
  subject: t.Optional(Text({ maxLength: SUBJECT_MAX })),
  body: t.Optional(Text({ maxLength: EMAIL_BODY_MAX })),
};

const Url = (description?: string) => Matching(HTTP_URL_PATTERN, { maxLength: URL_MAX, error: "must be an absolute http(s) URL with a host name", ...(description ? { description } : {}) });

/** Issue 45: the look of every email the waitlist sends. */
export const EMAIL_FOOTER_MAX = 500;
const EmailTemplate = {
  sender_name: t.Union([t.String(), t.Null()], { description: "The name shown at the top of each email (and, with no logo, in its place); null: the waitlist's name" }),
  logo_url: t.Union([t.String(), t.Null()], { description: "An absolute http(s) URL of the logo image shown at the top (40 px high)" }),
  color: t.String({ description: "Colour of links and the top rule, #rrggbb" }),
  footer: t.Union([t.String(), t.Null()], { description: "Text at the bottom of every email: the sender's postal address, which anti-spam laws (CAN-SPAM) ask of bulk email" }),
};
const EmailTemplatePatchBody = t.Object(
  {
    sender_name: t.Optional(OrNull(Text({ maxLength: NAME_MAX }))),
    logo_url: t.Optional(OrNull(Url())),
    color: t.Optional(Matching("^#[0-9a-fA-F]{6}$", { maxLength: 7, error: "must be a colour as #rrggbb" })),
    footer: t.Optional(OrNull(Text({ maxLength: EMAIL_FOOTER_MAX }))),
  },
  { additionalProperties: false, description: "The look of every email: name or logo at the top, link colour, footer" },
);

/**
 * Issue 46: one question of the sign-up form, by its type: a select or multiselect has options (and only they do); a
 * text, textarea or url may have max_length (and only they may). Keys are distinct and none is a field the form
 * already has (email, name, phone, ref, utm_source...): those two are the handler's (400 naming the key).
 */
const questionOf = (type: FieldType, extra: Record<string, TSchema>) =>
  t.Object(
    {
      key: Matching(KEY_PATTERN, { maxLength: 40, error: "must be lowercase letters, digits and _, starting with a letter (at most 40)", description: "The answer's name: the form field's name and answers.KEY" }),
      label: Text({ maxLength: LABEL_MAX, description: "What the form shows (as text, escaped)" }),
      type: t.Literal(type),
      required: t.Optional(t.Boolean({ description: "Default false; a required checkbox must be checked" })),
      ...extra,
    },
    { additionalProperties: false, title: `A ${type} question` },
  );
const Options = () => t.Array(Text({ maxLength: OPTION_MAX }), { minItems: 1, maxItems: OPTIONS_MAX, uniqueItems: true, description: "The choices" });
const MaxLength = (byDefault: number) => t.Optional(Int({ minimum: 1, maximum: ANSWER_MAX, description: `The longest answer (default ${byDefault})` }));
const FormFieldBody = t.Union([
  questionOf("text", { max_length: MaxLength(200) }),
  questionOf("textarea", { max_length: MaxLength(2000) }),
  questionOf("url", { max_length: MaxLength(2000) }),
  questionOf("select", { options: Options() }),
  questionOf("multiselect", { options: Options() }),
  questionOf("checkbox", {}),
  questionOf("number", {}),
]);

/** Issue 11: rewards for referrers at referral thresholds (at most 10, distinct thresholds). */
export const MILESTONES_MAX = 10;
export const REWARD_MAX = 200;
const Milestone = t.Object(
  {
    referrals: Int({ minimum: 1, maximum: 1_000_000, description: "Credited referrals that reach it; distinct in the list" }),
    reward: Matching(PLAIN_TEXT_PATTERN, {
      minLength: 1,
      maxLength: REWARD_MAX,
      error: `must be plain text (no < or >), not blank, at most ${REWARD_MAX} characters`,
      description: "What the referrer gets, shown in the email ({{reward}}) and on the status page",
    }),
    tag: t.Optional(
      Matching(PLAIN_TEXT_PATTERN, { minLength: 1, maxLength: 40, error: "must be plain text (no < or >), not blank, at most 40 characters", description: "A tag given to the referrer when reached (created if missing)" }),
    ),
  },
  { additionalProperties: false },
);

/** Issue 16: "altcha" makes the public form require a solved proof-of-work challenge (GET /s/{waitlistKey}/challenge). */
const Captcha = t.Union([t.Literal("off"), t.Literal("altcha")], {
  description: 'Captcha of the public form: "off" (default) or "altcha" (a self-hosted ALTCHA proof-of-work; the form then needs the altcha field)',
});

export const SettingsPatchBody = t.Object(
  {
    name: t.Optional(Text({ maxLength: NAME_MAX })),
    category: t.Optional(t.Union([t.String({ maxLength: CATEGORY_MAX }), t.Null()])),
    description: t.Optional(t.Union([t.String({ maxLength: DESCRIPTION_MAX }), t.Null()])),
    double_opt_in: t.Optional(t.Boolean()),
    position_offset: t.Optional(Int({ minimum: 0, maximum: OFFSET_MAX })),
    allowed_domains: t.Optional(
      t.Array(Matching(HOST_OR_WILDCARD_PATTERN, { maxLength: 253, error: "must be a host name, *. and one (every subdomain), or an http(s) URL of the site" }), {
        maxItems: DOMAINS_MAX,
        description: "Sites whose forms may post to form_action_url: host names, *.example.com for every subdomain, or a URL (its host is kept)",
      }),
    ),
    referral_rewards: t.Optional(ReferralRewards),
    validate_emails: t.Optional(t.Boolean()),
    welcome_email: t.Optional(t.Object({ enabled: t.Optional(t.Boolean()), ...EmailTemplatePatch }, { additionalProperties: false })),
    confirmation_email: t.Optional(t.Object(EmailTemplatePatch, { additionalProperties: false })),
    webhook: t.Optional(
      t.Object(
        {
          url: t.Optional(OrNull(Url(), "Where events are POSTed; with WEBHOOK_BLOCK_PRIVATE=true a loopback or private address is refused (400)")),
          enabled: t.Optional(t.Boolean({ description: "true needs a url" })),
        },
        { additionalProperties: false },
      ),
    ),
    custom_domain: t.Optional(
      OrNull(Matching(HOST_OR_BLANK_PATTERN, { maxLength: 253, error: "must be a host name or an http(s) URL of it" }), "The host the landing page is served on (a URL: its host); blank or null removes it"),
    ),
    signup_url: t.Optional(
      OrNull(Url(), "Where the team's own sign-up form lives (absolute http(s) URL); referral links become signup_url?ref=CODE. null: the custom domain, else the hosted page"),
    ),
    milestones: t.Optional(t.Array(Milestone, { maxItems: MILESTONES_MAX, description: "Replaces the list; [] removes every milestone (rewards already reached stay)" })),
    milestone_email: t.Optional(t.Object(EmailTemplatePatch, { additionalProperties: false })),
    invitation_email: t.Optional(t.Object(EmailTemplatePatch, { additionalProperties: false, description: "{{invite_link}} is the subscriber's single-use link" })),
    invite_expiry_days: t.Optional(Int({ minimum: 1, maximum: 365, description: "How long an invite link works (default 14)" })),
    invite_redirect_url: t.Optional(OrNull(Url(), "Where an accepted invite goes, with ?token=; null shows a welcome page")),
    leaderboard: t.Optional(t.Boolean({ description: "Show the top 10 referrers (names or masked emails) on every subscriber's status page" })),
    captcha: t.Optional(Captcha),
    email_template: t.Optional(EmailTemplatePatchBody),
    og_image_url: t.Optional(OrNull(Url(), "The image shown when the hosted page or a status page is shared (Open Graph, Twitter card; 1200x630 works best); null: none")),
    retention_days: t.Optional(
      OrNull(Int({ minimum: 1, maximum: 3650 }), "Extension (issue 47): rejected and joined subscribers are removed this many days after their last change (a daily job); null (default) keeps them"),
    ),
    form_fields: t.Optional(
      t.Array(FormFieldBody, {
        maxItems: FORM_FIELDS_MAX,
        description: "The sign-up form's own questions (issue 46), in order; replaces the list ([] removes them; answers already given stay)",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, description: "At least one setting" },
);
export type SettingsPatch = typeof SettingsPatchBody.static;

export const Settings = t.Object({
  key: t.String(),
  slug: t.String(),
  name: t.String(),
  category: t.Union([t.String(), t.Null()]),
  description: t.Union([t.String(), t.Null()]),
  double_opt_in: t.Boolean(),
  position_offset: t.Number(),
  allowed_domains: t.Array(t.String()),
  referral_rewards: t.Object({ enabled: t.Boolean(), signup_points: t.Number(), referral_points: t.Number() }),
  validate_emails: t.Boolean(),
  welcome_email: t.Object({ enabled: t.Boolean(), subject: t.String(), body: t.String() }),
  confirmation_email: t.Object({ subject: t.String(), body: t.String() }),
  webhook: t.Object({ url: t.Union([t.String(), t.Null()]), enabled: t.Boolean(), signing_secret: t.String() }),
  custom_domain: t.Union([t.String(), t.Null()]),
  signup_url: t.Union([t.String(), t.Null()]),
  milestones: t.Array(t.Object({ referrals: t.Number(), reward: t.String(), tag: t.Union([t.String(), t.Null()]) })),
  milestone_email: t.Object({ subject: t.String(), body: t.String() }),
  leaderboard: t.Boolean(),
  invitation_email: t.Object({ subject: t.String(), body: t.String() }),
  invite_expiry_days: t.Number(),
  invite_redirect_url: t.Union([t.String(), t.Null()]),
  captcha: Captcha,
  email_template: t.Object(EmailTemplate),
  og_image_url: t.Union([t.String(), t.Null()]),
  retention_days: t.Union([t.Number(), t.Null()]),
  form_fields: t.Array(
    t.Object({
      key: t.String(),
      label: t.String(),
      type: t.Union([t.Literal("text"), t.Literal("textarea"), t.Literal("select"), t.Literal("multiselect"), t.Literal("checkbox"), t.Literal("number"), t.Literal("url")]),
      required: t.Boolean(),
      options: t.Array(t.String()),
      max_length: t.Union([t.Number(), t.Null()]),
    }),
  ),
  landing_page_status: t.Union([t.Literal("draft"), t.Literal("published"), t.Literal("unpublished"), t.Null()], {
    description: "Read-only: the landing page's status, or null while the waitlist has none (GET .../landing-page answers 404 then).",
  }),
});

export const SettingsResponse = t.Object({ success: t.Boolean(), data: t.Object({ settings: Settings }) });
