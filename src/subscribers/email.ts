// Email normalization and the offline deliverability checks of DESIGN §4: syntax, disposable list, role addresses.
import { disposableDomains } from "./disposable-list" with { type: "macro" };
import { EMAIL_PATTERN } from "../http/schema";
import { bucketOf, BUCKETS } from "./disposable-hash";

export const EMAIL_MAX = 254;

/** The document's own rule (http/schema.ts), so that the API's schema and every other form of sign-up agree. */
const EMAIL = new RegExp(EMAIL_PATTERN, "u");

const ROLE_LOCAL_PARTS = new Set([
  "abuse", "admin", "administrator", "billing", "contact", "help", "hostmaster", "info", "marketing", "no-reply",
  "noc", "noreply", "office", "postmaster", "root", "sales", "security", "support", "sysadmin", "team", "webmaster",
]);

export const normalizeEmail = (raw: string): string => raw.trim().toLowerCase();

/** A normalized (trimmed, lowercased) address that the grammar takes. */
export function isValidEmailSyntax(email: string): boolean {
  return email.length <= EMAIL_MAX && EMAIL.test(email);
}

/** mailchecker's list, laid out in buckets when the code is built (disposable-list.ts). */
const DISPOSABLE = disposableDomains();
let bucketStarts: Uint32Array | null = null;

/** Whether `domain` itself is on the list: a search of its bucket only. */
function listed(domain: string): boolean {
  if (!bucketStarts) {
    // where each bucket starts: after the "|" that ends the one before; the last ends where the string does
    bucketStarts = new Uint32Array(BUCKETS + 1);
    for (let b = 1, at = 0; b < BUCKETS; b++) bucketStarts[b] = at = DISPOSABLE.indexOf("|", at) + 1;
    bucketStarts[BUCKETS] = DISPOSABLE.length + 1;
  }
  const b = bucketOf(domain);
  return DISPOSABLE.slice(bucketStarts[b], bucketStarts[b + 1] - 1).includes(`\n${domain}\n`);
}

/** Answers for recent domains: most sign-ups come from a few providers (a sign-up searched the list ~1.5 us). */
const answered = new Map<string, boolean>();
const ANSWERS_KEPT = 4_096;

/** The domain or any parent domain is on the bundled disposable list (mailchecker). */
export function isDisposable(email: string): boolean {
  const domain = email.slice(email.lastIndexOf("@") + 1);
  let listedHere = answered.get(domain);
  if (listedHere === undefined) {
    listedHere = onList(domain);
    if (answered.size >= ANSWERS_KEPT) answered.clear();
    answered.set(domain, listedHere);
  }
  return listedHere;
}

function onList(domain: string): boolean {
  for (;;) {
    if (listed(domain)) return true;
    const dot = domain.indexOf(".");
    if (dot === -1) return false;
    domain = domain.slice(dot + 1);
  }
}

export const isRoleAddress = (email: string): boolean => ROLE_LOCAL_PARTS.has(email.slice(0, email.lastIndexOf("@")).split("+")[0]);
