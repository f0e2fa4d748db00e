// Seeds a database (embedded file or PostgreSQL: portable SQL through the Store) with one account, one waitlist
// and N confirmed subscribers (the triggers rank and count them as they go): the state a waitlist reaches after
// N sign-ups, written in seconds.
import { sql } from "drizzle-orm";
import { sha256Hex } from "../src/clock";
import { openDatabase } from "../src/db/open";

export const BENCH_KEY = "wl_acct_benchbenchbenchbenchbenchbenchbenchbench";
export const WAITLIST_KEY = "benchwaitlist";
/** A second waitlist of the same account, empty: sign-up loads warm up on it (lib.ts warmUp). */
export const WARM_WAITLIST_KEY = "warmwaitlist";

export async function seed(url: string, n: number): Promise<void> {
  // seeding a million rows runs statements far longer than a request may (the service cancels those at 30 s)
  const db = await openDatabase({ url, poolSize: 2, statementTimeoutMs: 30 * 60_000 });
  await db.write([
    sql`INSERT INTO accounts (id, username, plan, ai_credits, created_at) VALUES ('acct_bench', 'bench', 'business', 10, 0)`,
    sql`INSERT INTO api_keys (id, account_id, name, hash, created_at) VALUES ('key_bench', 'acct_bench', 'bench', ${sha256Hex(BENCH_KEY)}, 0)`,
    sql`INSERT INTO waitlists (id, account_id, key, slug, name, name_key, referral_enabled, welcome_subject, welcome_body, confirmation_subject,
      confirmation_body, signing_secret, created_at, updated_at)
      VALUES ('wl_bench', 'acct_bench', ${WAITLIST_KEY}, 'bench', 'Bench', 'bench', TRUE, 's', 'b', 's', 'b', 'x', 0, 0),
        ('wl_warm', 'acct_bench', ${WARM_WAITLIST_KEY}, 'warm', 'Warm', 'warm', TRUE, 's', 'b', 's', 'b', 'x', 0, 0)`,
  ]);
  // points: most at the sign-up 50, a tail with referrals, like a real referral program
  // PostgreSQL: every row's trigger updates the one waitlist row, and a statement's own updates of one row pile
  // up as versions it walks again (quadratic in the statement's rows: 100,000 at once ran for over 12 minutes)
  const chunk = db.d.name === "pg" ? 1_000 : 100_000;
  for (let from = 1; from <= n; from += chunk) {
    const to = Math.min(n, from + chunk - 1);
    await db.exec(sql`WITH RECURSIVE k(i) AS (SELECT CAST(${from} AS INTEGER) UNION ALL SELECT i + 1 FROM k WHERE i < CAST(${to} AS INTEGER))
      INSERT INTO subscribers (id, waitlist_id, email, status, deliverability, points, seq, referral_code, sign_up_token, metadata,
        joined_with, joined_at, confirmed_at, updated_at)
      SELECT 'sub' || i, 'wl_bench', 'user' || i || '@example.com', 'confirmed', 'unknown',
        CASE WHEN i % 10 = 0 THEN 50 + 30 * (1 + i % 7) ELSE 50 END, i, 'c' || i, 't' || i, '{}', 'api', i, i, i FROM k`);
  }
  await db.close();
}
