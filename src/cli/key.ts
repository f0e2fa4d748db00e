// `waitlist key create|revoke` and `waitlist waitlist-key`: thin wrappers over the key functions of the account service.
import { createAccountKeyFor, regenerateWaitlistKeyFor, revokeKey } from "../account/service";
import type { Command } from "./command";

const create: Command = {
  name: "key create",
  summary: "create another account key (shown once)",
  flags: [
    { name: "username", value: "NAME", help: "the account's username" },
    { name: "label", value: "L", help: "the key's name" },
  ],
  required: ["username", "label"],
  async run({ flags, db }) {
    const key = await createAccountKeyFor(await db(), flags.get("username")!, flags.get("label")!);
    return { json: { id: key.id, name: key.name, api_key: key.api_key }, text: `key ${key.id} "${key.name}" (shown once): ${key.api_key}` };
  },
};

const revoke: Command = {
  name: "key revoke",
  summary: "revoke an account or per-waitlist key by id",
  flags: [{ name: "id", value: "KEY_ID", help: "the key's id" }],
  required: ["id"],
  async run({ flags, db }) {
    const result = await revokeKey(await db(), flags.get("id")!.trim());
    return { json: result, text: `key ${result.id} revoked` };
  },
};

export const keyCommands: Command[] = [create, revoke];

export const waitlistKeyCommand: Command = {
  name: "waitlist-key",
  summary: "create or regenerate a waitlist's per-waitlist key (the old one stops working)",
  flags: [{ name: "waitlist", value: "WAITLIST_KEY", help: "the waitlist's key" }],
  required: ["waitlist"],
  async run({ flags, db }) {
    const key = await regenerateWaitlistKeyFor(await db(), flags.get("waitlist")!);
    return { json: { api_key: key.api_key }, text: `per-waitlist key (shown once; the previous one no longer works): ${key.api_key}` };
  },
};
