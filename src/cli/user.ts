// `waitlist user create` (issue 48): a user of an account and their one-time sign-in link, where they set a password.
import { eq } from "drizzle-orm";
import { loadConfig } from "../config";
import { createUser, linkUrl } from "../users/service";
import { ROLES } from "../db/schema";
import { CommandError, type Command } from "./command";

const create: Command = {
  name: "user create",
  summary: "add a user to an account and print their one-time sign-in link (7 days)",
  flags: [
    { name: "username", value: "ACCOUNT", help: "the account's username" },
    { name: "email", value: "E", help: "the user's email address (they sign in with it)" },
    { name: "role", value: ROLES.join("|"), help: "what they may do", fallback: "owner" },
    { name: "name", value: "N", help: "their name" },
  ],
  required: ["username", "email"],
  async run({ flags, db, env }) {
    const database = await db();
    const { accounts } = database.t;
    const username = flags.get("username")!.trim();
    const [account] = await database.select({ id: accounts.id }).from(accounts).where(eq(accounts.username, username));
    if (!account) throw new CommandError("not_found", `no account with username "${username}"`);
    const { baseUrl } = loadConfig(env, new Map(), ["baseUrl", "port"]);
    const made = await createUser(database, account.id, { email: flags.get("email")!, role: flags.get("role") ?? "owner", name: flags.get("name") });
    const url = linkUrl(baseUrl, "invite", made.token);
    return { json: { user: made.user, sign_in_url: url }, text: `user ${made.user.id} <${made.user.email}> (${made.user.role}): set a password within 7 days at ${url}` };
  },
};

export const userCommands: Command[] = [create];
