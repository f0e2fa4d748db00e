// The generated share image (issue 46 item 5, second part): GET /og/{key}.png is a 1200x630 PNG of the waitlist's
// name on its colour (email_template.color), in white or dark text, whichever contrasts more; cacheable by ETag; the
// og:image of its hosted page and status page while og_image_url is unset.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { inflateSync } from "node:zlib";
import { startServer, type TestServer } from "./support/server";

const BASE = "https://wl.og.example";
let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({ env: { RATE_LIMITS: "off", BASE_URL: BASE } });
  key = (await s.account("growth")).key;
});
afterAll(() => s.stop());

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const uniq = () => Math.random().toString(36).slice(2, 8);

/** A PNG's size and RGBA pixels, decoded with zlib alone (8-bit RGB or RGBA, not interlaced: what resvg writes). */
function decodePng(png: Uint8Array) {
  expect([...png.subarray(0, 8)]).toEqual(SIGNATURE);
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const idat: Uint8Array[] = [];
  let header = { width: 0, height: 0, depth: 0, colorType: 0, interlace: 0 };
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    if (type === "IHDR") header = { width: view.getUint32(at + 8), height: view.getUint32(at + 12), depth: png[at + 16], colorType: png[at + 17], interlace: png[at + 20] };
    if (type === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const channels = header.colorType === 6 ? 4 : 3;
  expect([header.depth, [2, 6].includes(header.colorType), header.interlace]).toEqual([8, true, 0]);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = header.width * channels;
  const rows: Uint8Array[] = [];
  for (let y = 0; y < header.height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = Uint8Array.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    const up = rows[y - 1] ?? new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? row[i - channels] : 0;
      const b = up[i];
      const c = i >= channels ? up[i - channels] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      row[i] = (row[i] + [0, a, b, (a + b) >> 1, paeth][filter]) & 0xff;
    }
    rows.push(row);
  }
  const pixel = (x: number, y: number) => {
    const px = [...rows[y].subarray(x * channels, (x + 1) * channels)];
    return `#${px.slice(0, 3).map((v) => v.toString(16).padStart(2, "0")).join("")}${channels === 4 && px[3] !== 255 ? `/${px[3]}` : ""}`;
  };
  /** How many pixels are exactly this colour (#rrggbb, opaque). */
  const count = (color: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
    let n = 0;
    for (const row of rows) {
      for (let i = 0; i < stride; i += channels) if (row[i] === r && row[i + 1] === g && row[i + 2] === b && (channels === 3 || row[i + 3] === 255)) n++;
    }
    return n;
  };
  return { width: header.width, height: header.height, pixel, count };
}

async function waitlist(name: string, color?: string) {
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name } })).body.data.waitlist;
  if (color) await setColor(w.key, color);
  return w as { key: string; slug: string; name: string };
}
const setColor = async (waitlistKey: string, color: string) =>
  expect((await s.request("PATCH", `/api/v1/waitlist/${waitlistKey}/settings`, { key, body: { email_template: { color } } })).status).toBe(200);

async function image(waitlistKey: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}/og/${waitlistKey}.png`, { headers });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const meta = (html: string, attr: "property" | "name", name: string) => new RegExp(`<meta ${attr}="${name.replace(/[.]/g, "\\.")}" content="([^"]*)">`).exec(html)?.[1];

test("a 1200x630 PNG on the waitlist's colour, its text white on a dark colour; public for an hour, with an ETag", async () => {
  const w = await waitlist(`Rocket ${uniq()}`, "#1D4ED8");
  const res = await image(w.key);
  expect([res.status, res.headers.get("content-type"), res.headers.get("cache-control")]).toEqual([200, "image/png", "public, max-age=3600"]);
  expect(res.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  const png = decodePng(res.bytes);
  expect([png.width, png.height]).toEqual([1200, 630]);
  // every corner is the background, the colour as stored (lowercased)
  expect([png.pixel(0, 0), png.pixel(1199, 0), png.pixel(0, 629), png.pixel(1199, 629)]).toEqual(["#1d4ed8", "#1d4ed8", "#1d4ed8", "#1d4ed8"]);
  expect(png.count("#ffffff")).toBeGreaterThan(5_000);
  expect(png.count("#111827")).toBe(0);
});

test("a light colour gets dark text (#111827), never white", async () => {
  const png = decodePng((await image((await waitlist(`Sunny ${uniq()}`, "#fde047")).key)).bytes);
  expect(png.pixel(0, 0)).toBe("#fde047");
  expect(png.count("#111827")).toBeGreaterThan(5_000);
  expect(png.count("#ffffff")).toBe(0);
});

test("If-None-Match with the ETag (or its weak form, in a list) is 304 without a body; another tag gets the image", async () => {
  const w = await waitlist(`Cached ${uniq()}`);
  const first = await image(w.key);
  const etag = first.headers.get("etag")!;
  for (const ifNoneMatch of [etag, `"other", W/${etag}`, "*"]) {
    const again = await image(w.key, { "if-none-match": ifNoneMatch });
    expect([again.status, again.bytes.length, again.headers.get("etag"), again.headers.get("cache-control")]).toEqual([304, 0, etag, "public, max-age=3600"]);
  }
  const other = await image(w.key, { "if-none-match": '"not-this-one"' });
  expect([other.status, other.bytes]).toEqual([200, first.bytes]);
});

test("a new email_template.color gives new bytes and a new ETag; the colour back gives the same bytes again (deterministic)", async () => {
  const w = await waitlist(`Recolour ${uniq()}`, "#0f766e");
  const before = await image(w.key);
  await setColor(w.key, "#b91c1c");
  const after = await image(w.key);
  expect(after.bytes).not.toEqual(before.bytes);
  expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
  expect(decodePng(after.bytes).pixel(0, 0)).toBe("#b91c1c");
  await setColor(w.key, "#0f766e");
  const back = await image(w.key);
  expect([back.bytes, back.headers.get("etag")]).toEqual([before.bytes, before.headers.get("etag")]);
});

test("names with markup characters, a long name and a name of one long word are drawn, each its own image (smoke)", async () => {
  const names = [`Rocket "Launch" <&> 'now' ${uniq()}`, `${"A very long waitlist name ".repeat(3)}${uniq()}`, `Supercalifragilistic${"x".repeat(60)}${uniq()}`];
  const tags = new Set<string>();
  for (const name of names) {
    const res = await image((await waitlist(name)).key);
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "image/png"]);
    const png = decodePng(res.bytes);
    expect([png.width, png.height, png.pixel(0, 0)]).toEqual([1200, 630, "#111827"]);
    tags.add(res.headers.get("etag")!);
  }
  expect(tags.size).toBe(names.length);
});

test("an unknown key, a key without .png and another extension are the friendly 404 page", async () => {
  const w = await waitlist(`Known ${uniq()}`);
  for (const path of ["/og/no-such-key.png", `/og/${w.key}`, `/og/${w.key}.jpg`, "/og/.png"]) {
    const res = await fetch(`${s.url}${path}`);
    expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 404, "text/html; charset=utf-8"]);
    expect(await res.text()).toContain("Image not found");
  }
});

test("the hosted page and the status page name it as og:image (absolute, 1200x630) while og_image_url is unset", async () => {
  const w = await waitlist(`Shared ${uniq()}`, "#7c3aed");
  const base = `/api/v1/waitlist/${w.key}`;
  expect((await s.request("POST", `${base}/landing-page`, { key, body: { headline: "Be first in line" } })).status).toBe(201);
  // publishing draws the image ahead of its first request
  expect((await s.request("POST", `${base}/landing-page/publish`, { key })).status).toBe(200);
  const url = `${BASE}/og/${w.key}.png`;
  const page = await (await fetch(`${s.url}/p/${w.slug}`)).text();
  const sub = (await s.request("POST", `${base}/sign-up`, { key, body: { email: `og-${uniq()}@example.com` } })).body;
  const status = await (await fetch(`${s.url}/t/${sub.sign_up_token}`)).text();
  // the address carries the drawing's version, so a new name or colour is a new image to caches
  const versioned = new RegExp(`^${url.replace(/[.?]/g, "\\$&")}\\?v=[\\w-]{8}$`);
  for (const html of [page, status]) {
    expect(meta(html, "property", "og:image")).toMatch(versioned);
    expect([meta(html, "property", "og:image:width"), meta(html, "property", "og:image:height")]).toEqual(["1200", "630"]);
    expect([meta(html, "name", "twitter:card"), meta(html, "name", "twitter:image")]).toEqual(["summary_large_image", meta(html, "property", "og:image")]);
  }
  expect(meta(page, "property", "og:image")).toBe(meta(status, "property", "og:image"));
  const res = await image(new URL(url).pathname.slice("/og/".length, -".png".length));
  expect([res.status, decodePng(res.bytes).pixel(0, 0)]).toEqual([200, "#7c3aed"]);
});
