// Issue 46: a waitlist's own questions (settings `form_fields`) and the answers a sign-up gives, checked the same way
// on every path: the API's `answers` object, and a form post's fields named by the questions' keys.
import { badRequest } from "../http/errors";

export const FIELD_TYPES = ["text", "textarea", "select", "multiselect", "checkbox", "number", "url"] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const FORM_FIELDS_MAX = 20;
export const KEY_PATTERN = "^[a-z][a-z0-9_]{0,39}$";
export const LABEL_MAX = 200;
export const OPTION_MAX = 100;
export const OPTIONS_MAX = 50;
export const ANSWER_MAX = 2000;
/** The longest answer by type when the question sets no max_length. */
const DEFAULT_MAX: Partial<Record<FieldType, number>> = { text: 200, textarea: 2000, url: 2000 };

export interface FormField {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  /** The choices of a select or multiselect; [] otherwise. */
  options: string[];
  /** The longest text, url or textarea answer; null for the type's default. */
  max_length: number | null;
}

export type Answer = string | string[] | number | boolean;
export type Answers = Record<string, Answer>;

/** Names a form post or the API already gives a meaning to: no question may take them. */
const RESERVED = new Set([
  "email", "name", "phone", "metadata", "answers", "ref", "referred_by", "referring_domain", "client_ip", "fingerprint", "visitor_id", "website", "altcha",
  "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "referrer_host",
]);

export const formFieldsOf = (w: { formFields: string }): FormField[] => JSON.parse(w.formFields) as FormField[];

/** The settings' list, checked and normalized (as stored, JSON): distinct keys, options where a type has them. */
export function checkFormFields(list: { key: string; label: string; type: FieldType; required?: boolean; options?: string[]; max_length?: number }[]): string {
  const seen = new Set<string>();
  const clean = list.map((f, i): FormField => {
    const at = `form_fields[${i}]`;
    if (RESERVED.has(f.key)) throw badRequest(`${at}.key: "${f.key}" is reserved (a field the form already has)`);
    if (seen.has(f.key)) throw badRequest(`${at}.key: "${f.key}" is used twice`);
    seen.add(f.key);
    // shown as text wherever it appears (escaped), so any character may be in it
    const label = f.label.trim();
    // which types have options or max_length is the schema's (waitlists/model.ts): one branch per type
    const options = (f.options ?? []).map((o) => o.trim());
    if (new Set(options).size !== options.length) throw badRequest(`${at}.options: "${options.find((o, j) => options.indexOf(o) !== j)}" appears twice`);
    return { key: f.key, label, type: f.type, required: f.required ?? false, options, max_length: f.max_length ?? null };
  });
  return JSON.stringify(clean);
}

const truthy = (v: string) => ["on", "true", "1", "yes"].includes(v.trim().toLowerCase());

/**
 * The answers to keep, checked against the questions: a required one missing, an option not in the list, a number
 * that is none, text over its length or a URL that is none is a 400 naming `answers.KEY`; so is an answer to no
 * question (API). `fromForm`: the values come as form text (a checkbox is "on" or absent, a multiselect repeats).
 */
export function checkAnswers(fields: FormField[], given: Record<string, unknown> | undefined, fromForm: boolean): Answers {
  const raw = given ?? {};
  if (!fromForm) {
    const unknown = Object.keys(raw).find((k) => !fields.some((f) => f.key === k));
    if (unknown !== undefined) throw badRequest(`answers.${unknown} is not a question of this waitlist${fields.length ? `; its questions: ${fields.map((f) => f.key).join(", ")}` : ""}`);
  }
  const out: Answers = {};
  for (const f of fields) {
    const at = `answers.${f.key}`;
    let v = raw[f.key];
    if (fromForm) v = formValue(f, v);
    const blank = v === undefined || v === null || (typeof v === "string" && !v.trim()) || (Array.isArray(v) && v.length === 0) || (f.type === "checkbox" && v === false);
    if (blank) {
      if (f.required) throw badRequest(`${at} is required`);
      if (f.type === "checkbox" && v === false) out[f.key] = false;
      continue;
    }
    out[f.key] = answerOf(f, v, at);
  }
  return out;
}

/** A form post's text as the answer's type. */
function formValue(f: FormField, v: unknown): unknown {
  const list = (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string");
  switch (f.type) {
    case "checkbox":
      return list.some(truthy);
    case "multiselect":
      return list.filter((x) => x.trim());
    case "number":
      return list[0]?.trim() ? Number(list[0].trim()) : undefined;
    default:
      return list[0];
  }
}

function answerOf(f: FormField, v: unknown, at: string): Answer {
  switch (f.type) {
    case "checkbox":
      if (typeof v !== "boolean") throw badRequest(`${at} must be true or false`);
      return v;
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v)) throw badRequest(`${at} must be a number`);
      return v;
    case "multiselect": {
      if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw badRequest(`${at} must be a list of options`);
      const picked = [...new Set((v as string[]).map((x) => x.trim()))];
      const wrong = picked.find((x) => !f.options.includes(x));
      if (wrong !== undefined) throw badRequest(`${at}: "${wrong}" is not one of: ${f.options.join(", ")}`);
      return picked;
    }
    case "select": {
      if (typeof v !== "string" || !f.options.includes(v.trim())) throw badRequest(`${at} must be one of: ${f.options.join(", ")}`);
      return v.trim();
    }
    default: {
      if (typeof v !== "string") throw badRequest(`${at} must be text`);
      const text = v.trim();
      const max = f.max_length ?? DEFAULT_MAX[f.type] ?? ANSWER_MAX;
      if (text.length > max) throw badRequest(`${at} must be at most ${max} characters`);
      if (f.type === "url" && !isHttpUrl(text)) throw badRequest(`${at} must be an absolute http(s) URL`);
      return text;
    }
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

/** An answer as one CSV cell or one line of text. */
export const answerText = (a: Answer | undefined): string => (a === undefined ? "" : Array.isArray(a) ? a.join("; ") : String(a));
