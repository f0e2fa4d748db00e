// Issue 49: the old `webhook` setting (`{url, enabled}` + `signing_secret`) is the waitlist's first endpoint: the
// settings show it, PATCHing them edits it (or makes it, with the X-Webhook-* headers it always sent), and a null URL
// deletes it. With no endpoint, the settings show the secret the next one made this way will take.
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/db";
import type { Waitlist } from "../http/api";
import { badRequest } from "../http/errors";
import { checkWebhookUrl, createEndpoint, deleteEndpoint, listEndpoints, updateEndpoint, type Endpoint } from "./endpoints";

export async function firstEndpoint(db: Db, waitlistId: string): Promise<Endpoint | undefined> {
  return (await listEndpoints(db, waitlistId))[0];
}

export const webhookSetting = (w: Pick<Waitlist, "signingSecret">, first: Endpoint | undefined) => ({
  url: first?.url ?? null,
  enabled: first ? Boolean(first.enabled) : false,
  signing_secret: first?.secret ?? w.signingSecret,
});

/** Checked before the transaction: the setting's URL (field `webhook.url`) and the rule that enabled needs a URL. */
export function checkWebhookSetting(patch: { url?: string | null; enabled?: boolean }, first: Endpoint | undefined, blockPrivate: boolean) {
  const url = patch.url === undefined ? (first?.url ?? null) : patch.url === null ? null : checkWebhookUrl(patch.url, blockPrivate, "webhook.url");
  const enabled = patch.enabled ?? (first ? Boolean(first.enabled) : false);
  if (enabled && !url) throw badRequest("webhook.url is required while webhook.enabled is true");
  return { url, enabled };
}

/** Applies the checked setting inside the settings' transaction; the rows whose held retries it released. */
export async function applyWebhookSetting(tx: Db, w: Waitlist, first: Endpoint | undefined, want: { url: string | null; enabled: boolean }): Promise<string[]> {
  if (want.url === null) {
    if (!first) return [];
    const gone = await deleteEndpoint(tx, w, first.id);
    // the secret stays the setting's: an endpoint made from it again signs as receivers expect
    await tx.exec(sql`UPDATE waitlists SET signing_secret = ${gone.secret} WHERE id = ${w.id}`);
    return [];
  }
  if (!first) {
    await createEndpoint(tx, w, { url: want.url, enabled: want.enabled }, { blockPrivate: false, secret: w.signingSecret, legacy: true });
    return [];
  }
  if (first.url === want.url && Boolean(first.enabled) === want.enabled) return [];
  return (await updateEndpoint(tx, w, first.id, { url: want.url, enabled: want.enabled }, { blockPrivate: false })).released;
}

/** The settings' rotate-secret: the first endpoint's (with its 24-hour overlap), or the secret the next one takes. */
export async function rotateSettingSecret(db: Db, w: Waitlist, rotate: (id: string) => Promise<Endpoint>, fresh: string): Promise<string> {
  const first = await firstEndpoint(db, w.id);
  if (first) return (await rotate(first.id)).secret;
  const { waitlists } = db.t;
  await db.tx((tx) => tx.update(waitlists).set({ signingSecret: fresh }).where(eq(waitlists.id, w.id)));
  return fresh;
}
