// The database schema, single source of truth: drizzle-kit generates the migrations in drizzle/ from it.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const PLANS = ["free", "launch", "pro", "growth", "business"] as const;
export type PlanId = (typeof PLANS)[number];

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  plan: text("plan", { enum: PLANS }).notNull(),
  aiCredits: integer("ai_credits").notNull().default(0),
  createdAt: integer("created_at").notNull(),
});

/** Account keys (waitlist_id null) and per-waitlist keys; only the SHA-256 of a key is stored. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    waitlistId: text("waitlist_id").references(() => waitlists.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    hash: text("hash").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId), index("api_keys_waitlist_idx").on(t.waitlistId)],
);

export const waitlists = sqliteTable(
  "waitlists",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
    key: text("key").notNull().unique(),
    slug: text("slug").notNull().unique(),
    name: text("name").notNull(),
    category: text("category"),
    description: text("description"),
    referralEnabled: integer("referral_enabled", { mode: "boolean" }).notNull().default(false),
    signupPoints: integer("signup_points").notNull().default(50),
    referralPoints: integer("referral_points").notNull().default(30),
    validateEmails: integer("validate_emails", { mode: "boolean" }).notNull().default(true),
    doubleOptIn: integer("double_opt_in", { mode: "boolean" }).notNull().default(false),
    positionOffset: integer("position_offset").notNull().default(0),
    /** JSON array of host names allowed to post the public form. */
    allowedDomains: text("allowed_domains").notNull().default("[]"),
    welcomeEnabled: integer("welcome_enabled", { mode: "boolean" }).notNull().default(false),
    welcomeSubject: text("welcome_subject").notNull(),
    welcomeBody: text("welcome_body").notNull(),
    confirmationSubject: text("confirmation_subject").notNull(),
    confirmationBody: text("confirmation_body").notNull(),
    webhookUrl: text("webhook_url"),
    webhookEnabled: integer("webhook_enabled", { mode: "boolean" }).notNull().default(false),
    signingSecret: text("signing_secret").notNull(),
    customDomain: text("custom_domain").unique(),
    /** Counters kept in the same transaction as the change they count. */
    subscribersCount: integer("subscribers_count").notNull().default(0),
    viewsCount: integer("views_count").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("waitlists_name_nocase_idx").on(sql`lower(${t.name})`),
    index("waitlists_account_created_idx").on(t.accountId, t.createdAt),
  ],
);

/** Fixed one-minute windows per subject (key or IP) and bucket (DESIGN §5). */
export const rateLimits = sqliteTable(
  "rate_limits",
  {
    subject: text("subject").notNull(),
    windowStart: integer("window_start").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subject, t.windowStart] }), index("rate_limits_window_idx").on(t.windowStart)],
);

/** One row per cron job: the instance holding an unexpired lease runs it (DESIGN §6). */
export const jobLeases = sqliteTable("job_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: integer("expires_at").notNull(),
});
