// Issue 49: a waitlist's webhook endpoints, up to 10, each with its URL, event filter, format, switch and secret.
// The old `webhook` setting is the first of them (settings.ts of this folder).
import { and, asc, eq, sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db, Tables } from "../db/db";
import type { WEBHOOK_FORMATS } from "../db/schema";
import type { Waitlist } from "../http/api";
import { badRequest, conflict, notFound } from "../http/errors";
import { EVENT_TYPES } from "../outbox/events";
import { isPrivateAddress } from "../waitlists/hosts";

export const MAX_ENDPOINTS = 10;
/** After a rotation, deliveries carry the old secret's signature too for this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
export const DESCRIPTION_MAX = 200;

export type Endpoint = Tables["webhookEndpoints"]["$inferSelect"];
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface EndpointInput {
  url?: string;
  description?: string | null;
  events?: string[];
  enabled?: boolean;
  format?: WebhookFormat;
  legacy_signature?: boolean;
}

export const newSecret = () => `whsec_${token(40)}`;

export function endpointView(e: Endpoint) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: JSON.parse(e.events) as string[],
    enabled: Boolean(e.enabled),
    format: e.format,
    legacy_signature: Boolean(e.legacySignature),
    disabled_reason: e.disabledReason,
    failing_since: e.failingSince === null ? null : Number(e.failingSince),
    created_at: Number(e.createdAt),
    updated_at: Number(e.updatedAt),
  };
}

/** Read alone (or just made), an endpoint shows its secret. */
export const endpointWithSecret = (e: Endpoint) => ({ ...endpointView(e), secret: e.secret });

/** An http(s) URL; with WEBHOOK_BLOCK_PRIVATE not on a loopback or private address (checked again at delivery). */
export function checkWebhookUrl(raw: string, blockPrivate: boolean, field: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badRequest(`${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${field} must be an absolute http(s) URL`);
  if (blockPrivate && isPrivateAddress(url.hostname.replace(/^\[|\]$/g, ""))) {
    throw badRequest(`${field} points at a loopback or private address, which WEBHOOK_BLOCK_PRIVATE refuses`);
  }
  return url.toString();
}

function checkEvents(events: string[]): string {
  const known = new Set<string>(EVENT_TYPES);
  events.forEach((e, i) => {
    if (!known.has(e)) throw badRequest(`events[${i}]: "${e}" is not an event type (one of ${EVENT_TYPES.join(", ")})`);
  });
  return JSON.stringify([...new Set(events)]);
}

/** The columns an input sets, checked. */
function columns(input: EndpointInput, blockPrivate: boolean): Partial<Tables["webhookEndpoints"]["$inferInsert"]> {
  const set: Partial<Tables["webhookEndpoints"]["$inferInsert"]> = {};
  if (input.url !== undefined) set.url = checkWebhookUrl(input.url, blockPrivate, "url");
  if (input.description !== undefined) set.description = input.description?.trim() || null;
  if (input.events !== undefined) set.events = checkEvents(input.events);
  if (input.enabled !== undefined) set.enabled = input.enabled;
  if (input.format !== undefined) set.format = input.format;
  if (input.legacy_signature !== undefined) set.legacySignature = input.legacy_signature;
  return set;
}

export async function listEndpoints(db: Db, waitlistId: string): Promise<Endpoint[]> {
  const { webhookEndpoints: e } = db.t;
  return db.select().from(e).where(eq(e.waitlistId, waitlistId)).orderBy(asc(e.createdAt), asc(e.id));
}

export async function findEndpoint(db: Db, waitlistId: string, id: string): Promise<Endpoint> {
  const { webhookEndpoints: e } = db.t;
  const [row] = await db.select().from(e).where(and(eq(e.waitlistId, waitlistId), eq(e.id, id)));
  if (!row) throw notFound("Webhook endpoint not found");
  return row;
}

/** Locks the waitlist's row (PostgreSQL) so that two creations can't both pass the cap; answers how many it has. */
async function lockCount(tx: Db, waitlistId: string): Promise<number> {
  const [row] = await tx.rows<{ n: number }>(sql`UPDATE waitlists SET webhook_endpoints = webhook_endpoints WHERE id = ${waitlistId} RETURNING webhook_endpoints AS n`);
  return Number(row?.n ?? 0);
}

const setCount = (tx: Db, waitlistId: string, delta: number) =>
  tx.exec(sql`UPDATE waitlists SET webhook_endpoints = webhook_endpoints + ${delta}, updated_at = ${now()} WHERE id = ${waitlistId}`);

/** `opts.tx`: inside a transaction already (the settings' PATCH). */
export async function createEndpoint(
  db: Db,
  w: Pick<Waitlist, "id">,
  input: EndpointInput & { url: string },
  opts: { blockPrivate: boolean; secret?: string; legacy?: boolean },
): Promise<Endpoint> {
  const at = now();
  const set = columns(input, opts.blockPrivate);
  const row = {
    id: `we_${token(24)}`,
    waitlistId: w.id,
    url: set.url!,
    description: set.description ?? null,
    events: set.events ?? "[]",
    enabled: set.enabled ?? true,
    format: set.format ?? "json",
    legacySignature: set.legacySignature ?? opts.legacy ?? false,
    secret: opts.secret ?? newSecret(),
    createdAt: at,
    updatedAt: at,
  };
  return db.tx(async (tx) => {
    if ((await lockCount(tx, w.id)) >= MAX_ENDPOINTS) throw conflict(`A waitlist has at most ${MAX_ENDPOINTS} webhook endpoints: delete one first`);
    const [created] = await tx.insert(tx.t.webhookEndpoints).values(row).returning();
    await setCount(tx, w.id, 1);
    return created!;
  });
}

/**
 * Re-enabling takes back the endpoint's retries held while it was off (dispatcher.ts): they are due at once. An
 * endpoint switched on again by hand forgets its failing streak and the reason it was switched off.
 */
export async function updateEndpoint(db: Db, w: Pick<Waitlist, "id">, id: string, input: EndpointInput, opts: { blockPrivate: boolean }): Promise<{ endpoint: Endpoint; released: string[] }> {
  const set = columns(input, opts.blockPrivate);
  if (Object.keys(set).length === 0) throw badRequest("Provide at least one of url, description, events, enabled, format, legacy_signature");
  const before = await findEndpoint(db, w.id, id);
  const at = now();
  const enabling = set.enabled === true && !before.enabled;
  if (enabling) Object.assign(set, { failingSince: null, disabledReason: null });
  const { webhookEndpoints: e } = db.t;
  return db.tx(async (tx) => {
    const [endpoint] = await tx.update(e).set({ ...set, updatedAt: at }).where(and(eq(e.waitlistId, w.id), eq(e.id, id))).returning();
    if (!endpoint) throw notFound("Webhook endpoint not found");
    const released = enabling ? await releaseHeld(tx, id, at) : [];
    return { endpoint, released };
  });
}

/** Retries that waited while the endpoint was disabled are due now; the ids of those rows. */
async function releaseHeld(tx: Db, endpointId: string, at: number): Promise<string[]> {
  const rows = await tx.rows<{ id: string }>(
    sql`UPDATE outbox SET next_attempt_at = ${at}, last_error = NULL WHERE endpoint_id = ${endpointId} AND status = 'pending' AND last_error = ${HELD_DISABLED} RETURNING id`,
  );
  return rows.map((r) => r.id);
}

/** What a retry that came due while its endpoint was disabled is marked with while it waits (dispatcher.ts). */
export const HELD_DISABLED = "held: the endpoint is disabled";

/** Deletes the endpoint with its pending events and its log. */
export async function deleteEndpoint(db: Db, w: Pick<Waitlist, "id">, id: string): Promise<Endpoint> {
  return db.tx(async (tx) => {
    await lockCount(tx, w.id);
    const { webhookEndpoints: e } = tx.t;
    const [gone] = await tx.delete(e).where(and(eq(e.waitlistId, w.id), eq(e.id, id))).returning();
    if (!gone) throw notFound("Webhook endpoint not found");
    await tx.exec(sql`DELETE FROM webhook_deliveries WHERE endpoint_id = ${id}`);
    await tx.exec(sql`DELETE FROM outbox WHERE endpoint_id = ${id}`);
    await setCount(tx, w.id, -1);
    return gone;
  });
}

/** A new secret; the old one keeps signing beside it for 24 hours (receivers switch over without a gap). */
export async function rotateSecret(db: Db, w: Pick<Waitlist, "id">, id: string): Promise<Endpoint> {
  const at = now();
  const { webhookEndpoints: e } = db.t;
  return db.tx(async (tx) => {
    const [row] = await tx
      .update(e)
      .set({ previousSecret: sql`${e.secret}`, previousSecretUntil: at + ROTATION_OVERLAP_MS, secret: newSecret(), updatedAt: at })
      .where(and(eq(e.waitlistId, w.id), eq(e.id, id)))
      .returning();
    if (!row) throw notFound("Webhook endpoint not found");
    return row;
  });
}

/** The secrets a delivery is signed with at `at`: the current one, and the previous one during the overlap. */
export const signingSecrets = (e: Pick<Endpoint, "secret" | "previousSecret" | "previousSecretUntil">, at = now()): string[] =>
  e.previousSecret && e.previousSecretUntil !== null && Number(e.previousSecretUntil) > at ? [e.secret, e.previousSecret] : [e.secret];
