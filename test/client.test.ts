// The TypeScript client of clients/typescript (issue 49 item 6): its types are what the server's document gives now,
// and its own test (which starts a server from this repository) passes. Not an e2e file: the client's test runs on
// the embedded engine whatever the pass.
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

test("clients/typescript/src/schema.d.ts is generated from the document as it is now", () => {
  const r = Bun.spawnSync([process.execPath, join(ROOT, "scripts", "generate-client.ts"), "--check"], { cwd: ROOT, stderr: "pipe" });
  expect([r.exitCode, r.stderr.toString()]).toEqual([0, ""]);
});

test("the client's own test passes: a sign-up through the typed client, the webhook verified", async () => {
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000"], { cwd: join(ROOT, "clients", "typescript"), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect([code, `${out}${err}`]).toEqual([0, expect.stringContaining("1 pass")]);
}, 120_000);
