// The PostgreSQL twin of schema.ts (issue 18): the same tables, columns and indexes in pg-core types, kept in step by
// test/schema-parity.unit.test.ts; drizzle-kit generates drizzle-pg/ from it. ms timestamps are bigint, flags boolean.
// Collations are set in custom migrations, which drizzle-kit does not see: subscribers.id and outbox.id are
// `COLLATE "C"` (0001_triggers.sql), and so is every column that holds a subscriber's id (0009_subscriber_id_collation.sql:
// a join between columns of two collations cannot use an index). A new such column needs the same.
import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { ROLES, PLANS, SUBSCRIBER_STATUSES, ACCESS_STATUSES, DELIVERABILITY, TAG_COLORS, OUTBOX_KINDS, OUTBOX_STATUSES, WEBHOOK_FORMATS, WEBHOOK_DELIVERY_STATUSES, EMAIL_STATUSES, BROADCAST_STATUSES, RECIPIENT_STATUSES, IMPORT_STATUSES, PAGE_TYPES, PAGE_STATUSES } from "./schema";


export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  plan: text("plan", { enum: PLANS }).notNull(),
  aiCredits: integer("ai_credits").notNull().default(0),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
});

/** Account keys (waitlist_id null) and per-waitlist keys; only the SHA-256 of a key is stored. */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    waitlistId: text("waitlist_id").references(() => waitlists.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    hash: text("hash").notNull().unique(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    scopes: text("scopes").notNull().default("read,write"),
    waitlistIds: text("waitlist_ids"),
    createdBy: text("created_by"),
    prefix: text("prefix"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId), index("api_keys_waitlist_idx").on(t.waitlistId)],
);

export const waitlists = pgTable(
  "waitlists",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull().unique(),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    /** `name` folded by foldName (db/fold-names.ts): what "the same name" and search compare (issue 44). */
    nameKey: text("name_key"),
    category: text("category"),
    description: text("description"),
    referralEnabled: boolean("referral_enabled").notNull().default(false),
    signupPoints: integer("signup_points").notNull().default(50),
    referralPoints: integer("referral_points").notNull().default(30),
    validateEmails: boolean("validate_emails").notNull().default(true),
    doubleOptIn: boolean("double_opt_in").notNull().default(false),
    positionOffset: integer("position_offset").notNull().default(0),
    /** JSON array of host names allowed to post the public form. */
    allowedDomains: text("allowed_domains").notNull().default("[]"),
    welcomeEnabled: boolean("welcome_enabled").notNull().default(false),
    welcomeSubject: text("welcome_subject").notNull(),
    welcomeBody: text("welcome_body").notNull(),
    confirmationSubject: text("confirmation_subject").notNull(),
    confirmationBody: text("confirmation_body").notNull(),
    webhookEndpoints: integer("webhook_endpoints").notNull().default(0),
    signingSecret: text("signing_secret").notNull(),
    /** Issue 46: the image shown when a hosted page or a status page is shared (Open Graph, Twitter card). */
    ogImageUrl: text("og_image_url"),
    /** Issue 47: rejected and joined subscribers are removed this many days after their last change (null: kept). */
    retentionDays: integer("retention_days"),
    /** Issue 46: JSON array of the sign-up form's own questions (settings `form_fields`, waitlists/form-fields.ts). */
    formFields: text("form_fields").notNull().default("[]"),
    /** Issue 45: the look of every email (settings `email_template`). */
    emailSenderName: text("email_sender_name"),
    emailLogoUrl: text("email_logo_url"),
    emailColor: text("email_color").notNull().default("#111827"),
    emailFooter: text("email_footer"),
    customDomain: text("custom_domain").unique(),
    /** The status page shows the top 10 referrers (masked) when on (issue 11). */
    leaderboard: boolean("leaderboard").notNull().default(false),
    /** JSON [{referrals, reward, tag}] in ascending order of referrals (issue 11: milestone rewards). */
    milestones: text("milestones").notNull().default("[]"),
    invitationSubject: text("invitation_subject").notNull().default("Your invitation to {{waitlist_name}}"),
    invitationBody: text("invitation_body")
      .notNull()
      .default("Hi {{name}},\n\nYour wait is over: you are invited to {{waitlist_name}}.\n\nAccept your invitation: {{invite_link}}"),
    inviteExpiryDays: integer("invite_expiry_days").notNull().default(14),
    inviteRedirectUrl: text("invite_redirect_url"),
    /** Issue 16: "off" or "altcha" (proof of work required on the public form). */
    captcha: text("captcha", { enum: ["off", "altcha"] }).notNull().default("off"),
    /** Issue 16: where the team's own sign-up form lives; referral links become `signup_url?ref=`. */
    signupUrl: text("signup_url"),
    milestoneSubject: text("milestone_subject").notNull().default("You unlocked a reward on the {{waitlist_name}} waitlist"),
    milestoneBody: text("milestone_body")
      .notNull()
      .default("Hi {{name}},\n\nYou have referred {{referral_count}} friends to {{waitlist_name}}. Your reward: {{reward}}\n\nKeep sharing your link: {{referral_link}}"),
    /** Counters kept in the same transaction as the change they count. */
    subscribersCount: integer("subscribers_count").notNull().default(0),
    /** Confirmation sequence: the next confirmed subscriber takes last_seq + 1 (rank tie-break). */
    lastSeq: integer("last_seq").notNull().default(0),
    viewsCount: integer("views_count").notNull().default(0),
    /**
     * Bumped by a trigger (drizzle/0007) on every change but the counters' own: each request reads it
     * with its key, and each instance's copy of the waitlist row is good while it matches.
     */
    version: integer("version").notNull().default(1),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    // one waitlist per name as foldName (db/fold-names.ts) spells it: the same rule on both engines (issue 44)
    uniqueIndex("waitlists_name_key_idx").on(t.nameKey),
    index("waitlists_account_created_idx").on(t.accountId, t.createdAt),
  ],
);

/** Fixed one-minute windows per subject (key or IP) and bucket (DESIGN §5). */
export const rateLimits = pgTable(
  "rate_limits",
  {
    subject: text("subject").notNull(),
    windowStart: bigint("window_start", { mode: "number" }).notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subject, t.windowStart] }), index("rate_limits_window_idx").on(t.windowStart)],
);

/** One row per cron job: the instance holding an unexpired lease runs it (DESIGN §6). */
export const jobLeases = pgTable("job_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
});

/** Issue 11: where a confirmed subscriber stands with the product. Only `waiting` subscribers are ranked. */

export const subscribers = pgTable(
  "subscribers",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    name: text("name"),
    /** `name` folded by foldName (db/fold-names.ts): what "the same name" and search compare (issue 44). */
    nameKey: text("name_key"),
    phone: text("phone"),
    status: text("status", { enum: SUBSCRIBER_STATUSES }).notNull(),
    deliverability: text("deliverability", { enum: DELIVERABILITY }).notNull(),
    points: integer("points").notNull().default(0),
    /** Order of confirmation within the waitlist; null while pending. */
    seq: integer("seq"),
    referralCode: text("referral_code").notNull().unique(),
    signUpToken: text("sign_up_token").notNull().unique(),
    confirmToken: text("confirm_token"),
    referredBy: text("referred_by"),
    referrerId: text("referrer_id"),
    referralCount: integer("referral_count").notNull().default(0),
    metadata: text("metadata").notNull().default("{}"),
    referringDomain: text("referring_domain"),
    ipAddress: text("ip_address"),
    fingerprint: text("fingerprint"),
    /** Fraud rules apply to this sign-up's referral (form, or API with client_ip/fingerprint); kept for confirmation. */
    fraudChecks: boolean("fraud_checks").notNull().default(false),
    country: text("country"),
    city: text("city"),
    timezone: text("timezone"),
    joinedWith: text("joined_with").notNull(),
    joinedAt: bigint("joined_at", { mode: "number" }).notNull(),
    confirmedAt: bigint("confirmed_at", { mode: "number" }),
    access: text("access", { enum: ACCESS_STATUSES }).notNull().default("waiting"),
    /** The confirmation number while waiting in line: what ranks. Null while pending and once invited, joined or rejected. */
    rankedSeq: integer("ranked_seq").generatedAlwaysAs(sql`CASE WHEN access = 'waiting' THEN seq END`),
    /** The position held when the subscriber left the line (invited or rejected). */
    finalPosition: integer("final_position"),
    inviteToken: text("invite_token"),
    invitedAt: bigint("invited_at", { mode: "number" }),
    inviteExpiresAt: bigint("invite_expires_at", { mode: "number" }),
    acceptedAt: bigint("accepted_at", { mode: "number" }),
    /** Issue 16: set by the unsubscribe link; no email of any kind goes to this subscriber afterwards. */
    /** Issue 46: JSON object of the answers to the waitlist's questions, by question key. */
    answers: text("answers").notNull().default("{}"),
    /** Issue 46: where the sign-up came from: the link's UTM parameters and the host of the page before ours. */
    utmSource: text("utm_source"),
    utmMedium: text("utm_medium"),
    utmCampaign: text("utm_campaign"),
    utmTerm: text("utm_term"),
    utmContent: text("utm_content"),
    referrerHost: text("referrer_host"),
    /** Issue 45: "bounced" (a permanent failure) or "complained" (marked as spam): no email of any kind goes out. */
    emailStatus: text("email_status", { enum: EMAIL_STATUSES }).notNull().default("ok"),
    unsubscribedAt: bigint("unsubscribed_at", { mode: "number" }),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("subscribers_waitlist_email_idx").on(t.waitlistId, t.email),
    // rank order of those waiting (points desc, ranked_seq asc); also counts the rows of one points value below a seq
    index("subscribers_ranked_idx").on(t.waitlistId, sql`${t.points} DESC`, t.rankedSeq),
    index("subscribers_joined_idx").on(t.waitlistId, t.joinedAt),
    index("subscribers_referrals_idx").on(t.waitlistId, t.referralCount),
    index("subscribers_ip_idx").on(t.waitlistId, t.ipAddress, t.joinedAt),
    // partial where the column is usually empty, so most sign-ups write fewer index entries
    index("subscribers_fingerprint_idx").on(t.waitlistId, t.fingerprint).where(sql`${t.fingerprint} IS NOT NULL`),
    index("subscribers_referrer_idx").on(t.referrerId).where(sql`${t.referrerId} IS NOT NULL`),
    uniqueIndex("subscribers_confirm_token_idx").on(t.confirmToken).where(sql`${t.confirmToken} IS NOT NULL`),
    // subscribers without a position (pending, invited, joined, rejected); queries name it (INDEXED BY):
    // the planner prefers the covering rank index otherwise
    index("subscribers_unranked_idx").on(t.waitlistId, t.joinedAt).where(sql`${t.rankedSeq} IS NULL`),
    uniqueIndex("subscribers_invite_token_idx").on(t.inviteToken).where(sql`${t.inviteToken} IS NOT NULL`),
    // names not folded yet (written before issue 44, or by an older instance): empty once start-up folded them
    index("subscribers_name_unfolded_idx").on(t.id).where(sql`${t.nameKey} IS NULL AND ${t.name} IS NOT NULL`),
  ],
);

/**
 * The order-statistic structure behind positions (DESIGN §7): confirmed subscribers counted per
 * points value (level 63, bucket 0), and per points value and block of confirmation sequence
 * (level 16: seq >> 16, level 8: seq >> 8). Updated in the same transaction as every change.
 */
export const rankCounts = pgTable(
  "rank_counts",
  {
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    level: integer("level").notNull(),
    points: integer("points").notNull(),
    bucket: integer("bucket").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.waitlistId, t.level, t.points, t.bucket] })],
);

/** One row per referred sign-up: credited, or withheld with the fraud reason (DESIGN §4). */
export const referrals = pgTable(
  "referrals",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    referrerId: text("referrer_id").notNull().references(() => subscribers.id, { onDelete: "cascade" }),
    refereeId: text("referee_id").notNull().unique().references(() => subscribers.id, { onDelete: "cascade" }),
    credited: boolean("credited").notNull(),
    reason: text("reason"),
    /** Points given to the referrer, taken back exactly when the referee is deleted. */
    points: integer("points").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("referrals_referrer_idx").on(t.referrerId, t.createdAt)],
);


export const tags = pgTable(
  "tags",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `name` folded by foldName (db/fold-names.ts): what "the same name" and search compare (issue 44). */
    nameKey: text("name_key"),
    color: text("color", { enum: TAG_COLORS }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("tags_waitlist_name_key_idx").on(t.waitlistId, t.nameKey)],
);

export const subscriberTags = pgTable(
  "subscriber_tags",
  {
    subscriberId: text("subscriber_id").notNull().references(() => subscribers.id, { onDelete: "cascade" }),
    tagId: text("tag_id").notNull().references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.subscriberId, t.tagId] }), index("subscriber_tags_tag_idx").on(t.tagId)],
);

/** A visitor's view is counted once per 24 h (DESIGN §4 Analytics); expired rows are pruned by cron. */
export const viewDedupe = pgTable(
  "view_dedupe",
  {
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    visitor: text("visitor").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.waitlistId, t.visitor] }), index("view_dedupe_expires_idx").on(t.expiresAt)],
);

/** Daily counters (UTC dates) for the dashboard chart: confirmed sign-ups and counted views. */
export const dailyStats = pgTable(
  "daily_stats",
  {
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    date: text("date").notNull(),
    signUps: integer("sign_ups").notNull().default(0),
    views: integer("views").notNull().default(0),
    /** Issue 46: counted views that came through a referral link (`?ref=`), the invitations the funnel counts. */
    referralViews: integer("referral_views").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.waitlistId, t.date] })],
);

/**
 * Issue 46: counted views by where they came from (a link's utm_source, else the referring host; its medium and
 * campaign; "" for none, a key part cannot be NULL). Views from nowhere are not written: the day's views less these.
 */
export const sourceViews = pgTable(
  "source_views",
  {
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    date: text("date").notNull(),
    source: text("source").notNull(),
    medium: text("medium").notNull(),
    campaign: text("campaign").notNull(),
    views: integer("views").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.waitlistId, t.date, t.source, t.medium, t.campaign] })],
);

/** Issue 46: a subscriber's share-button clicks on the status page, one row per channel and UTC date. */
export const shareClicks = pgTable(
  "share_clicks",
  {
    subscriberId: text("subscriber_id").notNull().references(() => subscribers.id, { onDelete: "cascade" }),
    channel: text("channel").notNull(),
    date: text("date").notNull(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    clicks: integer("clicks").notNull().default(1),
  },
  (t) => [primaryKey({ columns: [t.subscriberId, t.channel, t.date] }), index("share_clicks_waitlist_date_idx").on(t.waitlistId, t.date)],
);

/** Instance-wide secrets and settings kept in the database so every instance agrees. */
export const meta = pgTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});


/**
 * Durable outbox of emails and webhook deliveries: a row is written in the same transaction as
 * the change that causes it, first tried right after the commit, then retried by a job until
 * sent or failed (DESIGN §4 Events). `payload` is filled from the committed state just after the
 * commit; a row left without one (a crash in between) is rendered at delivery.
 */
export const outbox = pgTable(
  "outbox",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: OUTBOX_KINDS }).notNull(),
    /** webhook: the event type; email: the template (confirmation, welcome). */
    topic: text("topic").notNull(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    subscriberId: text("subscriber_id"),
    /** referral.credited: the referrer. */
    relatedId: text("related_id"),
    payload: text("payload"),
    status: text("status", { enum: OUTBOX_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    lockedUntil: bigint("locked_until", { mode: "number" }),
    lastError: text("last_error"),
    lastStatus: integer("last_status"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    sentAt: bigint("sent_at", { mode: "number" }),
    /** Issue 49: the event's id (the webhook-id; an email's is its own id), one event a row per endpoint. */
    eventId: text("event_id"),
    /** Issue 49: the endpoint a webhook row is for. */
    endpointId: text("endpoint_id"),
  },
  (t) => [
    index("outbox_due_idx").on(t.status, t.nextAttemptAt),
    index("outbox_event_idx").on(t.eventId),
    // an endpoint's rows: one subscriber's events in order, a replay's pick (issue 49)
    index("outbox_endpoint_idx").on(t.endpointId, t.subscriberId).where(sql`${t.kind} = 'webhook'`),
    index("outbox_waitlist_idx").on(t.waitlistId, t.createdAt),
    // a subscriber's email history (issue 45)
    index("outbox_subscriber_email_idx").on(t.subscriberId, t.createdAt).where(sql`${t.kind} = 'email'`),
  ],
);


/** One landing page per waitlist (spec: Landing page). `version` moves on every change: page caches check it. */
export const landingPages = pgTable("landing_pages", {
  id: text("id").primaryKey(),
  waitlistId: text("waitlist_id")
    .notNull()
    .unique()
    .references(() => waitlists.id, { onDelete: "cascade" }),
  pageType: text("page_type", { enum: PAGE_TYPES }).notNull(),
  status: text("status", { enum: PAGE_STATUSES }).notNull(),
  headline: text("headline"),
  description: text("description"),
  buttonText: text("button_text"),
  collectName: boolean("collect_name"),
  collectPhone: boolean("collect_phone"),
  /** JSON {type, value}: value re-emitted from a parsed color or gradient, never the raw input. */
  background: text("background"),
  theme: text("theme", { enum: ["light", "dark"] }).notNull().default("light"),
  /** JSON {title, description, keywords, og_title, og_description}. */
  seo: text("seo").notNull().default("{}"),
  /** AI pages: the sanitized HTML, the model's metadata and the conversation (JSON). */
  aiHtml: text("ai_html"),
  aiMeta: text("ai_meta"),
  aiConversation: text("ai_conversation"),
  lastGeneratedAt: bigint("last_generated_at", { mode: "number" }),
  version: integer("version").notNull().default(1),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
  updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  publishedAt: bigint("published_at", { mode: "number" }),
  /**
   * Issue 16: the page as last published (JSON of the rendered fields), served while a newer AI draft
   * is being worked on: generate changes the draft only, publish makes it live.
   */
  publishedSnapshot: text("published_snapshot"),
});

/**
 * Dashboard previews of a landing page with unsaved edits (DESIGN §9): the page row as it would be,
 * served at /preview/{token} for a short while. In the database so any instance can serve it.
 */
export const landingPreviews = pgTable(
  "landing_previews",
  {
    token: text("token").primaryKey(),
    waitlistId: text("waitlist_id")
      .notNull()
      .references(() => waitlists.id, { onDelete: "cascade" }),
    /** JSON of the landing_pages row with the edits applied. */
    page: text("page").notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [index("landing_previews_expires_idx").on(t.expiresAt)],
);

/**
 * A milestone a referrer reached, at most once per threshold (issue 11): the primary key makes a
 * second reward impossible, even when referrals are taken back and made again. `award_id` ties the
 * tag, webhook and email written in the same transaction to this row having been created by it.
 */
export const milestoneRewards = pgTable(
  "milestone_rewards",
  {
    subscriberId: text("subscriber_id")
      .notNull()
      .references(() => subscribers.id, { onDelete: "cascade" }),
    referrals: integer("referrals").notNull(),
    waitlistId: text("waitlist_id")
      .notNull()
      .references(() => waitlists.id, { onDelete: "cascade" }),
    reward: text("reward").notNull(),
    tag: text("tag"),
    awardId: text("award_id").notNull().unique(),
    reachedAt: bigint("reached_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.subscriberId, t.referrals] })],
);

/**
 * ALTCHA solutions already accepted (issue 16): a solved challenge is good once, across instances.
 * Kept until the challenge would have expired anyway, then pruned by cron.
 */
export const captchaSolutions = pgTable(
  "captcha_solutions",
  {
    /** The challenge's signature (HMAC, unique per challenge). */
    signature: text("signature").primaryKey(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [index("captcha_solutions_expires_idx").on(t.expiresAt)],
);

/**
 * Confirmation emails sent per address (issue 16: the form is not a mail relay): at most one per
 * address and waitlist per 10 minutes and three per address a day. Rows older than a day are pruned.
 */
export const confirmationSends = pgTable(
  "confirmation_sends",
  {
    email: text("email").notNull(),
    waitlistId: text("waitlist_id").notNull(),
    sentAt: bigint("sent_at", { mode: "number" }).notNull(),
  },
  (t) => [index("confirmation_sends_email_idx").on(t.email, t.sentAt), index("confirmation_sends_sent_idx").on(t.sentAt)],
);

/**
 * Issue 45: a message the team writes to a segment of its list. Sending walks the segment by subscriber id from
 * `cursor`, a batch at a time, writing a recipient row and an outbox row for each (broadcasts/send.ts).
 */
export const broadcasts = pgTable(
  "broadcasts",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    subject: text("subject").notNull(),
    bodyMarkdown: text("body_markdown").notNull(),
    /** JSON: the segment as given (broadcasts/segment.ts). */
    segment: text("segment").notNull().default("{}"),
    status: text("status", { enum: BROADCAST_STATUSES }).notNull().default("draft"),
    sendAt: bigint("send_at", { mode: "number" }),
    /** The last subscriber id given a recipient row; null before the first batch. */
    cursor: text("cursor"),
    /** Set when every recipient has its outbox row. */
    queuedAt: bigint("queued_at", { mode: "number" }),
    startedAt: bigint("started_at", { mode: "number" }),
    finishedAt: bigint("finished_at", { mode: "number" }),
    cancelledAt: bigint("cancelled_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("broadcasts_waitlist_idx").on(t.waitlistId, t.createdAt), index("broadcasts_due_idx").on(t.status, t.sendAt)],
);

/** One row per broadcast and subscriber: the primary key is what makes a broadcast reach a subscriber once at most. */
export const broadcastRecipients = pgTable(
  "broadcast_recipients",
  {
    broadcastId: text("broadcast_id").notNull().references(() => broadcasts.id, { onDelete: "cascade" }),
    subscriberId: text("subscriber_id").notNull(),
    outboxId: text("outbox_id").notNull(),
    status: text("status", { enum: RECIPIENT_STATUSES }).notNull().default("queued"),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.broadcastId, t.subscriberId] }), index("broadcast_recipients_status_idx").on(t.broadcastId, t.status)],
);

/**
 * Issue 47: a CSV import. Its rows are staged first (import_rows), then a job runs them in signed-up order, a batch
 * per transaction that also moves the cursor and the counts: a crash resumes at the cursor, never half a batch.
 */
export const imports = pgTable(
  "imports",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    status: text("status", { enum: IMPORT_STATUSES }).notNull().default("queued"),
    /** skip or update: what an email already on the list gets. */
    mode: text("mode").notNull(),
    dryRun: boolean("dry_run").notNull().default(false),
    notify: boolean("notify").notNull().default(false),
    /** JSON: the file's columns and the field each one went to. */
    mapping: text("mapping").notNull(),
    rows: integer("row_count").notNull().default(0),
    created: integer("created").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    skipped: integer("skipped").notNull().default(0),
    invalid: integer("invalid").notNull().default(0),
    /** JSON: the first 1,000 problems, [{line, message}]. */
    errors: text("errors").notNull().default("[]"),
    /** The last row run: its signed-up time and line (rows run in that order); null before the first. */
    cursorAt: bigint("cursor_at", { mode: "number" }),
    cursorLine: integer("cursor_line"),
    /** Referral links to rows later in the file, made once every row is in: done. */
    linked: boolean("linked").notNull().default(false),
    failure: text("failure"),
    holder: text("holder"),
    lockedUntil: bigint("locked_until", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    finishedAt: bigint("finished_at", { mode: "number" }),
  },
  (t) => [index("imports_waitlist_idx").on(t.waitlistId, t.createdAt), index("imports_status_idx").on(t.status)],
);

/** Issue 47: an import's rows as read from the file, mapped (`data`, JSON), until the import is done. */
export const importRows = pgTable(
  "import_rows",
  {
    importId: text("import_id").notNull(),
    line: integer("line").notNull(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    /** The signed-up time the row gives (or the import's time): the order rows are run in. */
    joinedAt: bigint("joined_at", { mode: "number" }).notNull(),
    email: text("email"),
    data: text("data").notNull(),
    /** The row's id in the system it came from (a referrer is named by it), and the subscriber it became. */
    extId: text("ext_id"),
    /** The referral code it had there (kept when free): a referrer in the file is named by it. */
    extCode: text("ext_code"),
    subscriberId: text("subscriber_id"),
    /** A referrer not in yet when the row ran (later in the file): linked once every row is in. */
    referrerPending: text("referrer_pending"),
    stagedAt: bigint("staged_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.importId, t.line] }),
    index("import_rows_order_idx").on(t.importId, t.joinedAt, t.line),
    index("import_rows_email_idx").on(t.importId, t.email),
    index("import_rows_ext_idx").on(t.importId, t.extId),
    index("import_rows_code_idx").on(t.importId, t.extCode),
  ],
);

/** Issue 47: a subscriber's request for their data from the status page: the emailed link's token, valid 24 hours. */
export const dataRequests = pgTable(
  "data_requests",
  {
    token: text("token").primaryKey(),
    subscriberId: text("subscriber_id").notNull().references(() => subscribers.id, { onDelete: "cascade" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [index("data_requests_subscriber_idx").on(t.subscriberId, t.createdAt), index("data_requests_expires_idx").on(t.expiresAt)],
);

export const auditLog = pgTable(
  "audit_log",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    at: bigint("at", { mode: "number" }).notNull(),
    actorType: text("actor_type").notNull(),
    actorId: text("actor_id").notNull(),
    actorName: text("actor_name").notNull(),
    action: text("action").notNull(),
    target: text("target"),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("audit_log_account_idx").on(t.accountId, t.at), index("audit_log_actor_idx").on(t.accountId, t.actorId, t.at)],
);

/** Issue 48: the people of an account, each with a role; a password once they set it, TOTP when they turn it on. */
export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    /** Lower-cased; one user an address across the service (sign-in names no account). */
    email: text("email").notNull().unique(),
    name: text("name"),
    role: text("role", { enum: ROLES }).notNull(),
    /** Argon2id (Bun.password); null until the invitation is accepted. */
    passwordHash: text("password_hash"),
    totpSecret: text("totp_secret"),
    totpEnabledAt: bigint("totp_enabled_at", { mode: "number" }),
    /** SHA-256 of each unused recovery code, comma-separated. */
    recoveryCodes: text("recovery_codes"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("users_account_idx").on(t.accountId)],
);

/** Issue 48: single-use links (an invitation, a password reset), by the SHA-256 of the token. */
export const userTokens = pgTable(
  "user_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["invite", "reset"] }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    usedAt: bigint("used_at", { mode: "number" }),
  },
  (t) => [index("user_tokens_user_idx").on(t.userId)],
);

/** Issue 48: dashboard sessions, by the SHA-256 of the cookie's token: any instance reads them, any revokes them. */
export const sessions = pgTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    /** What a list shows and a revocation names: not the cookie's token. */
    publicId: text("public_id").notNull().unique(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** The CSRF token a state-changing request sends back in X-CSRF-Token. */
    csrf: text("csrf").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

/** Issue 48: failed sign-ins, by account address and by IP, counted over 15 minutes. */
export const signInFailures = pgTable(
  "sign_in_failures",
  {
    id: text("id").primaryKey(),
    subject: text("subject").notNull(),
    at: bigint("at", { mode: "number" }).notNull(),
  },
  (t) => [index("sign_in_failures_subject_idx").on(t.subject, t.at)],
);

/**
 * Issue 49: a waitlist's webhook endpoints (up to 10). `events` is a JSON array of event types (empty: all). During
 * the 24 hours after a rotation, deliveries are signed with `previous_secret` too. `failing_since`: the first failed
 * attempt since the last delivered one; after 5 days of failing the endpoint is disabled.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    waitlistId: text("waitlist_id").notNull().references(() => waitlists.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    description: text("description"),
    events: text("events").notNull().default("[]"),
    enabled: boolean("enabled").notNull().default(true),
    format: text("format", { enum: WEBHOOK_FORMATS }).notNull().default("json"),
    /** The X-Webhook-* headers beside Standard Webhooks' (on for the endpoint made from the old setting). */
    legacySignature: boolean("legacy_signature").notNull().default(false),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretUntil: bigint("previous_secret_until", { mode: "number" }),
    failingSince: bigint("failing_since", { mode: "number" }),
    disabledReason: text("disabled_reason"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("webhook_endpoints_waitlist_idx").on(t.waitlistId, t.createdAt)],
);

/** Issue 49: every delivery attempt of a webhook row (and its skip), kept 30 days: an endpoint's delivery log. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id").notNull().references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    outboxId: text("outbox_id").notNull(),
    eventId: text("event_id").notNull(),
    event: text("event").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATUSES }).notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms"),
    /** The first 1 KB of the receiver's answer. */
    response: text("response"),
    error: text("error"),
    attemptedAt: bigint("attempted_at", { mode: "number" }).notNull(),
  },
  (t) => [index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.attemptedAt), index("webhook_deliveries_at_idx").on(t.attemptedAt)],
);
