// Tokens and dates (src/clock.ts): random base62 of the length asked, uniform over the alphabet, drawn from a pool of the
// system generator's bytes that is refilled as it runs out; the SHA-256 that stored keys and tokens are kept as; a day's date.
import { expect, test } from "bun:test";
import { clusteredCode, dayOf, sha256Hex, sortableToken, token } from "../src/clock";

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

test("sha256Hex is SHA-256 of the UTF-8 text, in lower-case hex (FIPS 180-2 vectors)", () => {
  expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // UTF-8, not UTF-16 or Latin-1: "é" is the two bytes c3 a9
  expect(sha256Hex("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
});

test("dayOf gives each timestamp its UTC date, across midnight and back, before 1970 too", () => {
  const midnight = Date.UTC(2026, 11, 3);
  expect(dayOf(midnight - 1)).toBe("2026-12-02");
  expect(dayOf(midnight)).toBe("2026-12-03");
  expect(dayOf(midnight - 1)).toBe("2026-12-02");
  expect(dayOf(midnight + 86_399_999)).toBe("2026-12-03");
  expect(dayOf(Date.UTC(1969, 11, 31, 23, 59))).toBe("1969-12-31");
  expect(dayOf(0)).toBe("1970-01-01");
  expect(() => dayOf(NaN)).toThrow();
});
