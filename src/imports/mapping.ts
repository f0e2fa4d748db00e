// Issue 47: which field each column of an imported CSV goes to, detected from the header (case, spaces and underscores
// ignored) for our own export, a Mailchimp audience export, Viral Loops' and Prefinery's import columns, or given as
// `mapping` (column -> field); and a row's cells read as those fields.
import { badRequest } from "../http/errors";
import { normalizeEmail } from "../subscribers/email";
import { POINTS_LIMIT } from "../subscribers/model";
import { UTM_FIELDS } from "../analytics/sources";

/** The fields a column can go to, besides `answers.KEY` and `metadata.KEY`. */
export const FIELDS = [
  "email", "name", "first_name", "last_name", "phone", "signed_up_at", "points", "referral_code", "referred_by", "id", "referrer_id",
  "tags", "metadata", "unsubscribed_at", "email_status", ...UTM_FIELDS, "referrer_host", "ignore",
] as const;
export type Field = (typeof FIELDS)[number] | `answers.${string}` | `metadata.${string}`;

/** How a header is compared: lower case, without spaces, underscores and hyphens. */
export const headerKey = (header: string) => header.toLowerCase().replace(/[\s_-]+/g, "");

const KNOWN: Record<string, Field> = {
  email: "email", emailaddress: "email",
  name: "name", fullname: "name",
  firstname: "first_name", fname: "first_name",
  lastname: "last_name", lname: "last_name", surname: "last_name",
  phone: "phone", phonenumber: "phone", mobile: "phone",
  // our export, Mailchimp, Prefinery, and the usual spellings
  joinedat: "signed_up_at", signedupat: "signed_up_at", signupdate: "signed_up_at", createdat: "signed_up_at", optintime: "signed_up_at",
  appliedat: "signed_up_at", subscribedat: "signed_up_at",
  points: "points",
  referralcode: "referral_code", refcode: "referral_code",
  referredby: "referred_by", referrercode: "referred_by",
  id: "id", referrerid: "referrer_id",
  tags: "tags",
  metadata: "metadata",
  unsubscribedat: "unsubscribed_at",
  emailstatus: "email_status",
  utmsource: "utm_source", utmmedium: "utm_medium", utmcampaign: "utm_campaign", utmterm: "utm_term", utmcontent: "utm_content",
  referrerhost: "referrer_host",
  // counted again from what is imported: a position, a referral count are the list's, not the file's
  position: "ignore", inflatedposition: "ignore", finalposition: "ignore", referralcount: "ignore", deliverability: "ignore",
  thankyouurl: "ignore", joinedwith: "ignore",
};

/** Columns only our own export has, derived there: with them, the file is ours and they are not kept as metadata. */
const OURS = new Set(["inflatedposition", "thankyouurl"]);
const OUR_DERIVED = ["status", "country", "city", "timezone", "ipaddress", "referringdomain"];

const isField = (f: string): f is Field => (FIELDS as readonly string[]).includes(f) || /^answers\.[a-z][a-z0-9_]{0,39}$/.test(f) || /^metadata\..{1,100}$/.test(f);

/**
 * Each column's field: the given mapping first (a column it names must be in the file, a field must be one of ours),
 * then the known headers, then metadata under the header's own name. 400 when nothing maps to email.
 */
export function mapColumns(headers: string[], given: Record<string, string> = {}): Field[] {
  const keys = headers.map(headerKey);
  for (const [column, field] of Object.entries(given)) {
    if (!headers.includes(column) && !keys.includes(headerKey(column))) throw badRequest(`mapping: the file has no column "${column}"; its columns: ${headers.join(", ")}`);
    if (typeof field !== "string" || !isField(field)) throw badRequest(`mapping.${column}: "${String(field)}" is not a field; fields: ${FIELDS.join(", ")}, answers.KEY, metadata.KEY`);
  }
  const ours = keys.some((k) => OURS.has(k));
  const fields = headers.map((header, i): Field => {
    const mapped = given[header] ?? Object.entries(given).find(([c]) => headerKey(c) === keys[i])?.[1];
    if (mapped) return mapped as Field;
    if (/^answers\./i.test(header.trim())) return `answers.${header.trim().slice("answers.".length).toLowerCase()}` as Field;
    const known = KNOWN[keys[i]!];
    if (known) return known;
    if (ours && OUR_DERIVED.includes(keys[i]!)) return "ignore";
    return header.trim() ? (`metadata.${header.trim()}` as Field) : "ignore";
  });
  const taken = new Map<Field, string>();
  fields.forEach((f, i) => {
    if (f === "ignore" || f.startsWith("metadata.")) return;
    if (taken.has(f)) throw badRequest(`mapping: columns "${taken.get(f)}" and "${headers[i]}" both go to ${f}; map one of them to ignore`);
    taken.set(f, headers[i]!);
  });
  if (!fields.includes("email")) throw badRequest(`No column holds the email: name it in mapping ({"YOUR COLUMN": "email"}); the file's columns: ${headers.join(", ")}`);
  return fields;
}

/** A row as it will be imported (JSON in import_rows.data); `error` when a cell cannot be read. */
export interface RowData {
  email?: string;
  name?: string;
  phone?: string;
  at?: number;
  points?: number;
  referral_code?: string;
  referred_by?: string;
  id?: string;
  referrer_id?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  answers?: Record<string, string>;
  origin?: Record<string, string>;
  unsubscribed_at?: number;
  email_status?: "ok" | "bounced" | "complained";
  error?: string;
}

/** A time: ISO 8601, `YYYY-MM-DD HH:MM[:SS]` (UTC unless it says), or seconds or milliseconds since 1970. */
export function parseTime(text: string): number | null {
  const t = text.trim();
  if (/^\d{9,13}$/.test(t)) return t.length >= 12 ? Number(t) : Number(t) * 1000;
  const plain = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(t);
  const ms = Date.parse(plain ? `${t.replace(" ", "T")}${t.length > 10 ? "" : "T00:00:00"}Z` : t);
  return Number.isFinite(ms) && ms > 0 && ms < 8_640_000_000_000 ? ms : null;
}

const splitList = (text: string) => [...new Set(text.split(/[;,]/).map((t) => t.trim().replace(/^"(.*)"$/, "$1").trim()).filter(Boolean))];

/** One record's cells as the import's fields (`now` for a truthy unsubscribed cell without a time). */
export function readRow(cells: string[], fields: Field[], headers: string[], now: number): RowData {
  const row: RowData = {};
  const problem = (i: number, what: string) => {
    row.error ??= `${headers[i]}: ${what}`;
  };
  let first = "";
  let last = "";
  fields.forEach((field, i) => {
    const raw = cells[i] ?? "";
    const value = raw.trim();
    if (field === "ignore" || !value) return;
    switch (field) {
      case "email":
        row.email = normalizeEmail(value);
        return;
      case "name":
        row.name = value;
        return;
      case "first_name":
        first = value;
        return;
      case "last_name":
        last = value;
        return;
      case "phone":
        row.phone = value;
        return;
      case "signed_up_at": {
        const at = parseTime(value);
        if (at === null) return problem(i, `"${value}" is not a time (ISO 8601, YYYY-MM-DD HH:MM:SS, or seconds since 1970)`);
        row.at = at;
        return;
      }
      case "points": {
        const n = Number(value);
        if (!Number.isInteger(n) || Math.abs(n) > POINTS_LIMIT) return problem(i, `"${value}" is not a whole number of points`);
        row.points = n;
        return;
      }
      case "referral_code":
      case "referred_by":
      case "id":
      case "referrer_id":
        row[field] = value;
        return;
      case "tags":
        row.tags = splitList(value);
        return;
      case "metadata": {
        try {
          const parsed = JSON.parse(value);
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return problem(i, "is not a JSON object");
          row.metadata = { ...parsed, ...row.metadata };
        } catch {
          problem(i, "is not JSON");
        }
        return;
      }
      case "unsubscribed_at": {
        if (["false", "no", "0"].includes(value.toLowerCase())) return;
        row.unsubscribed_at = ["true", "yes", "1"].includes(value.toLowerCase()) ? now : (parseTime(value) ?? NaN);
        if (Number.isNaN(row.unsubscribed_at)) return problem(i, `"${value}" is not a time or yes/no`);
        return;
      }
      case "email_status":
        if (value !== "ok" && value !== "bounced" && value !== "complained") return problem(i, `"${value}" is not ok, bounced or complained`);
        row.email_status = value;
        return;
      default:
        if (field.startsWith("answers.")) (row.answers ??= {})[field.slice("answers.".length)] = value;
        else if (field.startsWith("metadata.")) (row.metadata ??= {})[field.slice("metadata.".length)] = value;
        else (row.origin ??= {})[field] = value;
    }
  });
  if (first || last) row.name ??= [first, last].filter(Boolean).join(" ");
  if (!row.email && !row.error) row.error = "no email";
  return row;
}
