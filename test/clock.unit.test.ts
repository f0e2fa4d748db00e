// Tokens (src/clock.ts): random base62 of the length asked, uniform over the alphabet, drawn from a pool of the
// system generator's bytes that is refilled as it runs out.
import { expect, test } from "bun:test";
import { clusteredCode, sortableToken, token } from "../src/clock";

const BASE62 = /^[0-9A-Za-z]*$/;

test("a token has the length asked, in base62, also across the pool's refills", () => {
  for (const length of [1, 8, 16, 24, 43]) {
    const t = token(length);
    expect(t).toHaveLength(length);
    expect(t).toMatch(BASE62);
  }
  // 2,000 tokens of 43 draw ~90 KB: the 4 KB pool is refilled about 22 times
  const many = Array.from({ length: 2_000 }, () => token(43));
  expect(many.every((t) => t.length === 43 && BASE62.test(t))).toBe(true);
  expect(new Set(many).size).toBe(many.length);
  expect(sortableToken(24)).toHaveLength(24);
  expect(clusteredCode(8)).toHaveLength(8);
});

test("every character of the alphabet is about equally likely (rejection sampling, no modulo bias)", () => {
  const counts = new Map<string, number>();
  const chars = Array.from({ length: 5_000 }, () => token(40)).join("");
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  expect(counts.size).toBe(62);
  const expected = chars.length / 62; // ~3,226, one standard deviation ~56
  for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.1);
});

test("tokens made in a later millisecond sort after earlier ones (sortableToken)", () => {
  const first = sortableToken(24);
  const start = Date.now();
  while (Date.now() === start); // the next millisecond: the clock's own, no sleep
  const later = sortableToken(24);
  expect(later > first).toBe(true);
});
