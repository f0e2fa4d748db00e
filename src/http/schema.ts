// Schema pieces that state a rule the handlers enforce, so that the OpenAPI document says it (issue 44): a request the
// document allows is one the handler takes, and one it forbids is refused by the same schema, before the handler.
import { Type, type IntegerOptions } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";

/**
 * An integer in a JSON body: a JSON number, never a numeric string. (Elysia's own `t.Integer` takes "5" too and
 * documents the field as "string or integer", so an empty string was valid by the document.)
 */
export const Int = (options: IntegerOptions) => Type.Integer(options);

/**
 * An integer from `minimum` (0 or 1) to `maximum` in a query string: the text must be one, checked by a pattern of
 * the range (a compiled regex: a transform that parses then checks the bounds cost the list ~15 us a request, and
 * its refusal lost the parameter's name); the handler reads it with Number(). The document states it as an integer
 * with its bounds (docs/document.ts, `x-query-integer`).
 */
export const QueryInt = (options: { minimum: 0 | 1; maximum: number; description?: string }) =>
  t.String({
    pattern: rangePattern(options.minimum, options.maximum),
    error: `must be an integer from ${options.minimum} to ${options.maximum}`,
    "x-query-integer": { minimum: options.minimum, maximum: options.maximum },
    ...(options.description ? { description: options.description } : {}),
  });

/** Decimal text of the integers from `min` (0 or 1) to `max`, without leading zeros. */
export function rangePattern(min: 0 | 1, max: number): string {
  const digits = String(max);
  const n = digits.length;
  const parts: string[] = [];
  if (min === 0) parts.push("0");
  // fewer digits than max
  if (n > 1) parts.push(n === 2 ? "[1-9]" : `[1-9]\\d{0,${n - 2}}`);
  // as many digits: max's first i digits, then a smaller digit, then any
  for (let i = 0; i < n; i++) {
    const d = Number(digits[i]);
    const low = i === 0 ? 1 : 0;
    if (d - 1 < low) continue;
    const rest = n - i - 1;
    parts.push(`${digits.slice(0, i)}[${low}-${d - 1}]${rest ? `\\d{${rest}}` : ""}`);
  }
  parts.push(digits);
  return `^(?:${parts.join("|")})$`;
}

/** Text that must not be blank: at least one character that is not white space (the handlers trim). */
export const NOT_BLANK = String.raw`\S`;

export const Text = (options: { maxLength: number; description?: string; pattern?: string }) =>
  t.String({ minLength: 1, pattern: NOT_BLANK, error: `must be a non-blank string of at most ${options.maxLength} characters`, ...options });

/** Optional surrounding white space, which the handlers trim. */
const trimmed = (core: string) => String.raw`^\s*${core}\s*$`;

/** A DNS label, in either case (the handlers lowercase). */
const LABEL = String.raw`[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?`;
const HOST = String.raw`(?:${LABEL}\.)*${LABEL}\.?`;
const PORT = String.raw`(?::(?:6553[0-5]|655[0-2]\d|65[0-4]\d{2}|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3}|0))?`;

/**
 * A URL's host: a dotted-quad IPv4 address, or a name whose last label starts with a letter (the URL parser reads a
 * name ending in a number, or 0x, as an IPv4 address, and refuses one out of range).
 */
const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const URL_HOST = String.raw`(?:(?:${OCTET}\.){3}${OCTET}|(?:${LABEL}\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)`;
const URL_CORE = String.raw`[Hh][Tt][Tt][Pp][Ss]?://${URL_HOST}${PORT}(?:[/?#]\S*)?`;
/** A host name (the handlers lowercase it and drop a final dot), or an http(s) URL whose host is kept. */
export const HOST_PATTERN = trimmed(`(?:${URL_CORE}|${HOST})`);
/** A host name, or `*.` and one (every subdomain of it), or an http(s) URL whose host is kept. */
export const HOST_OR_WILDCARD_PATTERN = trimmed(String.raw`(?:${URL_CORE}|(?:\*\.)?${HOST})`);
/** A host name or a URL of it, or blank (which clears the setting). */
export const HOST_OR_BLANK_PATTERN = trimmed(`(?:${URL_CORE}|${HOST})?`);
/** An absolute http(s) URL with a host name (no user name or password), as the WHATWG URL parser takes it. */
export const HTTP_URL_PATTERN = trimmed(URL_CORE);

/**
 * An email address: the WHATWG grammar of `<input type=email>` (a local part of at most 64 characters, no leading,
 * trailing or double dot), with a dotted domain whose last label is alphabetic or an IDN (xn--). The handlers trim
 * and lowercase it first (subscribers/email.ts tests the same pattern).
 */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
export const EMAIL_PATTERN = trimmed(
  String.raw`(?=[^@\s]{1,64}@)${ATOM}+(?:\.${ATOM}+)*@(?:${LABEL}\.)+(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{1,58}[A-Za-z0-9])`,
);

/** A slug: lowercase letters and digits in runs joined by single dashes. */
export const SLUG_PATTERN = "^[a-z0-9]+(?:-[a-z0-9]+)*$";

/** Plain text: not blank, no < or >. */
export const PLAIN_TEXT_PATTERN = String.raw`^[^<>]*[^<>\s][^<>]*$`;

/**
 * Plain text as the landing page takes it: no `<` that starts markup (a letter, !, / or ? after it, also past white
 * space), the handlers' rule (landing/service.ts); a `<` before anything else (`<3`, `x <= 5`) is text.
 */
const SAFE = String.raw`(?:[^<]|<\s*[^A-Za-z!/?<\s])`;
const SAFE_START = String.raw`(?:[^<\s]|<\s*[^A-Za-z!/?<\s])`;
export const MARKUP_FREE_PATTERN = String.raw`^${SAFE}*(?:<\s*)?$`;
/** Markup-free, and at least 3 characters once trimmed (a headline). */
export const HEADLINE_PATTERN = String.raw`^\s*${SAFE_START}${SAFE}+${SAFE_START}\s*$`;

/** Case-insensitive text for a pattern (JSON Schema's patterns have no flags). */
export const anyCase = (word: string) => word.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);

/** A string matching `pattern`, whose message is `error` (a sentence after the field's name). */
export const Matching = (pattern: string, options: { maxLength: number; error: string; description?: string; minLength?: number }) =>
  t.String({ pattern, ...options });

/** `schema` or null. */
export const OrNull = <T extends TSchema>(schema: T, description?: string) => t.Union([schema, t.Null()], description ? { description } : {});
