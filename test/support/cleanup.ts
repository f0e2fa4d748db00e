// What a test run starts or creates (server processes, temporary folders, browsers) is registered here and
// removed at the end of the run (bunfig.toml preloads this file), even when a test failed before its own
// afterAll or forgot it. bun test runs no process "exit" hook, hence the run-wide afterAll.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Child {
  pid: number;
  exitCode: number | null;
  exited: Promise<number>;
  kill(signal?: NodeJS.Signals | number): void;
}

const children = new Set<Child>();
const folders = new Set<string>();
const closers = new Set<() => unknown>();

/** A fresh folder under the system's temporary folder, deleted at the end of the run if not before. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  folders.delete(dir);
}

/** A child process killed at the end of the run if it is still alive then. */
export function track<T extends Child>(child: T): T {
  children.add(child);
  void child.exited.then(() => children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves its exit code. */
export async function terminate(child: Child, graceMs = 15_000): Promise<number> {
  if (child.exitCode === null) child.kill("SIGTERM");
  const timer = setTimeout(() => child.exitCode === null && child.kill("SIGKILL"), graceMs);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Something else to undo at the end of the run (a browser); returns the unregister function. */
export function onCleanup(close: () => unknown): () => void {
  closers.add(close);
  return () => closers.delete(close);
}

/** Stops whatever is left: closers first (a browser), then processes (SIGTERM, SIGKILL after 5 s), then folders. */
export async function cleanUpEverything(): Promise<void> {
  await Promise.allSettled([...closers].map(async (close) => close()));
  closers.clear();
  await Promise.allSettled([...children].map((c) => terminate(c, 5_000)));
  children.clear();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}

function killNow(): void {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {}
  }
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
}

// preloaded: this afterAll runs once, after the last test file
afterAll(cleanUpEverything, 30_000);
// an interrupted run (Ctrl-C, a CI timeout) cleans up too
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
  process.once(signal, () => {
    killNow();
    process.exit(code);
  });
}
