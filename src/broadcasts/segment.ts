// Who a broadcast goes to (issue 45): the segment as SQL on the subscribers row aliased `s`. Always confirmed, never
// rejected, unsubscribed, bounced or complained; then the segment's members, ANDed.
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/db";
import { foldName } from "../db/fold";
import { badRequest } from "../http/errors";
import { keyAtRank } from "../subscribers/rank";
import type { SegmentInput } from "./model";

/** The waitlist's tags named by `refs` (ids or names), in order; undefined where there is none. */
async function tagIds(db: Db, waitlistId: string, refs: string[]): Promise<(string | undefined)[]> {
  const all = await db.rows<{ id: string; name_key: string }>(sql`SELECT id, name_key FROM tags WHERE waitlist_id = ${waitlistId}`);
  return refs.map((ref) => all.find((t) => t.id === ref.trim() || t.name_key === foldName(ref.trim()))?.id);
}

/** A draft's segment names tags the waitlist has, and a time window that is not empty. */
export async function checkSegment(db: Db, waitlistId: string, segment: SegmentInput): Promise<void> {
  for (const field of ["tags_any", "tags_all"] as const) {
    const refs = segment[field] ?? [];
    const ids = await tagIds(db, waitlistId, refs);
    const missing = ids.findIndex((id) => id === undefined);
    if (missing !== -1) throw badRequest(`Unknown tag "${refs[missing]}" in segment.${field}[${missing}]: this waitlist has no such tag`);
  }
  if (segment.signed_up_after !== undefined && segment.signed_up_before !== undefined && segment.signed_up_after >= segment.signed_up_before) {
    throw badRequest("segment.signed_up_before must be later than segment.signed_up_after");
  }
}

/**
 * The segment now: tags are looked up again (one deleted since matches nobody in tags_all and is dropped from
 * tags_any), and position_lte becomes the rank key of that position (the line's order is points, then confirmation).
 */
export async function segmentWhere(db: Db, waitlistId: string, segment: SegmentInput): Promise<SQL> {
  const statuses = segment.status ?? ["waiting", "invited", "joined"];
  const where: SQL[] = [
    sql`s.waitlist_id = ${waitlistId}`,
    sql`s.status = 'confirmed'`,
    sql`s.access IN ${statuses}`,
    sql`s.unsubscribed_at IS NULL`,
    sql`s.email_status = 'ok'`,
  ];
  const has = (ids: string[]) => sql`EXISTS (SELECT 1 FROM subscriber_tags st WHERE st.subscriber_id = s.id AND st.tag_id IN ${ids})`;
  if (segment.tags_any) {
    const ids = (await tagIds(db, waitlistId, segment.tags_any)).filter((id) => id !== undefined);
    where.push(ids.length ? has(ids) : sql`1 = 0`);
  }
  if (segment.tags_all) {
    for (const id of await tagIds(db, waitlistId, segment.tags_all)) where.push(id ? has([id]) : sql`1 = 0`);
  }
  if (segment.min_referrals !== undefined) where.push(sql`s.referral_count >= ${segment.min_referrals}`);
  if (segment.signed_up_after !== undefined) where.push(sql`s.joined_at > ${segment.signed_up_after}`);
  if (segment.signed_up_before !== undefined) where.push(sql`s.joined_at < ${segment.signed_up_before}`);
  if (segment.position_lte !== undefined) {
    const last = await keyAtRank(db, waitlistId, segment.position_lte - 1);
    where.push(
      last ? sql`s.ranked_seq IS NOT NULL AND (s.points > ${last.points} OR (s.points = ${last.points} AND s.ranked_seq <= ${last.seq}))` : sql`s.ranked_seq IS NOT NULL`,
    );
  }
  return sql.join(where, sql` AND `);
}
