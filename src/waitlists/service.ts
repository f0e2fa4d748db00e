// Waitlists: create (slug rules, plan limit, reserved names), list, and the settings extension (DESIGN §4).
import { setTarget } from "../audit/scope";
import { checkFormFields, formFieldsOf } from "./form-fields";
import { and, desc, eq, getTableColumns, getTableName, inArray, sql, type SQL } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db, Tables } from "../db/db";
import type { PlanId } from "../db/schema";
import { foldName } from "../db/fold";
import { newPageRow } from "../landing/service";
import { AppError, badRequest, conflict, forbidden } from "../http/errors";
import type { Waitlist } from "../http/api";
import { planOf } from "../account/plans";
import type { CreateWaitlistInput, SettingsPatch } from "./model";
import { normalizeHost } from "./hosts";
import { applyWebhookSetting, checkWebhookSetting, firstEndpoint, webhookSetting } from "../webhooks/settings";
import type { Endpoint } from "../webhooks/endpoints";

export const RESERVED_SLUGS = new Set(["test-waitlist"]);
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** DESIGN §4: lowercase; each run outside [a-z0-9] becomes one "-"; no leading/trailing "-"; never a suffix. */
export const slugify = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");

export const DEFAULT_TEMPLATES = {
  confirmationSubject: "Confirm your spot on the {{waitlist_name}} waitlist",
  confirmationBody: "Hi {{name}},\n\nPlease confirm your email address to join the {{waitlist_name}} waitlist:\n\n{{confirm_link}}\n\nIf you did not sign up, you can ignore this email.",
  welcomeSubject: "You're on the {{waitlist_name}} waitlist",
  welcomeBody: "Hi {{name}},\n\nThanks for joining the {{waitlist_name}} waitlist. You are number {{inflated_position}}.\n\nMove up the list by sharing your link: {{referral_link}}\n\nSee your spot any time: {{status_link}}\n\nUnsubscribe: {{unsubscribe_link}}",
  // issue 16: every email but the confirmation shows its unsubscribe link (the column defaults in db/schema predate it)
  invitationBody: "Hi {{name}},\n\nYour wait is over: you are invited to {{waitlist_name}}.\n\nAccept your invitation: {{invite_link}}\n\nUnsubscribe: {{unsubscribe_link}}",
  milestoneBody: "Hi {{name}},\n\nYou have referred {{referral_count}} friends to {{waitlist_name}}. Your reward: {{reward}}\n\nKeep sharing your link: {{referral_link}}\n\nUnsubscribe: {{unsubscribe_link}}",
};

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest("name is required and must not be blank");
  if (name.length > 100) throw badRequest("name must be at most 100 characters");
  return name;
}

/**
 * The 409 for a unique key a waitlist broke. A new waitlist whose name is taken usually takes the same slug too, and
 * the engines report different ones for such a row (SQLite the name's index, PostgreSQL the slug's), so the answer
 * names the first one taken in a fixed order, name then slug then custom domain: the same on both (issue 44).
 */
async function nameTaken(db: Db, err: unknown, mine: { id: string; name: string; slug: string; customDomain: string | null }): Promise<AppError | null> {
  if (db.d.uniqueKey(err) === null) return null;
  const { waitlists } = db.t;
  const others = await db
    .select({ name: waitlists.name, slug: waitlists.slug, customDomain: waitlists.customDomain })
    .from(waitlists)
    .where(sql`${waitlists.id} <> ${mine.id} AND (${waitlists.nameKey} = ${foldName(mine.name)} OR ${waitlists.slug} = ${mine.slug} OR ${waitlists.customDomain} = ${mine.customDomain})`);
  if (others.some((o) => foldName(o.name) === foldName(mine.name))) return conflict(`name "${mine.name}" is already taken`);
  if (others.some((o) => o.slug === mine.slug)) return conflict(`slug "${mine.slug}" is already taken`);
  if (mine.customDomain !== null && others.some((o) => o.customDomain === mine.customDomain)) return conflict("custom_domain is already used by another waitlist");
  // a unique key of some other row (the id): not the client's doing
  return null;
}

export async function createWaitlist(db: Db, owner: { accountId: string; plan: PlanId }, input: CreateWaitlistInput, baseUrl: string) {
  const name = checkName(input.name);
  let slug: string;
  if (input.slug !== undefined) {
    slug = input.slug.trim();
    if (!SLUG.test(slug)) throw badRequest("slug must be lowercase letters and digits separated by single dashes (e.g. my-launch)");
  } else {
    slug = slugify(name);
    if (!slug) throw badRequest("name must contain a letter or digit to derive a slug; or give slug");
  }
  // spec: a reserved name whose slug would be test-waitlist is refused, not renamed
  if (RESERVED_SLUGS.has(slug)) throw conflict(`slug "${slug}" is reserved; choose another name or slug`);

  const at = now();
  const row: Tables["waitlists"]["$inferInsert"] = {
    id: token(20),
    accountId: owner.accountId,
    key: token(20),
    slug,
    name,
    nameKey: foldName(name),
    category: input.category?.trim() || null,
    description: input.description?.trim() || null,
    referralEnabled: input.referral_rewards?.enabled ?? false,
    signupPoints: input.referral_rewards?.signup_points ?? 50,
    referralPoints: input.referral_rewards?.referral_points ?? 30,
    validateEmails: input.validate_emails ?? true,
    ...DEFAULT_TEMPLATES,
    signingSecret: `whsec_${token(40)}`,
    createdAt: at,
    updatedAt: at,
  };
  const max = planOf(owner.plan).maxWaitlists;
  // spec: landing_page follows the landing-page create rules; an invalid one creates nothing
  const page = input.landing_page ? newPageRow(row.id!, input.landing_page) : null;
  setTarget(`waitlist/${row.key}`);
  try {
    const inserted = await insertWithinLimit(db, row, max, page);
    if (!inserted) throw forbidden(`Waitlist limit reached: the ${planOf(owner.plan).name} plan allows ${max} waitlist${max === 1 ? "" : "s"}`);
  } catch (err) {
    throw (await nameTaken(db, err, { id: row.id!, name, slug, customDomain: null })) ?? err;
  }
  return {
    waitlist: {
      id: row.id!,
      key: row.key!,
      slug,
      name,
      form_action_url: `${baseUrl}/s/${row.key}`,
      hosted_page_url: null,
      created_at: at,
    },
    notes:
      "Collect sign-ups with POST /api/v1/waitlist/{key}/sign-up, or point an HTML form at form_action_url after adding your site to allowed_domains in settings. hosted_page_url stays null until a landing page is published.",
  };
}

/**
 * `INSERT ... SELECT <values> WHERE <cond> RETURNING id` for a row of `table`, with drizzle's column names. Values
 * are plain parameters (booleans as JS booleans); PostgreSQL takes their types from the columns.
 */
function insertWhere(table: Tables["waitlists"] | Tables["landingPages"], row: Record<string, unknown>, cond: SQL) {
  const columns = getTableColumns(table) as Record<string, { name: string }>;
  const entries = Object.entries(row).filter(([, v]) => v !== undefined);
  const names = sql.raw(entries.map(([k]) => `"${columns[k].name}"`).join(", "));
  const values = sql.join(entries.map(([, v]) => sql`${v}`), sql`, `);
  return sql`INSERT INTO ${sql.raw(`"${getTableName(table)}"`)} (${names}) SELECT ${values} WHERE ${cond} RETURNING id`;
}

/**
 * One atomic write; the limit is checked in the insert itself, so two concurrent creates cannot both slip under it
 * (SQLite: one writer; PostgreSQL: the account row is locked first, so the second create counts after the first).
 */
async function insertWithinLimit(db: Db, row: Tables["waitlists"]["$inferInsert"], max: number | "unlimited", page: Record<string, unknown> | null): Promise<boolean> {
  const limit = max === "unlimited" ? sql`TRUE` : sql`(SELECT count(*) FROM waitlists WHERE account_id = ${row.accountId}) < ${max}`;
  const [, inserted] = await db.write([
    sql`SELECT 1 FROM accounts WHERE id = ${row.accountId}${db.d.forUpdate}`,
    insertWhere(db.t.waitlists, row, limit),
    ...(page ? [insertWhere(db.t.landingPages, page, sql`EXISTS (SELECT 1 FROM waitlists WHERE id = ${row.id!})`)] : []),
  ]);
  return inserted.length === 1;
}

/** The account's waitlists; `only` (ids): those of a key limited to them (issue 48). */
export async function listWaitlists(db: Db, accountId: string, only: string[] | null = null) {
  const { waitlists } = db.t;
  const rows = await db
    .select({ id: waitlists.id, key: waitlists.key, name: waitlists.name, slug: waitlists.slug, subscribers: waitlists.subscribersCount, views: waitlists.viewsCount, created_at: waitlists.createdAt })
    .from(waitlists)
    .where(and(eq(waitlists.accountId, accountId), only ? inArray(waitlists.id, only) : undefined))
    .orderBy(desc(waitlists.createdAt), desc(waitlists.id));
  return { waitlists: rows, total: rows.length };
}

/** A waitlist's settings, with its landing page's status (null without one: the dashboard asks for the page only then). */
export async function settingsOf(db: Db, w: Waitlist) {
  const { landingPages } = db.t;
  const [page] = await db.select({ status: landingPages.status }).from(landingPages).where(eq(landingPages.waitlistId, w.id));
  return settingsView(w, (page?.status ?? null) as "draft" | "published" | "unpublished" | null, await firstEndpoint(db, w.id));
}

function settingsView(w: Waitlist, pageStatus: "draft" | "published" | "unpublished" | null, firstWebhook: Endpoint | undefined) {
  return {
    key: w.key,
    slug: w.slug,
    name: w.name,
    category: w.category,
    description: w.description,
    double_opt_in: w.doubleOptIn,
    position_offset: w.positionOffset,
    allowed_domains: JSON.parse(w.allowedDomains) as string[],
    referral_rewards: { enabled: w.referralEnabled, signup_points: w.signupPoints, referral_points: w.referralPoints },
    validate_emails: w.validateEmails,
    welcome_email: { enabled: w.welcomeEnabled, subject: w.welcomeSubject, body: w.welcomeBody },
    confirmation_email: { subject: w.confirmationSubject, body: w.confirmationBody },
    webhook: webhookSetting(w, firstWebhook),
    custom_domain: w.customDomain,
    signup_url: w.signupUrl,
    milestones: milestonesOf(w),
    milestone_email: { subject: w.milestoneSubject, body: w.milestoneBody },
    leaderboard: w.leaderboard,
    invitation_email: { subject: w.invitationSubject, body: w.invitationBody },
    invite_expiry_days: w.inviteExpiryDays,
    invite_redirect_url: w.inviteRedirectUrl,
    captcha: w.captcha,
    form_fields: formFieldsOf(w),
    og_image_url: w.ogImageUrl,
    retention_days: w.retentionDays,
    email_template: { sender_name: w.emailSenderName, logo_url: w.emailLogoUrl, color: w.emailColor, footer: w.emailFooter },
    landing_page_status: pageStatus,
  };
}

export interface Milestone {
  referrals: number;
  reward: string;
  tag: string | null;
}

export const milestonesOf = (w: Pick<Waitlist, "milestones">): Milestone[] => JSON.parse(w.milestones) as Milestone[];

/** Distinct thresholds, text without markup, sorted by threshold. */
function checkMilestones(list: { referrals: number; reward: string; tag?: string }[]): string {
  const seen = new Set<number>();
  const clean = list.map((m, i) => {
    if (seen.has(m.referrals)) throw badRequest(`milestones[${i}].referrals: ${m.referrals} appears twice; each threshold may have one reward`);
    seen.add(m.referrals);
    const reward = m.reward.trim();
    const tag = m.tag?.trim() || null;
    if (!reward) throw badRequest(`milestones[${i}].reward must not be blank`);
    if (/[<>]/.test(reward) || (tag && /[<>]/.test(tag))) throw badRequest(`milestones[${i}] must be plain text (no < or >)`);
    return { referrals: m.referrals, reward, tag };
  });
  return JSON.stringify(clean.sort((a, b) => a.referrals - b.referrals));
}

/** PATCH merges objects one level deep: omitted members keep their values (DESIGN §4). */
/** `released`: told the webhook rows a re-enabled endpoint made due (to be sent now). */
export async function updateSettings(db: Db, w: Waitlist, patch: SettingsPatch, opts: { blockPrivateWebhooks: boolean; released?: (rows: string[]) => void }) {
  if (!patch || Object.keys(patch).length === 0) throw badRequest("Provide at least one setting to change");
  const set: Partial<Tables["waitlists"]["$inferInsert"]> = {};
  if (patch.name !== undefined) {
    set.name = checkName(patch.name);
    set.nameKey = foldName(set.name);
  }
  if (patch.category !== undefined) set.category = patch.category?.trim() || null;
  if (patch.description !== undefined) set.description = patch.description?.trim() || null;
  if (patch.double_opt_in !== undefined) set.doubleOptIn = patch.double_opt_in;
  if (patch.position_offset !== undefined) set.positionOffset = patch.position_offset;
  if (patch.validate_emails !== undefined) set.validateEmails = patch.validate_emails;
  if (patch.allowed_domains !== undefined) {
    set.allowedDomains = JSON.stringify([...new Set(patch.allowed_domains.map((d, i) => normalizeHost(d, `allowed_domains[${i}]`, true)))]);
  }
  const rr = patch.referral_rewards;
  if (rr?.enabled !== undefined) set.referralEnabled = rr.enabled;
  if (rr?.signup_points !== undefined) set.signupPoints = rr.signup_points;
  if (rr?.referral_points !== undefined) set.referralPoints = rr.referral_points;
  const we = patch.welcome_email;
  if (we?.enabled !== undefined) set.welcomeEnabled = we.enabled;
  if (we?.subject !== undefined) set.welcomeSubject = requireText(we.subject, "welcome_email.subject");
  if (we?.body !== undefined) set.welcomeBody = requireText(we.body, "welcome_email.body");
  const ce = patch.confirmation_email;
  if (ce?.subject !== undefined) set.confirmationSubject = requireText(ce.subject, "confirmation_email.subject");
  if (ce?.body !== undefined) set.confirmationBody = requireText(ce.body, "confirmation_email.body");
  // issue 49: the setting is the first endpoint
  const first = patch.webhook ? await firstEndpoint(db, w.id) : undefined;
  const webhook = patch.webhook ? checkWebhookSetting(patch.webhook, first, opts.blockPrivateWebhooks) : null;
  if (patch.milestones !== undefined) set.milestones = checkMilestones(patch.milestones);
  if (patch.leaderboard !== undefined) set.leaderboard = patch.leaderboard;
  if (patch.captcha !== undefined) set.captcha = patch.captcha;
  const ie = patch.invitation_email;
  if (ie?.subject !== undefined) set.invitationSubject = requireText(ie.subject, "invitation_email.subject");
  if (ie?.body !== undefined) set.invitationBody = requireText(ie.body, "invitation_email.body");
  if (patch.invite_expiry_days !== undefined) set.inviteExpiryDays = patch.invite_expiry_days;
  if (patch.invite_redirect_url !== undefined) set.inviteRedirectUrl = patch.invite_redirect_url === null ? null : httpUrl(patch.invite_redirect_url, "invite_redirect_url");
  const me = patch.milestone_email;
  if (me?.subject !== undefined) set.milestoneSubject = requireText(me.subject, "milestone_email.subject");
  if (me?.body !== undefined) set.milestoneBody = requireText(me.body, "milestone_email.body");
  if (patch.form_fields !== undefined) set.formFields = checkFormFields(patch.form_fields);
  if (patch.og_image_url !== undefined) set.ogImageUrl = patch.og_image_url === null ? null : httpUrl(patch.og_image_url, "og_image_url");
  if (patch.retention_days !== undefined) set.retentionDays = patch.retention_days;
  const et = patch.email_template;
  if (et?.sender_name !== undefined) set.emailSenderName = et.sender_name?.trim() || null;
  if (et?.logo_url !== undefined) set.emailLogoUrl = et.logo_url === null ? null : httpUrl(et.logo_url, "email_template.logo_url");
  if (et?.color !== undefined) set.emailColor = et.color.toLowerCase();
  if (et?.footer !== undefined) set.emailFooter = et.footer?.trim() || null;
  if (patch.signup_url !== undefined) set.signupUrl = patch.signup_url === null ? null : signupUrl(patch.signup_url);
  if (patch.custom_domain !== undefined) set.customDomain = patch.custom_domain === null || patch.custom_domain.trim() === "" ? null : normalizeHost(patch.custom_domain, "custom_domain", false);

  set.updatedAt = now();
  try {
    const [updated, released] = await db.tx(async (tx) => {
      const released = webhook ? await applyWebhookSetting(tx, w, first, webhook) : [];
      const [row] = await tx.update(tx.t.waitlists).set(set).where(eq(tx.t.waitlists.id, w.id)).returning();
      return [row!, released] as const;
    });
    opts.released?.(released);
    return await settingsOf(db, updated);
  } catch (err) {
    throw (await nameTaken(db, err, { id: w.id, name: set.name ?? w.name, slug: w.slug, customDomain: set.customDomain !== undefined ? set.customDomain : w.customDomain })) ?? err;
  }
}

function requireText(value: string, field: string): string {
  if (!value.trim()) throw badRequest(`${field} must not be blank`);
  return value;
}

function httpUrl(raw: string, field: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest(`${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${field} must be an absolute http(s) URL`);
  return url.toString();
}

/** Issue 16: the team's own form, where referral links lead; credentials in it would be handed to every visitor. */
function signupUrl(raw: string): string {
  const url = new URL(httpUrl(raw, "signup_url"));
  if (url.username || url.password) throw badRequest("signup_url must not contain a user name or password");
  return url.toString();
}

