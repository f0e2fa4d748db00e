// Sharing that looks good (issue 46 item 5): the setting og_image_url; hosted pages and status pages carry Open Graph
// and Twitter card tags, a large card with that image, or without one with the image drawn for the waitlist (/og/KEY.png,
// test/og-image.e2e.test.ts); every value escaped.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type TestServer } from "./support/server";

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off", BASE_URL: "https://wl.social.example" } });
});
afterAll(() => s.stop());

const meta = (html: string, attr: "property" | "name", name: string) => new RegExp(`<meta ${attr}="${name.replace(/[.]/g, "\\.")}" content="([^"]*)">`).exec(html)?.[1];

test("og_image_url: a large card with the image on the hosted page and the status page; without it the generated image's; a bad URL is 400", async () => {
  const { key } = await s.account("growth");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: `Rocket "Launch" <${Math.random().toString(36).slice(2, 6)}>` } })).body.data.waitlist;
  const path = `/api/v1/waitlist/${w.key}`;
  const pageHtml = async () => (await fetch(`${s.url}/p/${w.slug}`)).text();
  const generated = `https://wl.social.example/og/${w.key}.png`;
  const expectGenerated = (html: string) =>
    expect([meta(html, "property", "og:image")?.replace(/\?v=[\w-]{8}$/, ""), meta(html, "property", "og:image:width"), meta(html, "property", "og:image:height"), meta(html, "name", "twitter:card"), meta(html, "name", "twitter:image")?.replace(/\?v=[\w-]{8}$/, "")]).toEqual([
      generated,
      "1200",
      "630",
      "summary_large_image",
      generated,
    ]);
  expectGenerated(await pageHtml());

  const bad = await s.request("PATCH", `${path}/settings`, { key, body: { og_image_url: "ftp://x.example/a.png" } });
  expect(bad.status).toBe(400);
  expect(bad.body.message).toContain("og_image_url");
  const image = "https://cdn.rocket.example/share.png?v=1&size=large";
  const ok = await s.request("PATCH", `${path}/settings`, { key, body: { og_image_url: image } });
  expect(ok.body.data.settings.og_image_url).toBe(image);

  const html = await pageHtml();
  expect(meta(html, "property", "og:image")).toBe("https://cdn.rocket.example/share.png?v=1&amp;size=large");
  expect(meta(html, "name", "twitter:card")).toBe("summary_large_image");
  expect(meta(html, "name", "twitter:image")).toBe("https://cdn.rocket.example/share.png?v=1&amp;size=large");
  // its size is the uploader's to know
  expect(meta(html, "property", "og:image:width")).toBeUndefined();

  const sub = (await s.request("POST", `${path}/sign-up`, { key, body: { email: "share@example.com", name: "Ada <b>" } })).body;
  const status = await (await fetch(`${s.url}/t/${sub.sign_up_token}`)).text();
  expect(meta(status, "property", "og:title")).toBe(`Join the ${w.name.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")} waitlist`);
  expect(meta(status, "property", "og:url")).toBe(`https://wl.social.example/p/${w.slug}?ref=${sub.referral_code}`);
  expect(meta(status, "property", "og:image")).toBe("https://cdn.rocket.example/share.png?v=1&amp;size=large");
  expect(meta(status, "name", "twitter:card")).toBe("summary_large_image");
  // nothing of the subscriber in the tags a link preview reads
  const tags = status.slice(0, status.indexOf("</head>"));
  expect(tags).not.toContain("Ada");
  expect(tags).not.toContain("share@example.com");

  expect((await s.request("PATCH", `${path}/settings`, { key, body: { og_image_url: null } })).body.data.settings.og_image_url).toBeNull();
  expectGenerated(await pageHtml());
});
