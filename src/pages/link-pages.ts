// The pages behind the links that act (issue 16, DESIGN §10): a GET or HEAD only shows one of these,
// and its one button POSTs to the same URL, so a mail scanner or a chat preview changes nothing.
import type { Waitlist } from "../http/api";
import type { SubscriberRow } from "../subscribers/view";
import type { InviteState } from "../subscribers/access";
import { escapeHtml } from "./html";
import { page } from "./layout";

/** Title, text and one POST button to `action` (a same-origin path: CSP form-action 'self'). */
function actionPage(title: string, text: string, action: string, button: string, fields: Record<string, string> = {}): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>
<form method="post" action="${escapeHtml(action)}">${hidden}<button type="submit">${escapeHtml(button)}</button></form>`,
  );
}

const notice = (title: string, text: string, extra = "") => page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>${extra}`);

const statusLink = (sub: SubscriberRow, label: string) =>
  sub.status === "confirmed" ? `\n<p><a class="button" href="/t/${escapeHtml(sub.sign_up_token)}">${escapeHtml(label)}</a></p>` : "";

export function confirmPage(w: Waitlist, confirmToken: string): string {
  return actionPage(
    `Confirm your email for ${w.name}`,
    `One last step: confirm your email address to take your place on the ${w.name} waitlist.`,
    `/confirm/${confirmToken}`,
    "Confirm my email",
  );
}

/** A confirmation link followed again after it was used: nothing to do, the way to the status page. */
export function alreadyConfirmedPage(w: Waitlist, signUpToken: string): string {
  return notice("Your email is confirmed", `You are on the ${w.name} waitlist.`, `\n<p><a class="button" href="/t/${escapeHtml(signUpToken)}">See your place in line</a></p>`);
}

export function invitePage(w: Waitlist, inviteToken: string): string {
  return actionPage(`You're invited to ${w.name}`, `Your wait is over. Accept your invitation to ${w.name} to get in.`, `/i/${inviteToken}`, "Accept my invitation");
}

export function inviteAcceptedPage(w: Waitlist): string {
  return page(`Welcome to ${w.name}`, `<h1>You're in!</h1>\n<p>Your invitation to ${escapeHtml(w.name)} is accepted. Welcome aboard.</p>`);
}

/** What a used, expired or withdrawn invite link shows (status 410; issue 11: a friendly page, not an error). */
const INVITE_GONE: Record<Exclude<InviteState, "invited">, [string, string]> = {
  joined: ["Invitation already used", "This invitation to {name} has already been accepted. If that was you, you are all set."],
  expired: ["Invitation expired", "This invitation to {name} has expired. Ask the team for a new one."],
  revoked: ["Invitation withdrawn", "This invitation to {name} has been withdrawn by the team and can no longer be used."],
};

export function inviteGonePage(w: Waitlist, state: Exclude<InviteState, "invited">): string {
  const [title, text] = INVITE_GONE[state];
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p id="invite" data-state="${state}">${escapeHtml(text.replace("{name}", w.name))}</p>`);
}

/** The unsubscribe page: the body a mail client sends for one click (RFC 8058) is also what the button posts. */
export function unsubscribePage(w: Waitlist, sub: SubscriberRow): string {
  if (sub.unsubscribed_at !== null) return unsubscribedPage(w, sub);
  return actionPage(
    `Stop emails from ${w.name}?`,
    `You will get no more emails about the ${w.name} waitlist. You keep your place in line.`,
    `/u/${sub.sign_up_token}`,
    "Unsubscribe",
    { "List-Unsubscribe": "One-Click" },
  );
}

export function unsubscribedPage(w: Waitlist, sub: SubscriberRow): string {
  return notice("You're unsubscribed", `You will get no more emails about the ${w.name} waitlist. You keep your place in line.`, statusLink(sub, "See your place in line"));
}

export function leavePage(w: Waitlist, sub: SubscriberRow): string {
  const place = sub.position !== null && sub.access === "waiting" ? ` (#${(Number(sub.position) + w.positionOffset).toLocaleString("en")})` : "";
  return actionPage(
    `Leave the ${w.name} waitlist?`,
    `Your place in line${place}, your referrals and your details will be deleted, and we will not email you again. This cannot be undone.`,
    `/t/${sub.sign_up_token}/leave`,
    "Leave the waitlist",
  );
}

export function leftPage(w: Waitlist): string {
  return notice("You left the waitlist", `You are no longer on the ${w.name} waitlist, and your details have been deleted. We will not email you again.`);
}

/**
 * The status page's way out (issue 16): stop emails, or leave the waitlist; both lead to a page with a POST button.
 * Issue 47: and a copy of their data, by an emailed link.
 */
export function manageSection(sub: SubscriberRow): string {
  const token = escapeHtml(sub.sign_up_token);
  const emails = sub.unsubscribed_at !== null ? `<span id="emails-off">Emails are off</span>` : `<a id="stop-emails" href="/u/${token}">Stop emails</a>`;
  return `<nav class="manage" aria-label="Your subscription">${emails} · <a id="my-data" href="/t/${token}/data">Get my data</a> · <a id="leave" href="/t/${token}/leave">Leave the waitlist</a></nav>`;
}

/** Issue 47: asking for a copy of one's data: a button that emails a download link. */
export function dataRequestPage(w: Waitlist, sub: SubscriberRow): string {
  return actionPage(
    "Get a copy of your data",
    `We will email a download link to the address you signed up with. It works for 24 hours and gives everything the ${w.name} waitlist holds about you, as a JSON file.`,
    `/t/${sub.sign_up_token}/data`,
    "Email me the link",
  );
}

export const dataRequestedPage = (w: Waitlist) =>
  notice("Check your inbox", `A link to download your data from the ${w.name} waitlist is on its way to your email address (we send at most one every 10 minutes). It works for 24 hours.`);

/** The emailed link's page: the download is a POST (a robot following the link downloads nothing). */
export function dataDownloadPage(w: Waitlist, code: string): string {
  return actionPage("Download your data", `Everything the ${w.name} waitlist holds about you, as a JSON file.`, `/d/${code}`, "Download my data");
}
