// `waitlist key create|revoke` and `waitlist waitlist-key`: thin wrappers over the key functions of the account service.
import { createAccountKeyFor, regenerateWaitlistKeyFor, revokeKey } from "../account/service";
import type { Command } from "./command";

export const keyCommands: Record<string, Command> = {
  create: {
    usage: "key create --username NAME --label L [--json]",
    flags: ["username", "label"],
    required: ["username", "label"],
    async run(db, flags) {
      const key = await createAccountKeyFor(db, flags.get("username")!, flags.get("label")!);
      return { json: { id: key.id, name: key.name, api_key: key.api_key }, text: `key ${key.id} "${key.name}" (shown once): ${key.api_key}` };
    },
  },
  revoke: {
    usage: "key revoke --id KEY_ID [--json]",
    flags: ["id"],
    required: ["id"],
    async run(db, flags) {
      const result = await revokeKey(db, flags.get("id")!.trim());
      return { json: result, text: `key ${result.id} revoked` };
    },
  },
};

export const waitlistKeyCommand: Command = {
  usage: "waitlist-key --waitlist WAITLIST_KEY [--json]",
  flags: ["waitlist"],
  required: ["waitlist"],
  async run(db, flags) {
    const key = await regenerateWaitlistKeyFor(db, flags.get("waitlist")!);
    return { json: { api_key: key.api_key }, text: `per-waitlist key (shown once; the previous one no longer works): ${key.api_key}` };
  },
};
