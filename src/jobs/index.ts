// Cron jobs (croner). Each takes a lease row first, so one instance runs each job at a time (DESIGN §6).
import { Cron } from "croner";
import { sql } from "drizzle-orm";
import { now, token } from "../clock";
import type { Db } from "../db/db";
import type { Logger } from "../log";
import { pruneRateLimitsQuery } from "../http/rate-limit";
import { pruneViewDedupe } from "../analytics/service";
import { pruneSent } from "../outbox/store";
import { prunePreviews } from "../landing/preview";
import type { Dispatcher } from "../outbox/dispatcher";
import { pruneCaptchaSolutions } from "../forms/captcha";
import { pruneConfirmationSends } from "../subscribers/confirmation-caps";
import { jobRuns } from "../http/metrics";
import { runBroadcasts } from "../broadcasts/sender";
import { runImports } from "../imports/run";
import { pruneOrphans } from "../imports/stage";
import { pruneDataRequests, pruneRetention } from "../subscribers/personal-data";

export interface JobContext {
  db: Db;
  dispatcher: Dispatcher;
  /** Issue 45: broadcast emails a minute (MAIL_RATE_PER_MINUTE). */
  mailRatePerMinute: number;
}

interface Job {
  name: string;
  schedule: string;
  /** How long the lease is held; shorter than the interval between runs. */
  leaseMs: number;
  run: (ctx: JobContext) => Promise<unknown>;
}

const HOUR = 3_600_000;

export const JOBS: Job[] = [
  // DESIGN §4: the outbox retry job runs every 5 s
  { name: "outbox-retry", schedule: "*/5 * * * * *", leaseMs: 4_000, run: ({ dispatcher }) => dispatcher.catchUp(3_000) },
  // issue 45: broadcasts start, queue their recipients a minute ahead, and finish
  { name: "broadcasts", schedule: "*/5 * * * * *", leaseMs: 4_000, run: ({ db, mailRatePerMinute }) => runBroadcasts(db, mailRatePerMinute, 3_000) },
  // rate-limit windows are kept for an hour, delivered outbox rows 30 days (DESIGN §1)
  // issue 47: imports run a batch at a time, each instance taking over one whose holder stopped
  { name: "imports", schedule: "*/2 * * * * *", leaseMs: 1_900, run: ({ db }) => runImports(db, 1_500) },
  // issue 47: expired data links; rejected and joined subscribers past their waitlist's retention_days, daily
  { name: "prune-data-requests", schedule: "13 */10 * * * *", leaseMs: 55_000, run: ({ db }) => pruneDataRequests(db) },
  { name: "retention", schedule: "0 17 4 * * *", leaseMs: 55_000, run: ({ db, dispatcher }) => pruneRetention(db, (ids) => dispatcher.dispatch(ids)) },
  { name: "prune-import-rows", schedule: "53 */10 * * * *", leaseMs: 55_000, run: ({ db }) => pruneOrphans(db) },
  { name: "prune-rate-limits", schedule: "17 * * * * *", leaseMs: 55_000, run: ({ db }) => db.exec(pruneRateLimitsQuery(now() - HOUR)) },
  { name: "prune-outbox", schedule: "0 23 * * * *", leaseMs: 55_000, run: ({ db }) => pruneSent(db) },
  // view dedupe rows live 24 h from the first counted view (DESIGN §4)
  { name: "prune-view-dedupe", schedule: "37 */5 * * * *", leaseMs: 55_000, run: ({ db }) => pruneViewDedupe(db) },
  // dashboard previews live 10 minutes
  { name: "prune-previews", schedule: "47 */10 * * * *", leaseMs: 55_000, run: ({ db }) => prunePreviews(db) },
  // issue 16: spent captcha solutions matter only until their challenge expires; confirmation sends for a day
  { name: "prune-captcha-solutions", schedule: "7 */5 * * * *", leaseMs: 55_000, run: ({ db }) => pruneCaptchaSolutions(db) },
  { name: "prune-confirmation-sends", schedule: "27 */10 * * * *", leaseMs: 55_000, run: ({ db }) => pruneConfirmationSends(db) },
  // nightly: give the pages the pruning jobs freed back to the disk and truncate the WAL (issue 17)
  { name: "compact-database", schedule: "0 41 3 * * *", leaseMs: 55_000, run: ({ db }) => db.compact() },
];

/** True when this instance holds (or just took) the job's lease. */
export async function takeLease(db: Db, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const at = now();
  // portable as it is (DIALECTS.md: same on both engines); the upsert's WHERE decides on the row as it is locked
  const rows = await db.rows(sql`INSERT INTO job_leases (name, holder, expires_at) VALUES (${name}, ${holder}, ${at + ttlMs})
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE job_leases.expires_at < ${at} OR job_leases.holder = excluded.holder
    RETURNING holder`);
  return rows.length === 1;
}

export function startJobs(ctx: JobContext, log: Logger, jobs: Job[] = JOBS): { stop: () => Promise<void> } {
  const { db } = ctx;
  const holder = token(16);
  const running = new Set<Promise<void>>();
  const crons = jobs.map(
    (job) =>
      new Cron(job.schedule, { protect: true }, () => {
        const p = (async () => {
          try {
            if (await takeLease(db, job.name, holder, job.leaseMs)) {
              await job.run(ctx);
              jobRuns.inc({ job: job.name, outcome: "ok" });
            }
          } catch (err) {
            jobRuns.inc({ job: job.name, outcome: "error" });
            log.error("job failed", { job: job.name, error: err instanceof Error ? err.message : String(err) });
          }
        })();
        running.add(p);
        p.finally(() => running.delete(p));
      }),
  );
  return {
    stop: async () => {
      for (const c of crons) c.stop();
      await Promise.all(running);
    },
  };
}
