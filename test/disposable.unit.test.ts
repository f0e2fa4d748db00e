// The disposable-domain check (src/subscribers/email.ts) against mailchecker's own list: the compact layout built
// at bundle time (disposable-list.ts) must answer exactly as the Set it replaces.
import { expect, test } from "bun:test";
import { blacklist } from "mailchecker";
import { isDisposable } from "../src/subscribers/email";

test("every domain on mailchecker's list, and any subdomain of one, is disposable; others are not", () => {
  const domains = [...blacklist()];
  expect(domains.length).toBeGreaterThan(50_000);
  expect(domains.filter((d) => !isDisposable(`someone@${d}`))).toEqual([]);
  expect(domains.slice(0, 2_000).filter((d) => !isDisposable(`someone@mx.${d}`))).toEqual([]);
  const normal = ["example.com", "gmail.com", "outlook.com", "company.co.uk", "proton.me", "x.io", "mailinator.com.example.org"];
  expect(normal.filter((d) => blacklist().has(d))).toEqual([]);
  expect(normal.filter((d) => isDisposable(`someone@${d}`))).toEqual([]);
  // a name that merely contains a listed one is not it
  expect(isDisposable("someone@notmailinator.com")).toBe(blacklist().has("notmailinator.com"));
  expect(isDisposable("someone@mailinator.com")).toBe(true);
});
