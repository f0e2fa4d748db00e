// normalizeIp (issue 16): one textual form per address, so the fraud rules and rate limits compare like with like.
import { expect, test } from "bun:test";
import { normalizeIp } from "../src/http/client-ip";
import { locate } from "../src/subscribers/geo";

test("IPv6 is lowercased and compressed; IPv4-mapped IPv6 becomes the IPv4 address; brackets are dropped", () => {
  const cases: [string, string | null][] = [
    ["203.0.113.7", "203.0.113.7"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"],
    [" [2001:db8::0:1] ", "2001:db8::1"],
    ["::FFFF:203.0.113.7", "203.0.113.7"],
    ["::ffff:cb00:7107", "203.0.113.7"],
    ["::1", "::1"],
    ["fe80::1%eth0", null],
    ["01.2.3.4", null],
    ["203.0.113.256", null],
    ["2001:db8::g", null],
    ["not an ip", null],
    ["", null],
  ];
  for (const [raw, want] of cases) expect(normalizeIp(raw), raw).toBe(want);
});

test("geolocation reads the IPv6 database too, and looks an IPv4-mapped address up as IPv4", () => {
  expect(locate("2a00:1450:4001:80b::200e")).toEqual({ country: "DE", city: "Frankfurt am Main", timezone: "Europe/Berlin" });
  expect(locate("::ffff:81.2.69.142")).toEqual(locate("81.2.69.142"));
  expect(locate("81.2.69.142").country).toBe("GB");
  expect(locate("fd00::1")).toEqual({ country: null, city: null, timezone: null });
});
