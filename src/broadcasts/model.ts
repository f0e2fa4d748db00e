// TypeBox models of the broadcast endpoints (issue 45).
import { t } from "elysia";
import { EMAIL_PATTERN, Int, Matching, Text } from "../http/schema";
import { EMAIL_MAX } from "../subscribers/email";
import { TAG_NAME_MAX } from "../tags/service";
import { MERGE_TAGS } from "../email/templates";

export const SUBJECT_MAX = 200;
export const BODY_MAX = 50_000;
const TIME_MAX = 8_640_000_000_000_000;
const MERGE = `Merge tags: ${MERGE_TAGS.map((m) => `{{${m}}}`).join(", ")}; any other {{...}} is a 400 naming it`;

const TagList = (description: string) => t.Array(Text({ maxLength: TAG_NAME_MAX }), { minItems: 1, maxItems: 20, description });

/** The segment with `int` for its integers: Int (JSON numbers only) in a request, Elysia's own in a response model. */
const segmentOf = (int: typeof Int) => t.Object(
  {
    status: t.Optional(
      t.Array(t.Union([t.Literal("waiting"), t.Literal("invited"), t.Literal("joined")]), {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description: "Any of these (default all three). Pending (unconfirmed) and rejected subscribers never receive a broadcast",
      }),
    ),
    tags_any: t.Optional(TagList("Subscribers with at least one of these tags (names or ids)")),
    tags_all: t.Optional(TagList("Subscribers with every one of these tags (names or ids)")),
    min_referrals: t.Optional(int({ minimum: 0, maximum: 1_000_000_000, description: "At least this many confirmed referrals" })),
    position_lte: t.Optional(int({ minimum: 1, maximum: 1_000_000_000, description: "Waiting in line at this position or better (only waiting subscribers have one)" })),
    signed_up_after: t.Optional(int({ minimum: 0, maximum: TIME_MAX, description: "Signed up after this time (ms since 1970)" })),
    signed_up_before: t.Optional(int({ minimum: 0, maximum: TIME_MAX, description: "Signed up before this time (ms since 1970)" })),
  },
  {
    additionalProperties: false,
    description:
      "Who receives it: every member is optional, and those given are ANDed. Unsubscribed, bounced and complained addresses are always left out, checked again when each email leaves",
  },
);
export const Segment = segmentOf(Int);
export type SegmentInput = typeof Segment.static;

const Subject = () => Text({ maxLength: SUBJECT_MAX, description: `The subject line. ${MERGE}` });
const Body = () => Text({ maxLength: BODY_MAX, description: `The message in Markdown (raw HTML is shown as text). ${MERGE}. Without {{unsubscribe_link}}, an unsubscribe line is added at the end` });

export const CreateBody = t.Object({ subject: Subject(), body_markdown: Body(), segment: t.Optional(Segment) }, { additionalProperties: false });

export const UpdateBody = t.Object(
  { subject: t.Optional(Subject()), body_markdown: t.Optional(Body()), segment: t.Optional(segmentOf(Int)) },
  { additionalProperties: false, description: "A draft's fields to change (those omitted keep their values); segment replaces the whole segment" },
);

export const SendBody = t.Object(
  { send_at: t.Optional(Int({ minimum: 0, maximum: TIME_MAX, description: "When to send (ms since 1970); omitted or past: now. At most a year ahead" })) },
  { additionalProperties: false },
);

export const TestBody = t.Object(
  { email: Matching(EMAIL_PATTERN, { maxLength: EMAIL_MAX, error: "must be a valid email address", description: "Where the test copy goes" }) },
  { additionalProperties: false },
);

const nullableTime = (description: string) => t.Union([t.Number(), t.Null()], { description });

export const Broadcast = t.Object({
  id: t.String(),
  subject: t.String(),
  body_markdown: t.String(),
  segment: segmentOf((o) => t.Integer(o) as unknown as ReturnType<typeof Int>),
  status: t.Union([t.Literal("draft"), t.Literal("scheduled"), t.Literal("sending"), t.Literal("sent"), t.Literal("cancelled")], {
    description: "draft, scheduled (send_at ahead), sending (emails leaving at MAIL_RATE_PER_MINUTE), sent (every email settled) or cancelled",
  }),
  send_at: nullableTime("When it was or will be sent"),
  recipients: t.Number({ description: "Draft or scheduled: who would receive it now. Sending or sent: the subscribers it was queued for" }),
  sent: t.Number({ description: "Emails the SMTP server accepted" }),
  failed: t.Number({ description: "Emails given up after every retry" }),
  bounced: t.Number({ description: "Emails the SMTP server refused for the address (5xx): the subscriber is marked bounced" }),
  skipped: t.Number({ description: "Not sent: the subscriber unsubscribed, bounced, complained or was deleted before their email left, or the broadcast was cancelled" }),
  unsubscribed: t.Number({ description: "Recipients who have unsubscribed since it started sending" }),
  created_at: t.Number(),
  updated_at: t.Number(),
  started_at: nullableTime("When sending started"),
  finished_at: nullableTime("When the last email settled"),
  cancelled_at: nullableTime("When it was cancelled"),
});

export const BroadcastResponse = t.Object({ success: t.Boolean(), data: t.Object({ broadcast: Broadcast }) });
export const BroadcastListResponse = t.Object({ success: t.Boolean(), data: t.Object({ broadcasts: t.Array(Broadcast) }) });
export const PreviewResponse = t.Object({
  success: t.Boolean(),
  data: t.Object({
    recipients: t.Number({ description: "Who would receive it if it were sent now" }),
    sample: t.Object(
      { subject: t.String(), text: t.String(), html: t.String() },
      { description: "As the first of them would receive it (example values when the segment is empty)" },
    ),
  }),
});
