// `waitlist account create|set-plan|credits`: thin wrappers over the account service.
import { PLANS } from "../db/schema";
import { createAccount, DEFAULT_AI_CREDITS, parsePlan, setCredits, setPlan } from "../account/service";
import { AppError } from "../http/errors";
import { UsageError } from "./args";
import { countFlag, type Command } from "./command";

function planFlag(raw: string | undefined) {
  try {
    return parsePlan(raw ?? "business");
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(`--plan must be one of: ${PLANS.join(", ")}`);
    throw err;
  }
}

export const accountCommands: Record<string, Command> = {
  create: {
    usage: "account create --username NAME [--plan free|launch|pro|growth|business] [--ai-credits N] [--label L] [--json]",
    flags: ["username", "plan", "ai-credits", "label"],
    required: ["username"],
    async run(db, flags) {
      const plan = planFlag(flags.get("plan"));
      const aiCredits = countFlag(flags, "ai-credits", DEFAULT_AI_CREDITS);
      const created = await createAccount(db, { username: flags.get("username")!, plan, aiCredits, label: flags.get("label") ?? "default" });
      return {
        json: { account: created.account, api_key: created.apiKey },
        text: `account ${created.account.username} (${created.account.id}) on ${plan}\napi key (shown once): ${created.apiKey}`,
      };
    },
  },
  "set-plan": {
    usage: "account set-plan --username NAME --plan free|launch|pro|growth|business [--json]",
    flags: ["username", "plan"],
    required: ["username", "plan"],
    async run(db, flags) {
      const account = await setPlan(db, flags.get("username")!, planFlag(flags.get("plan")));
      return { json: { account }, text: `account ${account.username} is now on ${account.plan}` };
    },
  },
  credits: {
    usage: "account credits --username NAME --set N [--json]",
    flags: ["username", "set"],
    required: ["username", "set"],
    async run(db, flags) {
      const account = await setCredits(db, flags.get("username")!, countFlag(flags, "set", 0));
      return { json: { account }, text: `account ${account.username} has ${account.ai_credits} AI credits` };
    },
  },
};
