// The single executable (DESIGN §1, §3): `npm run build` output copied alone into an empty folder runs the
// server and every admin command, with migrations, pages, Swagger UI and the IP database inside.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { engine, runCli, startServer, until, type TestServer } from "./support/server";
import { removeDir, tempDir } from "./support/cleanup";
import { renderShareImage } from "../src/pages/og-image";

const ROOT = join(import.meta.dir, "..");
let dir: string;
let bin: string;
let s: TestServer;

beforeAll(async () => {
  const build = Bun.spawn([process.execPath, join(ROOT, "scripts", "build.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [code, err] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`build failed: ${err}`);
  dir = tempDir("waitlist-bin-");
  for (const file of readdirSync(join(ROOT, "dist"))) copyFileSync(join(ROOT, "dist", file), join(dir, file));
  bin = join(dir, "waitlist");
  s = await startServer({ bin, env: { RATE_LIMITS: "off" } });
}, 120_000);
afterAll(async () => {
  await s?.stop();
  if (dir) removeDir(dir);
});

// SQLite only: it ends with `backup`, VACUUM INTO of the embedded file
test("the binary runs from a folder with no node_modules: serve, the admin commands, the API, Swagger UI, pages, the share image and geolocation", async () => {
  expect(existsSync(join(dir, "node_modules"))).toBe(false);
  const created = await s.cli("account", "create", "--username", "binuser", "--plan", "growth", "--json");
  expect(created.code).toBe(0);
  const key = created.json.api_key;
  expect((await s.cli("account", "set-plan", "--username", "binuser", "--plan", "business", "--json")).code).toBe(0);
  expect((await s.cli("account", "credits", "--username", "binuser", "--set", "3", "--json")).json.account.ai_credits).toBe(3);
  const extra = await s.cli("key", "create", "--username", "binuser", "--label", "ci", "--json");
  expect(extra.json.api_key).toMatch(/^wl_acct_/);
  expect((await s.cli("key", "revoke", "--id", extra.json.id, "--json")).code).toBe(0);

  const me = await s.request("GET", "/api/v1/me", { key });
  expect(me.body.data.plan.name).toBe("Business");
  const w = (await s.request("POST", "/api/v1/waitlists", { key, body: { name: "Binary launch", landing_page: { headline: "Built to ship" } } })).body.data.waitlist;
  expect((await s.cli("waitlist-key", "--waitlist", w.key, "--json")).json.api_key).toMatch(/^wl_/);

  // the offline IP database is inside the binary
  const signUp = await s.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "geo@example.com", metadata: { client_ip: "81.2.69.160" } } });
  expect(signUp.status).toBe(200);
  // the sign-up committed through the file writer: libSQL's native addon is the embedded one, loaded once, and
  // nothing is loaded from the build machine's node_modules (scripts/build.ts; two copies of SQLite hung the server)
  const mapped = new Set(
    readFileSync(`/proc/${s.proc.pid}/maps`, "utf8")
      .split("\n")
      .map((line) => line.split(/\s+/)[5] ?? "")
      .filter((file) => file.endsWith(".node")),
  );
  expect([...mapped].filter((file) => file.includes("node_modules"))).toEqual([]);
  expect(mapped.size).toBe(1);
  const sub = (await s.request("GET", `/api/v1/waitlist/${w.key}/subscribers/geo%40example.com`, { key })).body.data.subscriber;
  expect(sub.country).toBe("GB");
  expect(sub.timezone).toBe("Europe/London");
  // and so is the disposable-domain list (laid out at build time by a macro)
  const disposable = await s.request("POST", `/api/v1/waitlist/${w.key}/sign-up`, { key, body: { email: "someone@mailinator.com" } });
  expect([disposable.status, disposable.body.message]).toEqual([400, expect.stringContaining("disposable")]);

  const swagger = await fetch(`${s.url}/swagger`);
  expect(swagger.status).toBe(200);
  // Swagger UI's files are served from the binary's embedded copies
  for (const [file, type, text] of [["swagger-ui-bundle.js", "text/javascript", "SwaggerUIBundle"], ["swagger-ui.css", "text/css", ".swagger-ui"]]) {
    const asset = await fetch(`${s.url}/swagger/assets/${file}`);
    expect([asset.status, asset.headers.get("content-type"), (await asset.text()).includes(text)]).toEqual([200, `${type}; charset=utf-8`, true]);
  }
  expect((await (await fetch(`${s.url}/swagger/json`)).json() as any).info.version).toBe("1.0.0");
  // the dashboard and its modules are inside the binary too
  expect((await fetch(`${s.url}/dashboard`)).status).toBe(200);
  const dashboardJs = await fetch(`${s.url}/dashboard/assets/view-overview.js`);
  expect([dashboardJs.status, (await dashboardJs.text()).includes("export async function overviewView")]).toEqual([200, true]);

  expect((await s.request("POST", `/api/v1/waitlist/${w.key}/landing-page/publish`, { key })).status).toBe(200);
  const page = await fetch(`${s.url}/p/${w.slug}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Built to ship");
  expect((await fetch(`${s.url}/assets/hosted.css`)).status).toBe(200);
  // issue 43: an icon of its own, embedded in the binary too
  const icon = await fetch(`${s.url}/favicon.ico`);
  expect([icon.status, icon.headers.get("content-type"), (await icon.text()).startsWith("<svg")]).toEqual([200, "image/svg+xml", true]);
  // issue 46: the share image, drawn by resvg's WebAssembly with the font embedded in the binary: the same bytes as
  // from the source (without the font, the text would be missing and the bytes differ)
  const og = await fetch(`${s.url}/og/${w.key}.png`);
  const png: Uint8Array = new Uint8Array(await og.arrayBuffer());
  expect([og.status, og.headers.get("content-type")]).toEqual([200, "image/png"]);
  expect(png).toEqual(await renderShareImage({ name: "Binary launch", color: "#111827" }));

  // backup snapshots the embedded file (PostgreSQL's is pg_dump, which backup names when it refuses)
  const backup = join(dir, "backup.db");
  const b = await s.cli("backup", "--to", backup, "--json");
  expect(b.code).toBe(engine === "pg" ? 2 : 0);
  if (engine === "sqlite") expect(b.json.bytes).toBeGreaterThan(0);
  else expect(b.json.error.message).toContain("pg_dump");

  const usage = await runCli(["frobnicate"], {}, bin);
  expect(usage.code).toBe(2);
});

test("every line the binary writes on stdout is a JSON log line, as from the source (no framework warning)", async () => {
  // issue 17: whitespace minification made Elysia's handler inference print 5 lines of warning and code here
  const { key } = await s.account();
  for (const path of ["/api/v1/me", "/api/v1/waitlists", "/healthz", "/no/such/path"]) await s.request("GET", path, { key });
  const last = (await s.request("GET", "/healthz")).headers.get("x-request-id");
  await until(() => s.logs.some((l) => l.includes(`"req_id":"${last}"`)), 5_000, "the last request's log line");
  const notJson = s.logs.filter((line) => {
    try {
      return typeof JSON.parse(line) !== "object";
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  expect(s.logs.length).toBeGreaterThan(10);
});
