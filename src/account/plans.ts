// Plans: display names, gates and per-minute limits per bucket (spec: Limits; DESIGN §3).
import type { PlanId } from "../db/schema";

export type Bucket =
  | "subscribers"
  | "analytics"
  | "waitlists_create"
  | "waitlists_list"
  | "account"
  | "account_keys"
  | "settings"
  | "landing_create"
  | "landing_update"
  | "landing_get"
  | "landing_publish"
  | "landing_generate"
  | "landing_preview";

interface Plan {
  name: string;
  /** Gate level: Pro is "as Growth" (DESIGN §3), so both sit at 2. */
  level: number;
  apiAccess: boolean;
  maxWaitlists: number | "unlimited";
  hasAi: boolean;
  limits: Record<Bucket, number>;
}

// Per minute. Landing pages: "default / Growth or higher"; settings, keys and previews (the dashboard's
// live preview, one per pause in typing) are our extensions.
const SMALL = { landing_create: 5, landing_update: 5, landing_get: 30, landing_publish: 3, landing_generate: 2, landing_preview: 60 };
const LARGE = { landing_create: 10, landing_update: 10, landing_get: 60, landing_publish: 5, landing_generate: 2, landing_preview: 120 };

export const PLAN_TABLE: Record<PlanId, Plan> = {
  free: {
    name: "Free", level: 0, apiAccess: false, maxWaitlists: 1, hasAi: false,
    limits: { subscribers: 10, analytics: 10, waitlists_create: 5, waitlists_list: 10, account: 20, account_keys: 10, settings: 30, ...SMALL },
  },
  launch: {
    name: "Launch", level: 1, apiAccess: false, maxWaitlists: 3, hasAi: true,
    limits: { subscribers: 10, analytics: 10, waitlists_create: 5, waitlists_list: 10, account: 20, account_keys: 10, settings: 30, ...SMALL },
  },
  pro: {
    name: "Pro", level: 2, apiAccess: true, maxWaitlists: 10, hasAi: true,
    limits: { subscribers: 60, analytics: 200, waitlists_create: 5, waitlists_list: 60, account: 20, account_keys: 10, settings: 60, ...LARGE },
  },
  growth: {
    name: "Growth", level: 2, apiAccess: true, maxWaitlists: 25, hasAi: true,
    limits: { subscribers: 60, analytics: 200, waitlists_create: 5, waitlists_list: 60, account: 60, account_keys: 10, settings: 60, ...LARGE },
  },
  business: {
    name: "Business", level: 3, apiAccess: true, maxWaitlists: "unlimited", hasAi: true,
    limits: { subscribers: 120, analytics: 400, waitlists_create: 5, waitlists_list: 60, account: 120, account_keys: 10, settings: 60, ...LARGE },
  },
};

export const GROWTH_LEVEL = PLAN_TABLE.growth.level;

export const planOf = (id: PlanId): Plan => PLAN_TABLE[id];
export const isGrowthOrHigher = (id: PlanId): boolean => PLAN_TABLE[id].level >= GROWTH_LEVEL;

/** Requests a minute allowed without a valid key, per client IP (answers 401 until then). */
export const UNAUTHENTICATED_LIMIT = 60;
