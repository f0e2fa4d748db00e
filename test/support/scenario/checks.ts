// The counters scenario's recount: rows first (they also give ids, codes, tokens and the order of concurrent
// confirmations), then every counter and position the API shows, then the counter tables the API does not show, each
// compared with the model.
import { sql } from "drizzle-orm";
import { lineOf, type Sub, type Wl } from "./model";
import { enc, tagNames } from "./operations";
import { bad, db, flush, key, looks, note, noteEach, noteOrder, s, step, wls } from "./run";
import { parseCsv } from "../csv";

const lookPick = <T>(xs: T[]): T | undefined => (xs.length ? xs[Math.floor(looks() * xs.length)] : undefined);

interface Row {
  id: string; email: string; status: string; access: string; points: number; seq: number | null; referral_count: number; referral_code: string;
  referred_by: string | null; referrer_id: string | null; sign_up_token: string; confirm_token: string | null; invite_token: string | null;
  final_position: number | null; unsubscribed_at: number | null; ip_address: string | null; fingerprint: string | null;
}

async function syncFromRows(w: Wl) {
  const rows = await db.rows<Row>(sql`SELECT id, email, status, access, points, seq, referral_count, referral_code, referred_by, referrer_id, sign_up_token,
    confirm_token, invite_token, final_position, unsubscribed_at, ip_address, fingerprint FROM subscribers WHERE waitlist_id = ${w.id}`);
  const byEmail = new Map(rows.map((r) => [r.email, r]));
  for (const r of rows) if (!w.subs.has(r.email)) bad.push(`${w.label} ${r.email} row: a row the model does not have (status ${r.status})`);
  const newSeqs: number[] = [];
  for (const x of w.subs.values()) {
    const r = byEmail.get(x.email);
    const where = `${w.label} ${x.email} row`;
    if (!r) {
      bad.push(`${where}: missing`);
      continue;
    }
    if (x.id === "") [x.id, x.code, x.signUpToken] = [r.id, r.referral_code, r.sign_up_token];
    [x.confirmToken, x.inviteToken] = [r.confirm_token, r.invite_token];
    if (x.seqUnknown) {
      x.seqUnknown = false;
      x.seq = r.seq === null ? null : Number(r.seq);
      // spec: order of confirmation; the order among concurrent confirmations is the server's, but after every earlier one
      if (x.seq === null || !(x.seq > w.maxSeq)) bad.push(`${where} seq: a new confirmation must come after every earlier one (> ${w.maxSeq}), got ${x.seq}`);
      else newSeqs.push(x.seq);
    } else note(where, "seq", x.seq, r.seq === null ? null : Number(r.seq));
  }
  if (new Set(newSeqs).size !== newSeqs.length) bad.push(`${w.label} seq: concurrent confirmations share a number: ${newSeqs.join(",")}`);
  w.maxSeq = Math.max(w.maxSeq, ...newSeqs);
  for (const x of w.subs.values()) {
    const r = byEmail.get(x.email);
    if (!r) continue;
    const where = `${w.label} ${x.email} row`;
    note(where, "status, access", [x.status, x.access], [r.status, r.access]);
    note(where, "points", x.points, Number(r.points));
    note(where, "referral_count", x.referralCount, Number(r.referral_count));
    note(where, "referred_by", x.referredBy, r.referred_by);
    note(where, "referrer_id", x.referrer ? (w.subs.get(x.referrer)?.id ?? "?") : null, r.referrer_id);
    note(where, "final_position", x.finalPosition, r.final_position === null ? null : Number(r.final_position));
    note(where, "unsubscribed", x.unsubscribed, r.unsubscribed_at !== null);
    note(where, "ip_address, fingerprint", [x.ip, x.fingerprint], [r.ip_address, r.fingerprint]);
  }
}

const emailOf = (w: Wl) => {
  const byId = new Map([...w.subs.values()].map((x) => [x.id, x.email]));
  return (id: string) => byId.get(id) ?? `?${id}`;
};

async function checkTables(w: Wl) {
  const [referrals, ranks, [counters], [daily], rewards] = await Promise.all([
    db.rows<any>(sql`SELECT referee_id, referrer_id, credited, reason, points FROM referrals WHERE waitlist_id = ${w.id}`),
    db.rows<any>(sql`SELECT level, points, bucket, count FROM rank_counts WHERE waitlist_id = ${w.id} AND count <> 0`),
    db.rows<any>(sql`SELECT subscribers_count, views_count, last_seq FROM waitlists WHERE id = ${w.id}`),
    db.rows<any>(sql`SELECT coalesce(sum(sign_ups), 0) AS sign_ups, coalesce(sum(views), 0) AS views FROM daily_stats WHERE waitlist_id = ${w.id}`),
    db.rows<any>(sql`SELECT subscriber_id, referrals FROM milestone_rewards WHERE waitlist_id = ${w.id}`),
  ]);
  const email = emailOf(w);
  const subs = [...w.subs.values()];
  noteEach((k) => `${w.label} ${k} referrals row`, "[referrer, credited, reason, points]",
    new Map(subs.filter((x) => x.referral).map((x) => [x.email, [x.referral!.referrer, x.referral!.credited, x.referral!.reason, x.referral!.points]])),
    new Map(referrals.map((r) => [email(r.referee_id), [email(r.referrer_id), Boolean(r.credited), r.reason, Number(r.points)]])), "none");
  // docs/decisions.md, Position structure: one counter per points value (level 63), per 65536 and per 256 confirmation numbers
  const expected = new Map<string, number>();
  for (const x of lineOf(w))
    for (const k of [`63|${x.points}|0`, `16|${x.points}|${x.seq! >> 16}`, `8|${x.points}|${x.seq! >> 8}`]) expected.set(k, (expected.get(k) ?? 0) + 1);
  noteEach((k) => `${w.label} rank_counts level|points|bucket ${k}`, "count", expected, new Map(ranks.map((r) => [`${r.level}|${r.points}|${r.bucket}`, Number(r.count)])), 0);
  const confirmed = subs.filter((x) => x.status === "confirmed").length;
  note(`${w.label} waitlists row`, "subscribers_count, views_count, last_seq", [confirmed, w.visitors.size, w.maxSeq],
    [Number(counters.subscribers_count), Number(counters.views_count), Number(counters.last_seq)]);
  note(`${w.label} daily_stats`, "sum of sign_ups, views", [w.confirmations, w.visitors.size], [Number(daily.sign_ups), Number(daily.views)]);
  const reached = new Map<string, number[]>();
  for (const r of rewards) reached.set(email(r.subscriber_id), [...(reached.get(email(r.subscriber_id)) ?? []), Number(r.referrals)].sort());
  noteEach((k) => `${w.label} ${k} milestone_rewards`, "thresholds reached", new Map(subs.filter((x) => x.awarded.size).map((x) => [x.email, [...x.awarded].sort()])), reached, []);
}

/** What the API must show of a subscriber (spec: Subscriber; DESIGN §4; docs/decisions.md: final_position, status). */
function compareView(w: Wl, x: Sub, v: any, position: number | null, where: string) {
  const confirmed = x.status === "confirmed";
  const ranked = confirmed && x.access === "waiting";
  note(where, "status", confirmed ? x.access : "pending", v?.status);
  note(where, "position", ranked ? position : undefined, v?.position);
  note(where, "inflated_position", ranked ? position! + w.offset : undefined, v?.inflated_position);
  note(where, "final_position", confirmed && !ranked ? x.finalPosition : undefined, v?.final_position);
  note(where, "points", confirmed ? x.points : undefined, v?.points);
  note(where, "referral_count", x.referralCount, v?.referral_count);
  note(where, "referred_by", x.referredBy, v?.referred_by);
  note(where, "referral_code", confirmed ? x.code : undefined, v?.referral_code);
  note(where, "tags", [...x.tags].sort(), tagNames(v));
  note(where, "unsubscribed", x.unsubscribed, typeof v?.unsubscribed_at === "number");
}

async function listAll(w: Wl, query: string, limit: number) {
  const out: any[] = [];
  for (let page = 1; page <= 500; page++) {
    const r = await s.request("GET", `${w.path}/subscribers?${query}&limit=${limit}&page=${page}`, { key });
    if (r.status !== 200) {
      bad.push(`${w.label} list ?${query}: status ${r.status} ${r.text.slice(0, 200)}`);
      return { rows: out, total: -1 };
    }
    out.push(...r.body.data.subscribers);
    note(`${w.label} list ?${query}&limit=${limit}`, "pages", Math.ceil(r.body.data.total / limit), r.body.data.pages);
    if (page >= r.body.data.pages) return { rows: out, total: r.body.data.total as number };
  }
  bad.push(`${w.label} list ?${query}: more than 500 pages`);
  return { rows: out, total: -1 };
}

async function checkApi(w: Wl, touched: Set<string>, thorough: boolean, counts: boolean) {
  const line = lineOf(w);
  const pos = new Map(line.map((x, i) => [x.email, i + 1]));
  const all = [...w.subs.values()];
  const unranked = all.filter((x) => !pos.has(x.email)).map((x) => x.email).sort();

  // the whole list by position (the rank counters' walk), ranked first in line order, then the rest
  // now and then also in small pages (each page's first row found through the counters), one way or the other
  const pages: [number, string][] = thorough ? [[100, "asc"], [100, "desc"], [4 + Math.floor(looks() * 9), looks() < 0.5 ? "asc" : "desc"]] : [[100, "asc"]];
  for (const [limit, dir] of pages) {
    const q = `sort_by=position&sort_dir=${dir}`;
    const { rows, total } = await listAll(w, q, limit);
    const where = `${w.label} list ?${q}&limit=${limit}`;
    note(where, "total", all.length, total);
    const order = dir === "asc" ? line : [...line].reverse();
    noteOrder(where, "ranked emails in order", order.map((x) => x.email), rows.slice(0, line.length).map((v) => v.email));
    note(where, "unranked emails", unranked, rows.slice(line.length).map((v) => v.email).sort());
    for (const v of rows) {
      const x = w.subs.get(v.email);
      if (x) compareView(w, x, v, pos.get(x.email) ?? null, `${w.label} ${x.email} in ${where}`);
    }
  }
  // a filtered list computes each row's position on its own
  const waiting = await listAll(w, "status=waiting&sort_by=position&sort_dir=asc", 100);
  noteOrder(`${w.label} list ?status=waiting&sort_by=position`, "email@position", line.map((x, i) => `${x.email}@${i + 1}`), waiting.rows.map((v) => `${v.email}@${v.position}`));

  // counts by status, unsubscribed and tag (each list's total), and the tags' own counts
  const totals: [string, number][] = !counts ? [] : [
    ["status=pending", all.filter((x) => x.status === "pending").length],
    ...(["waiting", "invited", "joined", "rejected"] as const).map((a): [string, number] => [`status=${a}`, all.filter((x) => x.status === "confirmed" && x.access === a).length]),
    ["unsubscribed=true", all.filter((x) => x.unsubscribed).length],
    ...[...w.tags].map((t): [string, number] => [`tag=${enc(t)}`, all.filter((x) => x.tags.has(t)).length]),
  ];
  const answers = await Promise.all(totals.map(([q]) => s.request("GET", `${w.path}/subscribers?${q}&limit=1`, { key })));
  totals.forEach(([q, n], i) => note(`${w.label} list ?${q}`, "total", n, answers[i].body?.data?.total));
  const tags = await s.request("GET", `${w.path}/tags`, { key });
  noteEach((k) => `${w.label} GET tags: tag ${k}`, "subscribers", new Map([...w.tags].map((t) => [t, all.filter((x) => x.tags.has(t)).length])),
    new Map((tags.body?.data?.tags ?? []).map((t: any) => [String(t.name).toLowerCase(), Number(t.subscribers)])), "no such tag");

  // stats (spec: subscribers_total counts confirmed subscribers; DESIGN §4) and the daily counts (DESIGN §9)
  const [stats, daily] = await Promise.all([s.request("GET", `${w.path}/stats`, { key }), s.request("GET", `${w.path}/stats/daily?days=2`, { key })]);
  note(`${w.label} stats`, "subscribers_total, views_total, referral_program_enabled",
    [all.filter((x) => x.status === "confirmed").length, w.visitors.size, w.referralEnabled],
    [stats.body?.data?.subscribers_total, stats.body?.data?.views_total, stats.body?.data?.referral_program_enabled]);
  const days: any[] = daily.body?.data?.days ?? [];
  note(`${w.label} stats/daily?days=2`, "sum of sign_ups, views", [w.confirmations, w.visitors.size],
    [days.reduce((n, d) => n + d.sign_ups, 0), days.reduce((n, d) => n + d.views, 0)]);

  // single reads (cached until a commit) and the status page's live numbers, for what the step touched and a few more
  const mine = [...touched].filter((e) => w.subs.has(e) || w.gone.some((g) => g.email === e));
  const some = new Set(thorough ? mine : mine.filter(() => looks() < 3 / mine.length));
  const other = lookPick(all);
  if (other) some.add(other.email);
  await Promise.all(
    [...some].map(async (e) => {
      const x = w.subs.get(e);
      const g = x ?? w.gone.find((y) => y.email === e)!;
      const byId = looks() < 0.5;
      const [one, live, page] = await Promise.all([
        s.request("GET", `${w.path}/subscribers/${enc(byId ? g.id : g.email)}`, { key }),
        s.request("GET", `/t/${g.signUpToken}/live`),
        s.request("GET", `/t/${g.signUpToken}`),
      ]);
      const where = `${w.label} ${e} GET by ${byId ? "id" : "email"}`;
      if (!x) {
        note(where, "status (deleted)", 404, one.status);
        note(`${w.label} ${e} /t/live`, "status (deleted)", 404, live.status);
        note(`${w.label} ${e} status page`, "status (deleted)", 404, page.status);
        return;
      }
      // the status page: its position while in line, the access status once out of it, "almost there" while pending
      const shown = page.text.match(/data-position="(\d+)" data-inflated-position="(\d+)"/)?.slice(1).map(Number) ??
        page.text.match(/data-access="(\w+)"/)?.[1] ?? (page.text.includes("Almost there") ? "pending" : page.text.slice(0, 80));
      const q = pos.get(e);
      note(`${w.label} ${e} status page`, "position, inflated position (or status)", q ? [q, q + w.offset] : x.status === "pending" ? "pending" : x.access, shown);
      note(where, "status", 200, one.status);
      compareView(w, x, one.body?.data?.subscriber, pos.get(e) ?? null, where);
      const p = pos.get(e) ?? null;
      note(`${w.label} ${e} /t/live`, "status, position, inflated_position, referral_count, points",
        [x.status === "pending" ? "pending" : x.access, p, p === null ? null : p + w.offset, x.referralCount, x.points],
        [live.body?.status, live.body?.position, live.body?.inflated_position, live.body?.referral_count, live.body?.points]);
    }),
  );

  if (thorough) {
    // the CSV export: every subscriber, ranked ones in line order with their positions
    const csv = parseCsv(await (await fetch(`${s.url}${w.path}/subscribers/export`, { headers: { "x-api-key": key } })).text());
    const [head, ...records] = csv;
    const col = (r: string[], name: string) => r[head.indexOf(name)];
    noteOrder(`${w.label} export`, "ranked emails in order", line.map((x) => x.email), records.slice(0, line.length).map((r) => col(r, "email")));
    note(`${w.label} export`, "row count", all.length, records.length);
    for (const r of records) {
      const x = w.subs.get(col(r, "email"));
      if (!x) continue;
      const p = pos.get(x.email);
      const confirmed = x.status === "confirmed";
      note(`${w.label} ${x.email} export`, "status, position, inflated_position, final_position, points, referral_count, tags",
        [confirmed ? x.access : "pending", p ? String(p) : "", p ? String(p + w.offset) : "", x.finalPosition === null ? "" : String(x.finalPosition),
          // docs/decisions.md, Export: a cell starting with - gets a leading apostrophe
          confirmed ? String(x.points).replace(/^-/, "'-") : "", String(x.referralCount), [...x.tags].sort().join("; ")],
        [col(r, "status"), col(r, "position"), col(r, "inflated_position"), col(r, "final_position"), col(r, "points"), col(r, "referral_count"),
          col(r, "tags").split("; ").filter(Boolean).map((t) => t.toLowerCase()).sort().join("; ")]);
    }
  }
}


export async function checkAll(touched: Set<string>, thorough: boolean) {
  for (const w of wls) await syncFromRows(w);
  await Promise.all(wls.map((w) => checkTables(w)));
  flush("rows and counter tables against the model");
  const list = await s.request("GET", "/api/v1/waitlists", { key });
  for (const w of wls) {
    const item = list.body?.data?.waitlists?.find((i: any) => i.key === w.key);
    note(`${w.label} GET /waitlists`, "subscribers, views", [[...w.subs.values()].filter((x) => x.status === "confirmed").length, w.visitors.size], [item?.subscribers, item?.views]);
  }
  for (const w of wls) await checkApi(w, touched, thorough, thorough || step % 3 === 0);
  flush("API and counter tables against the model");
}
