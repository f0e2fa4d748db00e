// Issue 49: an endpoint's `format`: the event's JSON as it is, or a short human message for a chat channel (a Slack
// incoming webhook reads `text`, a Discord one `content`; both bodies carry `text`).
import type { WebhookFormat } from "./endpoints";

interface Person {
  email?: string | null;
  name?: string | null;
  position?: number;
}

interface Envelope {
  type: string;
  waitlist: { name: string };
  data: { subscriber?: Person; referrer?: Person; referee?: Person; milestone?: { referrals: number; reward: string }; message?: string };
}

const who = (p: Person | undefined) => (!p ? "A subscriber" : p.name && p.email ? `${p.name} (${p.email})` : (p.email ?? p.name ?? "A subscriber"));
const place = (p: Person | undefined) => (p?.position !== undefined ? `, #${p.position} in line` : "");

/** One line naming the subscriber, per event type. */
export function chatText(e: Envelope): string {
  const s = e.data.subscriber;
  const list = e.waitlist.name;
  switch (e.type) {
    case "subscriber.created":
      return `New sign-up on ${list}: ${who(s)}${place(s)}.`;
    case "subscriber.pending":
      return `${who(s)} signed up for ${list} and has yet to confirm their email.`;
    case "subscriber.confirmed":
      return `${who(s)} confirmed their email for ${list}${place(s)}.`;
    case "subscriber.updated":
      return `${who(s)} was updated on ${list}.`;
    case "subscriber.deleted":
      return `${who(s)} was removed from ${list}.`;
    case "referral.credited":
      return `${who(e.data.referrer)} referred ${who(e.data.referee)} to ${list}.`;
    case "milestone.reached":
      return `${who(s)} reached ${e.data.milestone?.referrals ?? "a milestone of"} referrals on ${list}: ${e.data.milestone?.reward ?? "a reward"}.`;
    case "subscriber.invited":
      return `${who(s)} was invited in from the ${list} waitlist.`;
    case "subscriber.joined":
      return `${who(s)} accepted their invitation to ${list}.`;
    case "subscriber.rejected":
      return `${who(s)} was turned down on ${list}.`;
    case "subscriber.unsubscribed":
      return `${who(s)} unsubscribed from the ${list} emails.`;
    case "subscriber.bounced":
      return `An email from ${list} to ${who(s)} bounced.`;
    case "subscriber.complained":
      return `${who(s)} marked an email from ${list} as spam.`;
    default:
      return e.data.message ? `${e.data.message} (${list})` : `${e.type} on ${list}.`;
  }
}

/** Slack reads &, < and > as markup. */
const slackEscape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The body an endpoint of this format is sent for an event's JSON. */
export function formatBody(format: WebhookFormat, json: string): string {
  if (format === "json") return json;
  const text = chatText(JSON.parse(json) as Envelope);
  if (format === "slack") return JSON.stringify({ text: slackEscape(text) });
  // Discord: no one is pinged by a name that looks like a mention
  return JSON.stringify({ content: text, text, allowed_mentions: { parse: [] } });
}
