// `waitlist backup --to FILE`: a consistent snapshot of a live embedded database with VACUUM INTO (DESIGN §8).
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { AppError } from "../http/errors";
import type { Command } from "./command";

export const backupCommand: Command = {
  usage: "backup --to FILE [--json]",
  flags: ["to"],
  required: ["to"],
  async run(db, flags) {
    const target = resolve(flags.get("to")!.trim());
    if (existsSync(target)) throw new AppError("conflict", `${target} already exists; choose a new file`);
    mkdirSync(dirname(target), { recursive: true });
    await db.$client.execute({ sql: "VACUUM INTO ?", args: [target] });
    const bytes = statSync(target).size;
    return { json: { backup: target, bytes }, text: `backup written to ${target} (${bytes} bytes)` };
  },
};
