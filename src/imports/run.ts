// Issue 47: running an import's staged rows: in signed-up order (then line), BATCH rows per transaction that also
// moves the import's cursor and counts, under the import's own lease (the job of any instance, or the CLI, runs it; one
// at a time). A crash rolls the batch back and the next run resumes at the cursor. A dry run runs each batch the same
// way and rolls it back, keeping only the counts. Then referrals to rows later in the file are linked, and it is done.
import { sql, type SQL } from "drizzle-orm";
import { clusteredCode, now, sortableToken, token } from "../clock";
import type { Db } from "../db/db";
import { foldName } from "../db/fold";
import type { Waitlist } from "../http/api";
import { AppError } from "../http/errors";
import { lenientOrigin } from "../analytics/sources";
import { email as emailOut, nothing, webhookEvent } from "../outbox/events";
import { isDisposable, isValidEmailSyntax } from "../subscribers/email";
import { lockLine } from "../subscribers/lock";
import { inBackground } from "../background";
import { paced } from "../http/foreground";
import { checkCustomFields } from "../subscribers/metadata";
import { NAME_MAX, PHONE_MAX } from "../subscribers/model";
import { checkAnswers, formFieldsOf } from "../waitlists/form-fields";
import { TAG_NAME_MAX, TAGS_PER_WAITLIST } from "../tags/service";
import { dropStaged } from "./stage";
import type { RowData } from "./mapping";

/**
 * Rows per transaction at most; each batch is sized to take about STEP_MS (foreground.ts `paced`): on the embedded
 * engine a batch holds the event loop, on PostgreSQL the waitlist's line lock, and a sign-up that comes meanwhile
 * waits for it.
 */
export const BATCH = 100;
const ERRORS_MAX = 1_000;
/** An import whose holder stopped (a crash) is taken over this long after its last batch. */
const LEASE_MS = 15_000;
/** This process, as the holder of the imports it runs. */
const HOLDER = token(16);

interface ImportRow {
  id: string;
  waitlist_id: string;
  status: string;
  mode: "skip" | "update";
  dry_run: boolean | number;
  notify: boolean | number;
  mapping: string;
  linked: boolean | number;
}

interface Staged {
  line: number;
  joined_at: number;
  email: string | null;
  data: string;
}

type Problem = { line: number; message: string };
type Counts = { created: number; updated: number; skipped: number; invalid: number };

/** Takes (or renews) the import's lease, with its waitlist; null when another holder runs it or it is over. */
async function lease(db: Db, id: string, holder: string): Promise<{ imp: ImportRow; w: Waitlist } | null> {
  const at = now();
  const [imp] = await db.rows<ImportRow>(sql`UPDATE imports SET holder = ${holder}, locked_until = ${at + LEASE_MS}, updated_at = ${at},
      status = CASE WHEN status = 'queued' THEN 'running' ELSE status END
    WHERE id = ${id} AND status IN ('queued', 'running') AND (locked_until IS NULL OR locked_until < ${at} OR holder = ${holder})
    RETURNING id, waitlist_id, status, mode, dry_run, notify, mapping, linked`);
  if (!imp) return null;
  const [w] = await db.select().from(db.t.waitlists).where(sql`id = ${imp.waitlist_id}`);
  return w ? { imp, w } : null;
}

class DryRun extends Error {
  constructor(
    readonly counts: Counts,
    readonly problems: Problem[],
    readonly last: Staged,
    readonly errors: string,
  ) {
    super("dry run");
  }
}

/** Whether the file gave points (then they are kept as given; otherwise a referral earns its points as live). */
const givesPoints = (imp: ImportRow) => Object.values(JSON.parse(imp.mapping) as Record<string, string>).includes("points");

/**
 * Runs the import for up to `ms`: "done" once it is finished, "more" when time ran out, "busy" when another holder
 * runs it (or it is over).
 */
export async function processImport(db: Db, importId: string, ms: number, holder = HOLDER): Promise<"done" | "more" | "busy"> {
  // one run at a time in this process (the upload's own start and the job would otherwise share the lease)
  if (running.has(importId)) return "busy";
  running.add(importId);
  try {
    // background work from its lease to its end (foreground.ts), not only its paced steps
    return await inBackground(() => runFor(db, importId, ms, holder));
  } finally {
    running.delete(importId);
  }
}
const running = new Set<string>();

async function runFor(db: Db, importId: string, ms: number, holder: string): Promise<"done" | "more" | "busy"> {
  const deadline = performance.now() + ms;
  const first = await lease(db, importId, holder);
  if (!first) return "busy";
  let held: typeof first | null = first;
  let leasedAt = performance.now();
  // batches give way to requests and are sized by time (foreground.ts); the lease is renewed well before it lapses
  const state = await paced(
    async (size) => {
      if (performance.now() - leasedAt > LEASE_MS / 3) {
        held = await lease(db, importId, holder);
        leasedAt = performance.now();
      }
      return held !== null && runBatch(db, held.w, held.imp, holder, size);
    },
    { first: 10, max: BATCH, deadline },
  );
  if (held === null) return "busy";
  if (state === "more") return "more";
  const { imp, w }: { imp: ImportRow; w: Waitlist } = held;
  if (!imp.dry_run && !imp.linked) await linkReferrals(db, w, imp, holder);
  await finish(db, imp.id, holder);
  return "done";
}

/**
 * One batch of up to `size` rows; false when no row was left. A batch of `skip` mode reads the list without holding
 * the waitlist's line and takes it with its writes (held then for their execution and the COMMIT only, not also for the
 * reads' round trip and the rows' checks on the event loop: on PostgreSQL a sign-up that comes meanwhile waits for
 * it); one whose writes then meet a change made meanwhile (an email or a referral code taken, a referrer erased) is
 * rolled back whole and runs again with the line held from its first read, as `update` mode's batches always do (they
 * merge the metadata they read).
 */
async function runBatch(db: Db, w: Waitlist, imp: ImportRow, holder: string, size: number): Promise<boolean> {
  const lockFirst = imp.mode === "update";
  try {
    return await runBatchOnce(db, w, imp, holder, size, lockFirst);
  } catch (err) {
    if (lockFirst) throw err;
    return runBatchOnce(db, w, imp, holder, size, true);
  }
}

async function runBatchOnce(db: Db, w: Waitlist, imp: ImportRow, holder: string, size: number, lockFirst: boolean): Promise<boolean> {
  let more = true;
  try {
    await db.tx(async (tx) => {
      // the cursor as committed, read under the import's row lock (two runs of one holder take turns, never one batch
      // twice), and the rows after it, sent together: the second statement runs once the first has the lock (one
      // connection runs its statements in the order sent), and reads the cursor as committed then. A row value, so
      // both engines seek the order index to the cursor (the OR form walked every row run before it); the first batch
      // starts before any time a file can give.
      const cursor = (column: string, before: number) => sql`(SELECT coalesce(${sql.raw(column)}, ${before}) FROM imports WHERE id = ${imp.id})`;
      const [[at], rows] = await Promise.all([
        tx.rows<{ errors: string }>(sql`SELECT errors FROM imports WHERE id = ${imp.id} AND holder = ${holder}${tx.d.forUpdate}`),
        tx.rows<Staged>(
          sql`SELECT line, joined_at, email, data FROM import_rows WHERE import_id = ${imp.id}
            AND (joined_at, line) > (${cursor("cursor_at", Number.MIN_SAFE_INTEGER)}, ${cursor("cursor_line", 0)}) ORDER BY joined_at, line LIMIT ${size}`,
        ),
      ]);
      if (!at) throw new Error(`import ${imp.id}: its lease was lost; the batch is run by its holder`);
      if (rows.length === 0) {
        more = false;
        return;
      }
      const { counts, problems, writes, inserts } = await runRows(tx, w, imp, rows, lockFirst);
      const last = rows[rows.length - 1]!;
      // a dry run's batch is rolled back: only what it counted is kept
      if (imp.dry_run) throw new DryRun(counts, problems, last, at.errors);
      // the rows' writes, the counts and the cursor in one go (on PostgreSQL one round trip, under the line's lock)
      const done = await tx.write([...writes, progress(imp, holder, at.errors, counts, problems, last)]);
      // a sign-up's INSERT leaves an email taken meanwhile alone (ON CONFLICT DO NOTHING): the batch is rolled back
      if (inserts.some((i) => done[i]!.length === 0)) throw new Error(`import ${imp.id}: an email of the batch was taken since it was read`);
      // redone from the cursor if a crash loses it: its commit need not wait for the disk (db.ts TxOptions)
    }, { durable: false });
  } catch (err) {
    if (!(err instanceof DryRun)) throw err;
    await db.exec(progress(imp, holder, err.errors, err.counts, err.problems, err.last));
  }
  return more;
}

/** The first ERRORS_MAX problems: those kept, then the new ones. */
function mergeErrors(errors: string, problems: Problem[]): string {
  const kept = JSON.parse(errors) as Problem[];
  return kept.length >= ERRORS_MAX ? errors : JSON.stringify([...kept, ...problems].slice(0, ERRORS_MAX));
}

/** The batch's counts, problems and cursor; the lease guards it (the batch read the cursor under the import's row lock). */
function progress(imp: ImportRow, holder: string, errors: string, counts: Counts, problems: Problem[], last: Staged): SQL {
  const merged = problems.length ? mergeErrors(errors, problems) : errors;
  return sql`UPDATE imports SET created = created + ${counts.created}, updated = updated + ${counts.updated},
      skipped = skipped + ${counts.skipped}, invalid = invalid + ${counts.invalid}, errors = ${merged},
      cursor_at = ${last.joined_at}, cursor_line = ${last.line}, updated_at = ${now()}
    WHERE id = ${imp.id} AND holder = ${holder}`;
}

/** Tags by folded name for the batch: the waitlist's, and the new ones made under the cap (null past it). */
async function tagIds(tx: Db, w: Waitlist, names: string[]): Promise<Map<string, string | null>> {
  const wanted = [...new Map(names.map((n) => [foldName(n), n] as const)).entries()];
  const found = new Map<string, string | null>();
  if (!wanted.length) return found;
  const have = await tx.rows<{ id: string; name_key: string }>(sql`SELECT id, name_key FROM tags WHERE waitlist_id = ${w.id}`);
  for (const t of have) found.set(t.name_key, t.id);
  let count = have.length;
  for (const [key, name] of wanted) {
    if (found.has(key)) continue;
    if (count >= TAGS_PER_WAITLIST) {
      found.set(key, null);
      continue;
    }
    const id = token(16);
    await tx.exec(sql`INSERT INTO tags (id, waitlist_id, name, name_key, color, created_at) VALUES (${id}, ${w.id}, ${name}, ${key}, 'gray', ${now()})`);
    found.set(key, id);
    count++;
  }
  return found;
}

/** A subscriber as a row's referrer is named: its id and referral code. */
type Ref = { id: string; code: string };

/**
 * What the batch needs to know of the list before it runs, read in a few statements for all its rows (a statement a
 * row was most of an import's time): the emails already there, the referral codes taken, and the referrers named by
 * code or by id in the file. Rows created by this batch are added as it goes.
 */
async function batchContext(tx: Db, w: Waitlist, imp: ImportRow, rows: RowData[]) {
  const list = (values: (string | undefined)[]) => [...new Set(values.filter((v): v is string => !!v))];
  const emails = list(rows.map((r) => r.email));
  const codes = list(rows.map((r) => r.referral_code));
  const refCodes = list(rows.map((r) => r.referred_by));
  const refIds = list(rows.map((r) => r.referrer_id));
  const any = (values: string[]) => sql.join(values.map((v) => sql`${v}`), sql`, `);
  const [existing, taken, byCode, byFileCode, byId] = await Promise.all([
    emails.length ? tx.rows<{ id: string; email: string; metadata: string }>(sql`SELECT id, email, metadata FROM subscribers WHERE waitlist_id = ${w.id} AND email IN (${any(emails)})`) : [],
    codes.length ? tx.rows<{ code: string }>(sql`SELECT referral_code AS code FROM subscribers WHERE referral_code IN (${any(codes)})`) : [],
    refCodes.length ? tx.rows<Ref>(sql`SELECT id, referral_code AS code FROM subscribers WHERE waitlist_id = ${w.id} AND referral_code IN (${any(refCodes)})`) : [],
    // a row of the file whose code was taken elsewhere (it got a new one) is still named by the code it had
    refCodes.length
      ? tx.rows<Ref & { ext: string }>(sql`SELECT s.id, s.referral_code AS code, i.ext_code AS ext FROM import_rows i JOIN subscribers s ON s.id = i.subscriber_id
          WHERE i.import_id = ${imp.id} AND i.ext_code IN (${any(refCodes)})`)
      : [],
    refIds.length
      ? tx.rows<Ref & { ext: string }>(sql`SELECT s.id, s.referral_code AS code, i.ext_id AS ext FROM import_rows i JOIN subscribers s ON s.id = i.subscriber_id
          WHERE i.import_id = ${imp.id} AND i.ext_id IN (${any(refIds)})`)
      : [],
  ]);
  return {
    existing: new Map(existing.map((e) => [e.email, e])),
    taken: new Set(taken.map((t) => t.code)),
    byCode: new Map<string, Ref>([...byFileCode.map((r) => [r.ext, r] as const), ...byCode.map((r) => [r.code, r] as const)]),
    byId: new Map<string, Ref>(byId.map((r) => [r.ext, r])),
  };
}

/** The referrer a row names, among the list as it is now: by its referral code (here, or in the file), or by its id in the file. */
async function referrerOf(tx: Db, w: Waitlist, imp: ImportRow, data: RowData): Promise<Ref | null> {
  const ctx = await batchContext(tx, w, imp, [data]);
  return (data.referred_by && ctx.byCode.get(data.referred_by)) || (data.referrer_id && ctx.byId.get(data.referrer_id)) || null;
}

/** A referral as the import makes it: credited, `points` to the referrer (0 when the file gave points). */
function credit(w: Waitlist, refereeId: string, referrerId: string, points: number, at: number): SQL[] {
  return [
    sql`INSERT INTO referrals (id, waitlist_id, referrer_id, referee_id, credited, reason, points, created_at)
      VALUES (${sortableToken(20)}, ${w.id}, ${referrerId}, ${refereeId}, TRUE, NULL, ${points}, ${at})`,
    sql`UPDATE subscribers SET points = points + ${points}, referral_count = referral_count + 1, updated_at = ${at} WHERE id = ${referrerId}`,
  ];
}

/** What the batch's rows come to: counts, problems, and the writes (in the rows' order) that make them so. */
async function runRows(
  tx: Db,
  w: Waitlist,
  imp: ImportRow,
  rows: Staged[],
  lockFirst: boolean,
): Promise<{ counts: Counts; problems: Problem[]; writes: SQL[]; inserts: number[] }> {
  const counts: Counts = { created: 0, updated: 0, skipped: 0, invalid: 0 };
  const problems: Problem[] = [];
  const invalid = (line: number, message: string) => {
    counts.invalid++;
    problems.push({ line, message });
  };
  const questions = formFieldsOf(w).map((q) => ({ ...q, required: false }));
  const parsed = rows.map((r) => ({ row: r, data: JSON.parse(r.data) as RowData }));
  const usable = parsed.filter((p) => !p.data.error).map((p) => p.data);
  // the line's lock before the writes, as every write to it takes it (lock.ts): first (the reads go out behind it
  // without waiting for it: a connection runs its statements in the order sent), or at the head of the writes (below)
  const [, tags, known] = await Promise.all([
    lockFirst ? tx.rows(lockLine(tx, w.id)) : null,
    tagIds(tx, w, usable.flatMap((d) => d.tags ?? [])),
    batchContext(tx, w, imp, usable),
  ]);
  // a dry run writes nothing: an email earlier in the file, in an earlier batch, would have been there
  const earlier = imp.dry_run && usable.length
    ? new Set(
        (
          await tx.rows<{ email: string }>(sql`SELECT DISTINCT email FROM import_rows WHERE import_id = ${imp.id}
            AND (joined_at < ${rows[0]!.joined_at} OR (joined_at = ${rows[0]!.joined_at} AND line < ${rows[0]!.line}))
            AND email IN (${sql.join([...new Set(usable.map((d) => d.email!))].map((e) => sql`${e}`), sql`, `)})`)
        ).map((r) => r.email),
      )
    : new Set<string>();
  const referralPoints = givesPoints(imp) ? 0 : w.referralEnabled ? w.referralPoints : 0;
  const signUpPoints = w.referralEnabled ? w.signupPoints : 0;
  const at = now();
  // the line's lock at the head of the writes when the reads went without it
  const writes: SQL[] = lockFirst ? [] : [lockLine(tx, w.id)];
  /** Where each new subscriber's INSERT is among the writes. */
  const inserts: number[] = [];
  const out = nothing();
  for (const { row, data } of parsed) {
    if (data.error) {
      invalid(row.line, data.error);
      continue;
    }
    const email = data.email!;
    if (!isValidEmailSyntax(email)) {
      invalid(row.line, `email: "${email}" is not a valid email address`);
      continue;
    }
    if (w.validateEmails && isDisposable(email)) {
      invalid(row.line, `email: ${email} uses a disposable email domain`);
      continue;
    }
    if ((data.name?.length ?? 0) > NAME_MAX || (data.phone?.length ?? 0) > PHONE_MAX) {
      invalid(row.line, `${(data.name?.length ?? 0) > NAME_MAX ? "name" : "phone"} is longer than ${NAME_MAX} characters`);
      continue;
    }
    let answers: string;
    let metadata: string;
    try {
      answers = JSON.stringify(checkAnswers(questions, data.answers ?? {}, true));
      metadata = checkCustomFields(data.metadata ?? {});
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      invalid(row.line, err.message);
      continue;
    }
    const existing = known.existing.get(email);
    const rowTags = (data.tags ?? []).filter((t) => t.length <= TAG_NAME_MAX).map((t) => tags.get(foldName(t))).filter((id): id is string => !!id);
    if ((data.tags ?? []).some((t) => t.length > TAG_NAME_MAX || !tags.get(foldName(t)))) {
      problems.push({ line: row.line, message: `tags: some were not added (at most ${TAG_NAME_MAX} characters a name, ${TAGS_PER_WAITLIST} tags a waitlist)` });
    }
    const tagging = (id: string) =>
      rowTags.map((tag) => sql`INSERT INTO subscriber_tags (subscriber_id, tag_id) SELECT ${id}, ${tag} WHERE TRUE ON CONFLICT DO NOTHING`);
    const mark = (id: string, pending: string | null = null) =>
      sql`UPDATE import_rows SET subscriber_id = ${id}, referrer_pending = ${pending} WHERE import_id = ${imp.id} AND line = ${row.line}`;
    if (existing || earlier.has(email)) {
      if (imp.mode === "skip") {
        counts.skipped++;
        if (existing) writes.push(mark(existing.id));
        continue;
      }
      counts.updated++;
      if (!existing) continue;
      const merged = checkCustomFields({ ...(JSON.parse(existing.metadata) as Record<string, unknown>), ...(JSON.parse(metadata) as Record<string, unknown>) });
      existing.metadata = merged;
      writes.push(
        sql`UPDATE subscribers SET metadata = ${merged}, updated_at = ${at}
          ${data.name !== undefined ? sql`, name = ${data.name}, name_key = ${foldName(data.name)}` : sql``}
          ${data.phone !== undefined ? sql`, phone = ${data.phone}` : sql``}
          WHERE id = ${existing.id}`,
        ...tagging(existing.id),
        mark(existing.id),
      );
      continue;
    }
    counts.created++;
    const id = sortableToken(20);
    const given = data.referral_code && /^[A-Za-z0-9_-]{4,64}$/.test(data.referral_code) ? data.referral_code : null;
    const code = given && !known.taken.has(given) ? given : clusteredCode(8);
    known.taken.add(code);
    const referrer = (data.referred_by && known.byCode.get(data.referred_by)) || (data.referrer_id && known.byId.get(data.referrer_id)) || null;
    const pending = !referrer && (data.referred_by || data.referrer_id) ? (data.referrer_id ? `id:${data.referrer_id}` : `code:${data.referred_by}`) : null;
    // what later rows of this batch find: this one, by its email, its codes and its id in the file
    const self: Ref = { id, code };
    known.existing.set(email, { id, email, metadata });
    for (const c of [code, given]) if (c) known.byCode.set(c, self);
    if (data.id) known.byId.set(data.id, self);
    const joinedAt = data.at ?? row.joined_at;
    if (imp.notify) {
      webhookEvent(out, w, "subscriber.created", id);
      if (w.welcomeEnabled) emailOut(out, w, "welcome", id);
    }
    inserts.push(writes.length);
    writes.push(
      tx.insertSubscriber({
        id,
        waitlistId: w.id,
        email,
        name: data.name ?? null,
        phone: data.phone ?? null,
        status: "confirmed",
        deliverability: "unknown",
        points: data.points ?? signUpPoints,
        referralCode: code,
        signUpToken: sortableToken(24),
        confirmToken: null,
        referrerId: referrer?.id ?? null,
        metadata,
        answers,
        referringDomain: null,
        origin: lenientOrigin((f) => data.origin?.[f]),
        ip: null,
        fingerprint: null,
        fraudChecks: false,
        country: null,
        city: null,
        timezone: null,
        joinedWith: "import",
        joinedAt,
        confirmedAt: joinedAt,
      }),
      ...(referrer ? credit(w, id, referrer.id, referralPoints, at) : []),
      ...tagging(id),
      ...(data.unsubscribed_at !== undefined || data.email_status
        ? [sql`UPDATE subscribers SET unsubscribed_at = ${data.unsubscribed_at ?? null}, email_status = ${data.email_status ?? "ok"} WHERE id = ${id}`]
        : []),
      mark(id, pending),
    );
  }
  return { counts, problems, writes: [...writes, ...out.statements], inserts };
}

/** Rows whose referrer came later in the file: linked now that every row is in (a referrer still missing is a problem). */
async function linkReferrals(db: Db, w: Waitlist, imp: ImportRow, holder: string) {
  const points = givesPoints(imp) ? 0 : w.referralEnabled ? w.referralPoints : 0;
  // the last line seen: each step seeks past it by the primary key (from the first line, a step walked every row
  // linked before it, 9-14 ms a step at 30,000 rows, on the event loop)
  let after = 0;
  await paced(
    async (size) => {
      const waiting = await db.rows<{ line: number; subscriber_id: string; referrer_pending: string }>(
        sql`SELECT line, subscriber_id, referrer_pending FROM import_rows WHERE import_id = ${imp.id} AND line > ${after} AND referrer_pending IS NOT NULL ORDER BY line LIMIT ${size}`,
      );
      if (waiting.length === 0) return false;
      after = waiting[waiting.length - 1].line;
      await db.tx(async (tx) => {
        await tx.rows(lockLine(tx, w.id));
        const problems: Problem[] = [];
        for (const r of waiting) {
          const [kind, ...rest] = r.referrer_pending.split(":");
          const ref = rest.join(":");
          const referrer = await referrerOf(tx, w, imp, kind === "id" ? { referrer_id: ref } : { referred_by: ref });
          if (referrer && referrer.id !== r.subscriber_id) {
            await tx.write([
              sql`UPDATE subscribers SET referrer_id = ${referrer.id}, referred_by = ${referrer.code} WHERE id = ${r.subscriber_id}`,
              ...credit(w, r.subscriber_id, referrer.id, points, now()),
            ]);
          } else problems.push({ line: r.line, message: `referrer ${kind === "id" ? "id" : "code"} "${ref}" is neither in the file nor on the list: imported without a referrer` });
          await tx.exec(sql`UPDATE import_rows SET referrer_pending = NULL WHERE import_id = ${imp.id} AND line = ${r.line}`);
        }
        if (problems.length) {
          const [{ errors }] = await tx.rows<{ errors: string }>(sql`SELECT errors FROM imports WHERE id = ${imp.id}`);
          await tx.exec(sql`UPDATE imports SET errors = ${mergeErrors(errors, problems)} WHERE id = ${imp.id} AND holder = ${holder}`);
        }
        // its rows stay pending until it commits: a crash that loses it has them linked again
      }, { durable: false });
      return true;
    },
    { first: 10, max: BATCH },
  );
  await db.exec(sql`UPDATE imports SET linked = TRUE WHERE id = ${imp.id}`);
}

async function finish(db: Db, importId: string, holder: string) {
  const at = now();
  await db.exec(sql`UPDATE imports SET status = 'done', finished_at = ${at}, updated_at = ${at}, locked_until = NULL WHERE id = ${importId} AND holder = ${holder}`);
  await dropStaged(db, importId);
}

/** Marks an import failed (a problem that running it again would meet again), keeping what it counted. */
export async function failImport(db: Db, importId: string, message: string) {
  const at = now();
  await db.exec(sql`UPDATE imports SET status = 'failed', failure = ${message}, finished_at = ${at}, updated_at = ${at}, locked_until = NULL WHERE id = ${importId}`);
  await dropStaged(db, importId);
}

const failures = new Map<string, number>();

/** The job: runs queued and running imports whose lease is free, for up to `ms`; one that fails 3 times running is failed. */
export async function runImports(db: Db, ms: number): Promise<void> {
  const end = now() + ms;
  const due = await db.rows<{ id: string }>(
    sql`SELECT id FROM imports WHERE status IN ('queued', 'running') AND (locked_until IS NULL OR locked_until < ${now()} OR holder = ${HOLDER}) ORDER BY created_at LIMIT 5`,
  );
  for (const { id } of due) {
    if (now() >= end) return;
    try {
      await processImport(db, id, end - now());
      failures.delete(id);
    } catch (err) {
      const n = (failures.get(id) ?? 0) + 1;
      failures.set(id, n);
      if (n >= 3) {
        failures.delete(id);
        await failImport(db, id, err instanceof Error ? err.message : String(err));
      }
      throw err;
    }
  }
}
