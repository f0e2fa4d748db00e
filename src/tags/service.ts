// Tags (DESIGN §4 extension): a waitlist's labels with a fixed color set, attached to subscribers.
import { and, eq, sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import { foldName } from "../db/fold";
import { TAG_COLORS } from "../db/schema";
import { AppError, badRequest, conflict, notFound } from "../http/errors";
import { findSubscriber } from "../subscribers/query";
import type { Waitlist } from "../http/api";
import { nothing, webhookEvent, type Dispatch } from "../outbox/events";
import { writeAbout } from "../outbox/render";

export const TAG_NAME_MAX = 40;
export const TAGS_PER_WAITLIST = 100;
type Color = (typeof TAG_COLORS)[number];

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest("name must not be blank");
  if (name.length > TAG_NAME_MAX) throw badRequest(`name must be at most ${TAG_NAME_MAX} characters`);
  return name;
}

export async function listTags(db: Db, waitlistId: string) {
  return db.rows<{ id: string; name: string; color: string; subscribers: number }>(sql`
    SELECT t.id, t.name, t.color, (SELECT count(*) FROM subscriber_tags st WHERE st.tag_id = t.id) AS subscribers
    FROM tags t WHERE t.waitlist_id = ${waitlistId} ORDER BY ${db.d.bytewise(sql`t.name_key`)}`);
}

export async function createTag(db: Db, waitlistId: string, input: { name: string; color?: Color }) {
  const name = checkName(input.name);
  const row = { id: token(16), waitlistId, name, color: input.color ?? "gray", createdAt: now() } as const;
  try {
    // the per-waitlist cap is checked in the insert itself, after the waitlist's row is locked (so two creations
    // at once on PostgreSQL cannot both count 99)
    const [, inserted] = await db.write([
      sql`SELECT 1 FROM waitlists WHERE id = ${waitlistId}${db.d.forUpdate}`,
      sql`INSERT INTO tags (id, waitlist_id, name, name_key, color, created_at)
        SELECT ${row.id}, ${waitlistId}, ${name}, ${foldName(name)}, ${row.color}, ${row.createdAt}
        WHERE (SELECT count(*) FROM tags WHERE waitlist_id = ${waitlistId}) < ${TAGS_PER_WAITLIST} RETURNING id`,
    ]);
    if (inserted.length === 0) throw new AppError("conflict", `A waitlist can have at most ${TAGS_PER_WAITLIST} tags`);
  } catch (err) {
    if (db.d.uniqueKey(err) === "tags.waitlist_id, tags.name_key") throw conflict(`A tag named "${name}" already exists`);
    throw err;
  }
  return { id: row.id, name, color: row.color };
}

/** A tag of the waitlist by id, or by name (its folded key: db/fold-names.ts). */
async function findTag(db: Db, waitlistId: string, idOrName: string) {
  const ref = idOrName.trim();
  const [tag] = await db.rows<{ id: string; name: string; color: string }>(sql`
    SELECT id, name, color FROM tags WHERE waitlist_id = ${waitlistId} AND (id = ${ref} OR name_key = ${foldName(ref)})
    ORDER BY id = ${ref} DESC LIMIT 1`);
  return tag as { id: string; name: string; color: string } | undefined;
}

export async function deleteTag(db: Db, waitlistId: string, idOrName: string) {
  const tag = await findTag(db, waitlistId, idOrName);
  if (!tag) throw notFound("Tag not found");
  const { tags } = db.t;
  await db.tx((tx) => tx.delete(tags).where(and(eq(tags.id, tag.id), eq(tags.waitlistId, waitlistId))));
  return { success: true, message: `Tag "${tag.name}" deleted` };
}

/** Attaches tags by id or name; a name the waitlist does not have yet becomes a new gray tag. */
export async function tagSubscriber(db: Db, waitlist: Waitlist, idOrEmail: string, refs: string[], baseUrl: string, dispatch: Dispatch) {
  const subscriber = await findSubscriber(db, waitlist.id, idOrEmail);
  // every item is checked before the first write: a list whose last item is bad creates no tag (issue 44)
  refs.forEach((ref, i) => {
    if (!ref.trim()) throw badRequest(`tags[${i}] must not be blank`);
  });
  const found = await Promise.all(refs.map((ref) => findTag(db, waitlist.id, ref)));
  const missing = [...new Map(refs.filter((_, i) => !found[i]).map((ref) => [foldName(ref.trim()), ref] as const)).values()];
  if (missing.length) {
    const [{ n }] = await db.rows<{ n: number }>(sql`SELECT count(*) AS n FROM tags WHERE waitlist_id = ${waitlist.id}`);
    if (Number(n) + missing.length > TAGS_PER_WAITLIST) throw new AppError("conflict", `A waitlist can have at most ${TAGS_PER_WAITLIST} tags; this would make ${Number(n) + missing.length}`);
  }
  const tagIds: string[] = [];
  for (const [i, ref] of refs.entries()) tagIds.push((found[i] ?? (await createTagOrExisting(db, waitlist.id, ref))).id);
  // the subscriber.updated event is written with the change, and only if a tag was actually added
  const out = webhookEvent(nothing(), waitlist, "subscriber.updated", subscriber.id, sql`${db.d.prevChanged} > 0`);
  // `WHERE TRUE`: SQLite would read ON CONFLICT as a join constraint of the SELECT without it
  await writeAbout(db, waitlist, subscriber.id, baseUrl, [
    sql`INSERT INTO subscriber_tags (subscriber_id, tag_id)
      SELECT ${subscriber.id}, j.value FROM ${db.d.jsonTextArray(tagIds)} WHERE TRUE ON CONFLICT DO NOTHING`,
    ...out.statements,
  ]);
  dispatch(out.ids);
  return subscriber.id;
}

async function createTagOrExisting(db: Db, waitlistId: string, name: string) {
  try {
    return await createTag(db, waitlistId, { name });
  } catch (err) {
    const raced = await findTag(db, waitlistId, name);
    if (raced) return raced;
    throw err;
  }
}

export async function untagSubscriber(db: Db, waitlist: Waitlist, idOrEmail: string, tagIdOrName: string, baseUrl: string, dispatch: Dispatch) {
  const subscriber = await findSubscriber(db, waitlist.id, idOrEmail);
  const tag = await findTag(db, waitlist.id, tagIdOrName);
  if (!tag) throw notFound("Tag not found");
  const out = webhookEvent(nothing(), waitlist, "subscriber.updated", subscriber.id, sql`${db.d.prevChanged} > 0`);
  await writeAbout(db, waitlist, subscriber.id, baseUrl, [sql`DELETE FROM subscriber_tags WHERE subscriber_id = ${subscriber.id} AND tag_id = ${tag.id}`, ...out.statements]);
  dispatch(out.ids);
  return subscriber.id;
}
