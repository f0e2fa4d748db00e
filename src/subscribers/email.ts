// Email normalization and the offline deliverability checks of DESIGN §4: syntax, disposable list, role addresses.
import { blacklist } from "mailchecker";

export const EMAIL_MAX = 254;

// The WHATWG (HTML input type=email) grammar, plus a dotted domain with an alphabetic TLD.
const LOCAL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const ROLE_LOCAL_PARTS = new Set([
  "abuse", "admin", "administrator", "billing", "contact", "help", "hostmaster", "info", "marketing", "no-reply",
  "noc", "noreply", "office", "postmaster", "root", "sales", "security", "support", "sysadmin", "team", "webmaster",
]);

export const normalizeEmail = (raw: string): string => raw.trim().toLowerCase();

export function isValidEmailSyntax(email: string): boolean {
  if (email.length > EMAIL_MAX) return false;
  const at = email.lastIndexOf("@");
  if (at <= 0) return false;
  const local = email.slice(0, at);
  const labels = email.slice(at + 1).split(".");
  if (!LOCAL.test(local) || local.startsWith(".") || local.endsWith(".") || local.includes("..")) return false;
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  return /^(?:[a-z]{2,63}|xn--[a-z0-9-]{2,59})$/.test(labels[labels.length - 1]);
}

/** The domain or any parent domain is on the bundled disposable list (mailchecker). */
export function isDisposable(email: string): boolean {
  const list = blacklist();
  let domain = email.slice(email.lastIndexOf("@") + 1);
  for (;;) {
    if (list.has(domain)) return true;
    const dot = domain.indexOf(".");
    if (dot === -1) return false;
    domain = domain.slice(dot + 1);
  }
}

export const isRoleAddress = (email: string): boolean => ROLE_LOCAL_PARTS.has(email.slice(0, email.lastIndexOf("@")).split("+")[0]);
