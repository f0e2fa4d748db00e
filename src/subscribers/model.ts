// TypeBox models of the subscriber endpoints (spec: Subscriber, Subscribers endpoints; DESIGN §5 caps).
import { SAME_NAME } from "../db/fold";
import { t } from "elysia";
import { EMAIL_PATTERN, Int, Matching, QueryInt } from "../http/schema";
import { EMAIL_MAX } from "./email";
import { ANSWER_MAX, FORM_FIELDS_MAX, OPTION_MAX, OPTIONS_MAX } from "../waitlists/form-fields";

export const NAME_MAX = 200;
export const PHONE_MAX = 200;
export const METADATA_MAX_BYTES = 16 * 1024;
export const METADATA_MAX_KEYS = 50;
export const POINTS_LIMIT = 1_000_000_000;

export const SignUpBody = t.Object(
  {
    email: Matching(EMAIL_PATTERN, { maxLength: EMAIL_MAX, error: "must be a valid email address", description: "Trimmed and lowercased; one subscriber per email per waitlist" }),
    name: t.Optional(t.Union([t.String({ maxLength: NAME_MAX }), t.Null()])),
    phone: t.Optional(t.Union([t.String({ maxLength: PHONE_MAX }), t.Null()])),
    metadata: t.Optional(
      t.Record(t.String(), t.Any(), {
        maxProperties: METADATA_MAX_KEYS,
        description:
          "Custom fields (max 50 keys, 16 KB). Reserved: referred_by (referrer's code), referring_domain, client_ip (end user's IPv4 or IPv6 address), fingerprint. Extension (issue 46): utm_source, utm_medium, utm_campaign, utm_term, utm_content (strings of at most 200 characters) and referrer_host (the host, or URL, of the page the visitor came from) are also read into the subscriber's utm and referrer_host (a value that is not such a string stays a custom field only)",
      }),
    ),
    answers: t.Optional(
      t.Record(t.String(), t.Union([t.String({ maxLength: ANSWER_MAX }), t.Number(), t.Boolean(), t.Array(t.String({ maxLength: OPTION_MAX }), { maxItems: OPTIONS_MAX })]), {
        maxProperties: FORM_FIELDS_MAX,
        description:
          "Extension (issue 46): answers to the waitlist's questions (settings form_fields), by key: text, textarea, url and select as text, multiselect as a list of options, checkbox as true or false, number as a number. A required question unanswered, an answer to no question, or one that does not fit its question is a 400 naming answers.KEY",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SignUpInput = typeof SignUpBody.static;

export const SignUpResponse = t.Object({
  success: t.Boolean(),
  is_new_sign_up: t.Boolean(),
  is_pending_confirmation: t.Boolean(),
  message: t.String(),
  position: t.Optional(t.Number()),
  inflated_position: t.Optional(t.Number()),
  points: t.Optional(t.Number()),
  referral_code: t.Optional(t.String()),
  sign_up_token: t.Optional(t.String()),
  redirect_url: t.String(),
});

const Tag = t.Object({ id: t.String(), name: t.String(), color: t.String() });
const nullableString = t.Union([t.String(), t.Null()]);

const Status = (description: string) =>
  t.Union([t.Literal("pending"), t.Literal("waiting"), t.Literal("invited"), t.Literal("joined"), t.Literal("rejected")], { description });

export const EmailStatus = t.Union([t.Literal("ok"), t.Literal("bounced"), t.Literal("complained")], {
  description:
    "Extension (issue 45): ok, bounced (a permanent delivery failure, from the SMTP server or a provider's report) or complained (marked as spam). No email goes to a bounced or complained address; the subscriber keeps their place in line",
});

export const Subscriber = t.Object({
  id: t.String(),
  email: t.String(),
  status: Status("Extension: pending (unconfirmed), waiting (in line, ranked), invited, joined or rejected"),
  deliverability: t.String({ description: "unconfirmed, confirmed, risky or unknown" }),
  name: nullableString,
  phone: nullableString,
  position: t.Optional(t.Number({ description: "Present while waiting in line; absent while pending and once invited, joined or rejected" })),
  inflated_position: t.Optional(t.Number()),
  final_position: t.Optional(t.Union([t.Number(), t.Null()], { description: "Extension: the position held when the subscriber left the line" })),
  points: t.Optional(t.Number()),
  referral_code: t.Optional(t.String()),
  referred_by: nullableString,
  referral_count: t.Number(),
  sign_up_token: t.Optional(t.String()),
  thank_you_url: t.Optional(t.String()),
  metadata: t.Record(t.String(), t.Any()),
  tags: t.Array(Tag),
  referring_domain: nullableString,
  ip_address: nullableString,
  country: nullableString,
  city: nullableString,
  timezone: nullableString,
  joined_with: t.String(),
  joined_at: t.Number(),
  unsubscribed_at: t.Union([t.Number(), t.Null()], {
    description: "Extension: when the subscriber followed the unsubscribe link (ms); no email goes to them afterwards. They keep their place in line",
  }),
  email_status: EmailStatus,
  answers: t.Record(t.String(), t.Any(), { description: "Extension (issue 46): the answers to the waitlist's questions, by key" }),
  utm: t.Object(
    { source: nullableString, medium: nullableString, campaign: nullableString, term: nullableString, content: nullableString },
    { description: "Extension (issue 46): the UTM parameters of the link the subscriber came through (null when absent)" },
  ),
  referrer_host: t.Union([t.String(), t.Null()], { description: "Extension (issue 46): the host of the page the visitor came from before the sign-up page" }),
});

export const SubscriberResponse = t.Object({ success: t.Boolean(), data: t.Object({ subscriber: Subscriber }) });

export const ListQuery = t.Object({
  page: t.Optional(QueryInt({ minimum: 1, maximum: 999_999_999, description: "Default 1" })),
  limit: t.Optional(QueryInt({ minimum: 1, maximum: 100, description: "Default 20" })),
  sort_by: t.Optional(t.Union([t.Literal("position"), t.Literal("points"), t.Literal("date"), t.Literal("referral_count"), t.Literal("email")])),
  sort_dir: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")])),
  tag: t.Optional(t.String({ description: `Tag name or id; one the waitlist does not have is 400, naming its tags. Names are ${SAME_NAME}` })),
  status: t.Optional(Status("Extension: only subscribers with this status")),
  unsubscribed: t.Optional(t.Union([t.Literal("true"), t.Literal("false")], { description: "Extension: true lists only unsubscribed subscribers, false only those still receiving email" })),
  email_status: t.Optional(t.Union([t.Literal("ok"), t.Literal("bounced"), t.Literal("complained")], { description: "Extension: only subscribers whose email status is this" })),
  q: t.Optional(t.String({ maxLength: 254, description: `Search: part of the email (case-insensitive) or of the name, ${SAME_NAME}` })),
}, {
  // issue 46: `answers.KEY=VALUE` filters by an answer (checked by the handler: KEY must be a question of the waitlist)
  additionalProperties: t.String({ maxLength: 200 }),
});

export const ListResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({ subscribers: t.Array(Subscriber), total: t.Number(), page: t.Number(), limit: t.Number(), pages: t.Number() }),
});

export const UpdateBody = t.Object(
  {
    name: t.Optional(t.Union([t.String({ maxLength: NAME_MAX }), t.Null()])),
    phone: t.Optional(t.Union([t.String({ maxLength: PHONE_MAX }), t.Null()])),
    points: t.Optional(Int({ minimum: -POINTS_LIMIT, maximum: POINTS_LIMIT })),
    metadata: t.Optional(t.Record(t.String(), t.Any(), { maxProperties: METADATA_MAX_KEYS, description: "Merged into the existing metadata; a null value removes the key" })),
  },
  { additionalProperties: false, minProperties: 1, description: "At least one field; those omitted are unchanged" },
);
export type UpdateInput = typeof UpdateBody.static;

export const UpdateResponse = t.Object({
  success: t.Boolean(),
  message: t.String(),
  data: t.Object({
    subscriber: t.Object({
      id: t.String(),
      email: t.String(),
      name: nullableString,
      phone: nullableString,
      points: t.Optional(t.Number({ description: "Absent while pending confirmation" })),
      sign_up_token: t.Optional(t.String()),
      thank_you_url: t.Optional(t.String()),
      updated_at: t.Number(),
      metadata: t.Record(t.String(), t.Any()),
    }),
  }),
});

export const MessageResponse = t.Object({ success: t.Boolean(), message: t.String() });
