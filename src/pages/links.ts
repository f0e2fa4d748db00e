// The links that act (issue 16, DESIGN §10): confirm /confirm/{token}, accept an invite /i/{token},
// unsubscribe /u/{sign_up_token}, leave /t/{sign_up_token}/leave. GET (and HEAD, which Bun answers
// from the GET handler without the body) only shows a page; POST acts, and acting twice is harmless.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { AppError } from "../http/errors";
import type { Dispatch } from "../outbox/events";
import { acceptInvite, findByInviteToken, inviteState } from "../subscribers/access";
import { confirmSubscriber, findByConfirmToken } from "../subscribers/confirm";
import { deleteSubscriber, findBySignUpToken, unsubscribe } from "../subscribers/manage";
import { findDataRequest, personalData, requestDataLink } from "../subscribers/personal-data";
import { htmlResponse, notFoundPage, PAGE_CSP } from "./layout";
import {
  alreadyConfirmedPage,
  confirmPage,
  inviteAcceptedPage,
  inviteGonePage,
  invitePage,
  dataDownloadPage,
  dataRequestedPage,
  dataRequestPage,
  leavePage,
  leftPage,
  unsubscribedPage,
  unsubscribePage,
} from "./link-pages";

// --- OpenAPI: public, HTML, every status each route answers (issue 16 item 8 lints this document)
const HTML = { "text/html": { schema: { type: "string" } } };
const html = (description: string) => ({ description, content: HTML });
const seeOther = (description: string) => ({
  description,
  headers: { Location: { description: "Where the browser goes next", schema: { type: "string", format: "uri" } } },
});
/** Whatever a mail client or a browser form posts is accepted and not read: a valid token is the authority. */
const ANY_BODY = {
  required: false,
  content: {
    "application/x-www-form-urlencoded": {
      schema: { type: "object", properties: { "List-Unsubscribe": { type: "string", enum: ["One-Click"], description: "RFC 8058 one-click body" } } },
    },
  },
};
/** The body is never read (a parser that does not read it; `parse: "none"` is overridden by the API's global parser). */
const ignoreBody = () => ({});
const doc = (summary: string, description: string, responses: Record<number, object>, body = false) =>
  ({ tags: ["Links"], security: [], summary, description, responses, ...(body ? { requestBody: ANY_BODY } : {}) }) as any;

const notFound = (what: string) => notFoundPage(`${what} not found`, `This ${what.toLowerCase()} link is not valid. Check that you copied the whole address.`);
const redirect = (location: string) => new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });

export function linkRoutes(deps: { db: Db; config: Config; dispatch: Dispatch }) {
  const { db, config, dispatch } = deps;
  const params = t.Object({ token: t.String({ description: "The token from the link" }) });
  const signUpParams = t.Object({ token: t.String({ description: "The subscriber's sign_up_token" }) });
  return new Elysia({ name: "pages/links" })
    .get(
      "/confirm/:token",
      async ({ params }) => {
        const found = await findByConfirmToken(db, params.token);
        if (!found) return notFound("Confirmation");
        return htmlResponse(found.status === "pending" ? confirmPage(found.w, params.token) : alreadyConfirmedPage(found.w, found.signUpToken));
      },
      {
        params,
        detail: doc("Confirmation link: the page", "Double opt-in. Shows a page whose button POSTs to the same URL; changes nothing (HEAD answers the same without a body).", {
          200: html("The confirmation page (or, once confirmed, a link to the status page)"),
          404: html("Unknown link"),
        }),
      },
    )
    .post(
      "/confirm/:token",
      async ({ params }) => {
        // spec: the subscriber follows the emailed link -> confirmed, then the thank-you page
        const confirmed = await confirmSubscriber(db, params.token, dispatch);
        if (!confirmed) return notFound("Confirmation");
        return redirect(`${config.baseUrl}/t/${confirmed.signUpToken}`);
      },
      {
        params,
        parse: ignoreBody,
        detail: doc(
          "Confirmation link: confirm",
          "Confirms the subscriber (ranked, referrer credited, welcome email and subscriber.confirmed webhook), then 303 to the thank-you page. A second POST only redirects.",
          { 303: seeOther("To the thank-you page {BASE_URL}/t/{sign_up_token}"), 404: html("Unknown link") },
          true,
        ),
      },
    )
    .get(
      "/i/:token",
      async ({ params }) => {
        const row = await findByInviteToken(db, params.token);
        const w = row && (await waitlistOf(row.waitlist_id));
        if (!row || !w) return notFound("Invitation");
        const state = inviteState(row);
        if (state !== "invited") return htmlResponse(inviteGonePage(w, state), 410);
        const res = htmlResponse(invitePage(w, params.token));
        // CSP form-action also governs the redirect after the POST: allow exactly the team's app
        if (w.inviteRedirectUrl) res.headers.set("content-security-policy", PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${new URL(w.inviteRedirectUrl).origin}`));
        return res;
      },
      {
        params,
        detail: doc("Invite link: the page", "Shows the invitation with a button that POSTs to the same URL; changes nothing (HEAD answers the same without a body).", {
          200: html("The invitation, with its accept button"),
          404: html("Unknown link"),
          410: html("The invitation was used, has expired or was withdrawn"),
        }),
      },
    )
    .post(
      "/i/:token",
      async ({ params }) => {
        const row = await findByInviteToken(db, params.token);
        const w = row && (await waitlistOf(row.waitlist_id));
        if (!row || !w) return notFound("Invitation");
        const state = await acceptInvite(db, w, row, dispatch);
        if (state !== "invited") return htmlResponse(inviteGonePage(w, state), 410);
        if (!w.inviteRedirectUrl) return htmlResponse(inviteAcceptedPage(w));
        // the team's own app, configured in the settings (never a request parameter)
        const target = new URL(w.inviteRedirectUrl);
        target.searchParams.set("token", params.token);
        return redirect(target.toString());
      },
      {
        params,
        parse: ignoreBody,
        detail: doc(
          "Invite link: accept",
          "Marks the subscriber joined once (subscriber.joined webhook), then 303 to the invite_redirect_url setting with ?token=, or a welcome page. A used, expired or withdrawn invitation answers 410 with a page saying so.",
          { 200: html("Welcome page (no invite_redirect_url set)"), 303: seeOther("To invite_redirect_url?token={token}"), 404: html("Unknown link"), 410: html("Used, expired or withdrawn") },
          true,
        ),
      },
    )
    .get(
      "/u/:token",
      async ({ params }) => {
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Unsubscribe");
        return htmlResponse(unsubscribePage(found.w, found.sub));
      },
      {
        params: signUpParams,
        detail: doc("Unsubscribe link: the page", "The List-Unsubscribe link of every email but the confirmation. Shows a page whose button POSTs to the same URL; changes nothing.", {
          200: html("The unsubscribe page (or, once unsubscribed, says so)"),
          404: html("Unknown link"),
        }),
      },
    )
    .post(
      "/u/:token",
      async ({ params }) => {
        // RFC 8058: a mail client's one-click POST carries no Origin and no cookie; the token is the authority
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Unsubscribe");
        const at = await unsubscribe(db, found.w, found.sub, dispatch);
        return htmlResponse(unsubscribedPage(found.w, { ...found.sub, unsubscribed_at: at }));
      },
      {
        params: signUpParams,
        parse: ignoreBody,
        detail: doc(
          "Unsubscribe link: unsubscribe (RFC 8058 one-click)",
          "Sets unsubscribed_at and sends a subscriber.unsubscribed webhook, once; from then on no email goes to the subscriber, who keeps their place in line. Accepts a mail client's one-click POST (body List-Unsubscribe=One-Click) and the page's button.",
          { 200: html("Unsubscribed"), 404: html("Unknown link") },
          true,
        ),
      },
    )
    .get(
      "/t/:token/data",
      async ({ params }) => {
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Status");
        return htmlResponse(dataRequestPage(found.w, found.sub));
      },
      {
        params: signUpParams,
        detail: doc("Get my data: the page", "Linked from the status page (issue 47). Shows a page whose button POSTs to the same URL; changes nothing.", {
          200: html("Offers to email a download link"),
          404: html("Unknown link"),
        }),
      },
    )
    .post(
      "/t/:token/data",
      async ({ params }) => {
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Status");
        await requestDataLink(db, found.w, found.sub, dispatch);
        return htmlResponse(dataRequestedPage(found.w));
      },
      {
        params: signUpParams,
        parse: ignoreBody,
        detail: doc(
          "Get my data: email the link",
          "Emails the subscriber a link ({BASE_URL}/d/{token}) to download everything held about them, valid 24 hours; at most one email in 10 minutes (the page is the same either way). Sent even after unsubscribing: it answers their request.",
          { 200: html("Says the link is on its way"), 404: html("Unknown link") },
          true,
        ),
      },
    )
    .get(
      "/d/:token",
      async ({ params }) => {
        const found = await findDataRequest(db, params.token);
        if (!found) return notFoundPage("Link expired", "This download link is not valid any more (it works for 24 hours). Ask for a new one from your status page.");
        return htmlResponse(dataDownloadPage(found.w, params.token));
      },
      {
        params,
        detail: doc("Data download link: the page", "The emailed link (issue 47). Shows a page whose button POSTs to the same URL; downloads nothing.", {
          200: html("The download button"),
          404: html("Unknown or expired link"),
        }),
      },
    )
    .post(
      "/d/:token",
      async ({ params }) => {
        const found = await findDataRequest(db, params.token);
        if (!found) return notFoundPage("Link expired", "This download link is not valid any more (it works for 24 hours). Ask for a new one from your status page.");
        const document = await personalData(db, found.w, found.sub, config.baseUrl);
        return new Response(JSON.stringify(document, null, 2), {
          headers: {
            "content-type": "application/json; charset=utf-8",
            "content-disposition": `attachment; filename="${found.w.slug}-my-data.json"`,
            "cache-control": "no-store",
            "content-security-policy": PAGE_CSP,
          },
        });
      },
      {
        params,
        parse: ignoreBody,
        detail: doc(
          "Data download link: download",
          "Everything held about the subscriber as a JSON attachment: the Subscriber object (with fingerprint and confirmed_at), their referrals (friends' emails masked), rewards, emails sent and share clicks; the same document as GET .../subscribers/{idOrEmail}/data. Works for 24 hours from the request.",
          {
            200: { description: "The JSON document (an attachment)", content: { "application/json": { schema: { type: "object", required: ["generated_at", "subscriber"], properties: { generated_at: { type: "number" }, subscriber: { type: "object" } } } } } },
            404: html("Unknown or expired link"),
          },
          true,
        ),
      },
    )
    .get(
      "/t/:token/leave",
      async ({ params }) => {
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Waitlist");
        return htmlResponse(leavePage(found.w, found.sub));
      },
      {
        params: signUpParams,
        detail: doc("Leave the waitlist: the page", "Linked from the status page. Shows a page whose button POSTs to the same URL; changes nothing.", {
          200: html("Asks to confirm leaving"),
          404: html("Unknown link (or already left)"),
        }),
      },
    )
    .post(
      "/t/:token/leave",
      async ({ params }) => {
        const found = await findBySignUpToken(db, params.token);
        if (!found) return notFound("Waitlist");
        try {
          // the API's DELETE with erase (issue 47: leaving is asking to be forgotten): referral credit taken back,
          // positions close up, nothing that names them stays, subscriber.deleted saying only who
          await deleteSubscriber(db, found.w, found.sub.id, config.baseUrl, dispatch, { erase: true });
        } catch (err) {
          if (err instanceof AppError && err.code === "not_found") return notFound("Waitlist"); // left twice at once
          throw err;
        }
        return htmlResponse(leftPage(found.w));
      },
      {
        params: signUpParams,
        parse: ignoreBody,
        detail: doc(
          "Leave the waitlist: leave",
          "Erases the subscriber as DELETE .../subscribers/{idOrEmail}?erase=true does (referral credit taken back, their emails and events removed from the outbox, a subscriber.deleted webhook with only their id), then shows a page saying so.",
          { 200: html("Left"), 404: html("Unknown link (or already left)") },
          true,
        ),
      },
    );

  async function waitlistOf(id: string) {
    const { waitlists } = db.t;
    const [w] = await db.select().from(waitlists).where(eq(waitlists.id, id));
    return w;
  }
}
