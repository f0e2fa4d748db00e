// Which outbox rows a change writes: webhook events (a row per endpoint, issue 49) and emails (DESIGN §4).
import { sql, type SQL } from "drizzle-orm";
import type { Waitlist } from "../http/api";
import { enqueue } from "./store";

/** Every webhook event type; each carries `data.subscriber` except referral.credited (DESIGN §4 Events). */
export const EVENT_TYPES = [
  "subscriber.created",
  "subscriber.pending",
  "subscriber.confirmed",
  "subscriber.updated",
  "subscriber.deleted",
  "referral.credited",
  "milestone.reached",
  "subscriber.invited",
  "subscriber.joined",
  "subscriber.rejected",
  "subscriber.unsubscribed",
  "subscriber.bounced",
  "subscriber.complained",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Starts delivery of committed outbox rows in the background. */
export type Dispatch = (ids: string[]) => void;

export interface Outgoing {
  ids: string[];
  statements: SQL[];
}

export const nothing = (): Outgoing => ({ ids: [], statements: [] });

function add(out: Outgoing, e: { id: string; statement: SQL }) {
  out.ids.push(e.id);
  out.statements.push(e.statement);
  return out;
}

export function webhookEvent(
  out: Outgoing,
  w: Pick<Waitlist, "id" | "webhookEndpoints">,
  type: EventType,
  subscriberId: string,
  onlyIf: SQL = sql`TRUE`,
  extra: { relatedId?: string; payload?: (id: string, createdAt: number) => string } = {},
): Outgoing {
  // a waitlist without endpoints writes nothing (issue 49: with some, a row per endpoint whose filter takes the event)
  if (!w.webhookEndpoints) return out;
  return add(out, enqueue({ kind: "webhook", topic: type, waitlistId: w.id, subscriberId, relatedId: extra.relatedId, payload: extra.payload }, onlyIf));
}

/** `relatedId`: for a milestone email, the threshold reached (the reward is read from milestone_rewards). */
export function email(
  out: Outgoing,
  w: Pick<Waitlist, "id">,
  template: "confirmation" | "welcome" | "milestone" | "invitation" | "broadcast" | "data_export",
  subscriberId: string,
  onlyIf: SQL = sql`TRUE`,
  relatedId?: string,
): Outgoing {
  return add(out, enqueue({ kind: "email", topic: template, waitlistId: w.id, subscriberId, relatedId }, onlyIf));
}
