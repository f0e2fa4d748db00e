// own-commits.ts: when a cached read still holds across this process's own commits, and which of its commits the group commit records as its own.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { fileWriter } from "../src/db/sqlite/file-writer";
import { createGroupWriter } from "../src/db/sqlite/group-writer";
import { ownCommits, transactionCount, type OwnCommits } from "../src/db/sqlite/own-commits";

describe("cleanSince", () => {
  const tables = new Set(["api_keys", "accounts", "waitlists"]);

  test("holds across a run of own commits that wrote none of the tables, and not past one that wrote one", () => {
    const commits = ownCommits();
    commits.record("1:10:7", "2:14:7", new Set(["subscribers", "waitlists#counts"]));
    commits.record("2:14:7", "3:20:7", new Set(["outbox"]));
    expect(commits.cleanSince("1:10:7", "3:20:7", tables)).toBe(true);
    expect(commits.cleanSince("3:20:7", "3:20:7", tables)).toBe(true);
    commits.record("3:20:7", "4:22:7", new Set(["api_keys"]));
    expect(commits.cleanSince("1:10:7", "4:22:7", tables)).toBe(false);
    expect(commits.cleanSince("3:20:7", "4:22:7", new Set(["landing_pages"]))).toBe(true);
  });

  test("a commit it does not know (another process's) breaks the run", () => {
    const commits = ownCommits();
    commits.record("1:10:7", "2:14:7", new Set(["subscribers"]));
    // 2 -> 3 was somebody else's
    commits.record("3:18:7", "4:20:7", new Set(["subscribers"]));
    expect(commits.cleanSince("1:10:7", "4:20:7", tables)).toBe(false);
    expect(commits.cleanSince("3:18:7", "4:20:7", tables)).toBe(true);
  });

  test("everything written, or a stamp that is not a WAL index's, never holds", () => {
    const commits = ownCommits();
    commits.record("1:10:7", "2:14:7", "all");
    expect(commits.cleanSince("1:10:7", "2:14:7", new Set(["meta"]))).toBe(false);
    expect(commits.cleanSince(null, "2:14:7", tables)).toBe(false);
    expect(commits.cleanSince(3, 4, tables)).toBe(false);
  });

  test("the commit under way holds from its next transaction on, before it is recorded, while it lasts", () => {
    const commits = ownCommits();
    commits.record("1:10:7", "2:14:7", new Set(["subscribers"]));
    // a reader saw the stamp of the commit under way (the next transaction after its stamp under the write lock)
    commits.underWay({ before: "2:14:7", written: new Set(["subscribers", "waitlists#counts"]) });
    expect(commits.cleanSince("1:10:7", "3:19:7", tables)).toBe(true);
    // a WAL restarted by it: a new salt, the same count
    expect(commits.cleanSince("1:10:7", "3:2:8", tables)).toBe(true);
    // two transactions on: somebody else's after it
    expect(commits.cleanSince("1:10:7", "4:25:7", tables)).toBe(false);
    commits.underWay(null);
    expect(commits.cleanSince("1:10:7", "3:19:7", tables)).toBe(false);
    commits.underWay({ before: "2:14:7", written: new Set(["api_keys"]) });
    expect(commits.cleanSince("1:10:7", "3:19:7", tables)).toBe(false);
  });

  test("the transaction counter is the stamp's first field", () => {
    expect(transactionCount("41:1200:99")).toBe(41);
    expect(transactionCount("xmin:xmax:")).toBeNull();
    expect(transactionCount(null)).toBeNull();
  });
});

describe("the group commit notes its own commits", () => {
  /** One write through a group writer on a fresh file whose stamps are scripted (read before and after the group). */
  async function writeWithStamps(before: string, after: string, sql: string) {
    const dir = mkdtempSync(join(tmpdir(), "waitlist-own-"));
    const client = createClient({ url: `file:${join(dir, "t.db")}` });
    try {
      await client.execute("CREATE TABLE api_keys (id TEXT PRIMARY KEY, revoked_at INTEGER)");
      await client.execute("INSERT INTO api_keys (id) VALUES ('k1')");
      const stamps = [before, after];
      const commits = ownCommits();
      await createGroupWriter(client, { observe: { stamp: () => stamps.shift() ?? null, commits } }).write([{ sql, args: [] }]);
      return commits;
    } finally {
      client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const accounts = new Set(["accounts"]);

  test("a group that changed a row, with exactly one transaction between its stamps, is recorded with what it wrote", async () => {
    const commits = await writeWithStamps("4:10:7", "5:12:7", "UPDATE api_keys SET revoked_at = 1 WHERE id = 'k1'");
    expect(commits.cleanSince("4:10:7", "5:12:7", accounts)).toBe(true);
    expect(commits.cleanSince("4:10:7", "5:12:7", new Set(["api_keys"]))).toBe(false);
  });

  test("a group that changed nothing is not: the one transaction between its stamps was somebody else's", async () => {
    const commits = await writeWithStamps("4:10:7", "5:12:7", "UPDATE api_keys SET revoked_at = 1 WHERE id = 'nobody'");
    expect(commits.cleanSince("4:10:7", "5:12:7", accounts)).toBe(false);
  });

  test("two transactions between its stamps (another process committed too) are not recorded", async () => {
    const commits = await writeWithStamps("4:10:7", "6:14:7", "UPDATE api_keys SET revoked_at = 2 WHERE id = 'k1'");
    expect(commits.cleanSince("4:10:7", "6:14:7", accounts)).toBe(false);
  });

  /**
   * One write through a group writer on the file's own writer (a fresh file with a key 'k1'), its stamps scripted
   * (read under the write lock, then after the commit); each announcement of a commit under way
   * is kept with what a request reading the stamp `seen` then finds.
   */
  async function writeOnFile(stamps: string[], sql: string, seen: [string, string]) {
    const dir = mkdtempSync(join(tmpdir(), "waitlist-own-"));
    const path = join(dir, "t.db");
    const client = createClient({ url: `file:${path}` });
    const file = fileWriter(path, 5_000);
    try {
      await client.execute("PRAGMA journal_mode = WAL");
      await client.execute("CREATE TABLE api_keys (id TEXT PRIMARY KEY, revoked_at INTEGER)");
      await client.execute("INSERT INTO api_keys (id) VALUES ('k1')");
      const commits = ownCommits();
      const announced: unknown[] = [];
      const watched: OwnCommits = {
        ...commits,
        underWay(commit) {
          commits.underWay(commit);
          announced.push(commit && { ...commit, seen: commits.cleanSince(...seen, accounts) });
        },
      };
      await createGroupWriter(client, { observe: { stamp: () => stamps.shift() ?? null, commits: watched }, file }).write([{ sql, args: [] }]);
      return { commits, announced };
    } finally {
      await file.close();
      client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("on the file's own writer, the stamp is read under the write lock and the commit is under way until recorded", async () => {
    // another process committed 4:10:7 -> 5:12:7 before the lock; a request reads this commit's stamp before the group hears of it
    const { commits, announced } = await writeOnFile(["5:12:7", "6:15:7"], "UPDATE api_keys SET revoked_at = 1 WHERE id = 'k1'", ["5:12:7", "6:15:7"]);
    expect(announced).toEqual([{ before: "5:12:7", written: new Set(["api_keys"]), seen: true }, null]);
    expect(commits.cleanSince("5:12:7", "6:15:7", accounts)).toBe(true);
    expect(commits.cleanSince("5:12:7", "6:15:7", new Set(["api_keys"]))).toBe(false);
    // the commit before it was another process's
    expect(commits.cleanSince("4:10:7", "6:15:7", accounts)).toBe(false);
  });

  test("a group on the file's writer that changed nothing announces no commit", async () => {
    const { commits, announced } = await writeOnFile(["4:10:7", "5:12:7"], "UPDATE api_keys SET revoked_at = 1 WHERE id = 'nobody'", ["4:10:7", "5:12:7"]);
    expect(announced).toEqual([null]);
    expect(commits.cleanSince("4:10:7", "5:12:7", accounts)).toBe(false);
  });
});
