// `waitlist account create|set-plan|credits`: thin wrappers over the account service.
import { eq } from "drizzle-orm";
import { PLANS, type PlanId } from "../db/schema";
import { planOf } from "../account/plans";
import { createAccount, DEFAULT_AI_CREDITS, parsePlan, setCredits, setPlan } from "../account/service";
import { AppError } from "../http/errors";
import { UsageError } from "./args";
import { CommandError, countFlag, type Command, type Flag } from "./command";

const USERNAME: Flag = { name: "username", value: "NAME", help: "the account's username" };

function planFlag(raw: string | undefined, cmd: Command) {
  try {
    return parsePlan(raw ?? "business");
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(`--plan must be one of: ${PLANS.join(", ")}`, cmd);
    throw err;
  }
}

/** DESIGN §3: a plan without AI shows 0 credits, so a command must not report (or store as if usable) any other number. */
function refuseCreditsWithoutAi(plan: PlanId, credits: number) {
  if (credits > 0 && !planOf(plan).hasAi) {
    throw new CommandError("plan_has_no_ai", `the ${plan} plan has no AI: its credits always show 0; move the account to a paid plan first (account set-plan)`);
  }
}

const create: Command = {
  name: "account create",
  summary: "create an account and print its first API key (shown once)",
  flags: [
    USERNAME,
    { name: "plan", value: PLANS.join("|"), help: "the plan", fallback: "business" },
    { name: "ai-credits", value: "N", help: "AI credits to start with (the free plan shows 0 until it moves up)", fallback: String(DEFAULT_AI_CREDITS) },
    { name: "label", value: "L", help: "name of the first key", fallback: "default" },
  ],
  required: ["username"],
  async run({ flags, db }) {
    const plan = planFlag(flags.get("plan"), create);
    // what create prints holds no credits, and they count once the account moves to a paid plan
    const aiCredits = countFlag(flags, "ai-credits", DEFAULT_AI_CREDITS);
    const created = await createAccount(await db(), { username: flags.get("username")!, plan, aiCredits, label: flags.get("label") ?? "default" });
    return {
      json: { account: created.account, api_key: created.apiKey },
      text: `account ${created.account.username} (${created.account.id}) on ${plan}\napi key (shown once): ${created.apiKey}`,
    };
  },
};

const setPlanCommand: Command = {
  name: "account set-plan",
  summary: "move an account to another plan (takes effect on its next request)",
  flags: [USERNAME, { name: "plan", value: PLANS.join("|"), help: "the new plan" }],
  required: ["username", "plan"],
  async run({ flags, db }) {
    const account = await setPlan(await db(), flags.get("username")!, planFlag(flags.get("plan"), setPlanCommand));
    return { json: { account }, text: `account ${account.username} is now on ${account.plan}` };
  },
};

const credits: Command = {
  name: "account credits",
  summary: "set an account's remaining AI credits",
  flags: [USERNAME, { name: "set", value: "N", help: "the new number of credits" }],
  required: ["username", "set"],
  async run({ flags, db }) {
    const n = countFlag(flags, "set", 0);
    const handle = await db();
    const username = flags.get("username")!;
    const { accounts } = handle.t;
    const [found] = await handle.select({ plan: accounts.plan }).from(accounts).where(eq(accounts.username, username.trim()));
    if (found) refuseCreditsWithoutAi(found.plan as PlanId, n);
    const account = await setCredits(handle, username, n);
    return { json: { account }, text: `account ${account.username} has ${account.ai_credits} AI credits` };
  },
};

export const accountCommands: Command[] = [create, setPlanCommand, credits];
