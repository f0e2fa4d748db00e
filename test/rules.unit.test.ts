// Unit tests of pure rules: slugs (DESIGN §4), host names, private addresses, rate-limit windows (DESIGN §5).
import { describe, expect, test } from "bun:test";
import { slugify } from "../src/waitlists/service";
import { isPrivateAddress, normalizeHost } from "../src/waitlists/hosts";
import { decide, WINDOW_MS } from "../src/http/rate-limit";

describe("slugify (DESIGN §4)", () => {
  test.each([
    ["My Launch", "my-launch"],
    ["  Rocket -- Launch!! ", "rocket-launch"],
    ["Café Olé", "caf-ol"],
    ["ABC123", "abc123"],
    ["--x--", "x"],
    ["!!!", ""],
    ["Test Waitlist", "test-waitlist"],
  ])("%p -> %p", (name, slug) => expect(slugify(name)).toBe(slug));
});

describe("host names", () => {
  test("are lowercased, a pasted URL keeps only its host, a trailing dot is dropped", () => {
    expect(normalizeHost("Example.COM", "f", false)).toBe("example.com");
    expect(normalizeHost("https://Shop.Example.com:8443/path?q", "f", false)).toBe("shop.example.com");
    expect(normalizeHost("example.com.", "f", false)).toBe("example.com");
    expect(normalizeHost("127.0.0.1", "f", false)).toBe("127.0.0.1");
  });
  test("wildcards only where allowed; invalid labels are 400 naming the field", () => {
    expect(normalizeHost("*.example.com", "allowed_domains[0]", true)).toBe("*.example.com");
    for (const bad of ["*.example.com", "-bad.com", "a b.com", "under_score.com", "x".repeat(64) + ".com", ""]) {
      expect(() => normalizeHost(bad, "custom_domain", false)).toThrow(/custom_domain/);
    }
  });
});

describe("private addresses (WEBHOOK_BLOCK_PRIVATE)", () => {
  test.each(["localhost", "api.localhost", "127.0.0.1", "10.0.0.5", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.1.1", "0.0.0.0", "100.64.0.1", "::1", "[::1]", "fd00::1", "fe80::1", "::ffff:10.0.0.1"])(
    "%p is private",
    (h) => expect(isPrivateAddress(h)).toBe(true),
  );
  test.each(["example.com", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2001:db8::1", "100.128.0.1"])("%p is public", (h) => expect(isPrivateAddress(h)).toBe(false));
});

describe("rate-limit decisions (DESIGN §5)", () => {
  const start = 1_800_000_000_000 - (1_800_000_000_000 % WINDOW_MS);
  test("Remaining counts the current request; Reset is the window end in whole seconds", () => {
    expect(decide(10, start, 1, start + 5)).toEqual({ limit: 10, remaining: 9, reset: (start + WINDOW_MS) / 1000, allowed: true, retryAfter: 60 });
    expect(decide(10, start, 10, start + 30_000).remaining).toBe(0);
  });
  test("a refused request has Remaining 0 and retry_after rounded up within 1..60", () => {
    expect(decide(10, start, null, start + 59_999)).toMatchObject({ allowed: false, remaining: 0, retryAfter: 1 });
    expect(decide(10, start, null, start + 30_500)).toMatchObject({ retryAfter: 30 });
    expect(decide(10, start, null, start)).toMatchObject({ retryAfter: 60 });
  });
});
