// POST /s/{waitlistKey}: the public form action (DESIGN §4), for browsers (303 to a page) and JSON clients.
import { formFieldsOf } from "../waitlists/form-fields";
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import { now } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/db";
import { AppError, badRequest, errorBody } from "../http/errors";
import { ErrorBody, SignUpErrorBody } from "../http/error-schemas";
import { clientIp, requestHost } from "../http/client-ip";
import { countAndDecide, rateHeaders, uncounted } from "../http/rate-limit";
import type { Dispatch } from "../outbox/events";
import { escapeHtml } from "../pages/html";
import { htmlResponse, page } from "../pages/layout";
import { MESSAGES, signUp } from "../subscribers/signup";
import { SignUpResponse } from "../subscribers/model";
import { formSignUp, isAllowedHost, refuseNul, submittingHost, wantsJson } from "./service";
import { checkSolution, issueChallenge, releaseSolution, spendSolution, type Solution } from "./captcha";
import { resendConfirmation } from "../subscribers/confirmation-caps";
import { resendAnswerPage } from "../pages/thank-you";
// the ALTCHA widget, vendored (public/vendor/altcha/README.md) and embedded in the binary
import altchaJs from "../../public/vendor/altcha/altcha.js" with { type: "text" };
import altchaCss from "../../public/vendor/altcha/altcha.css" with { type: "text" };
import altchaWorker from "../../public/vendor/altcha/pbkdf2.js" with { type: "text" };
import captchaJs from "../../public/captcha.js" with { type: "text" };
import { embedRoutes } from "./embed";

/** DESIGN §4: 10 form posts a minute per IP per waitlist. */
export const FORM_LIMIT = 10;
/** Issue 16: "send it again" posts a minute per IP per waitlist (each address is capped on its own as well). */
export const RESEND_LIMIT = 10;

/** The resend answer, the same whatever happened (issue 16: no oracle). */
export const RESEND_MESSAGE =
  "If this address is waiting for confirmation, a new confirmation email is on its way. We send at most one every 10 minutes, so look for a recent one too.";
const ResendResponse = t.Object({ success: t.Boolean(), message: t.String() });

const JS = "text/javascript; charset=utf-8";
/** The ALTCHA widget (no bundled workers or styles, so it runs under the pages' CSP) and our loader, from the binary. */
const CAPTCHA_ASSETS: Record<string, { body: string; type: string }> = {
  "altcha.js": { body: altchaJs as unknown as string, type: JS },
  "altcha.css": { body: altchaCss as unknown as string, type: "text/css; charset=utf-8" },
  "pbkdf2.js": { body: altchaWorker as unknown as string, type: JS },
  "captcha.js": { body: captchaJs as unknown as string, type: JS },
};

const ChallengeResponse = t.Object(
  {
    parameters: t.Object({
      algorithm: t.String(),
      nonce: t.String(),
      salt: t.String(),
      cost: t.Number(),
      keyLength: t.Number(),
      keyPrefix: t.String(),
      keySignature: t.Optional(t.String()),
      expiresAt: t.Optional(t.Number()),
      data: t.Optional(t.Record(t.String(), t.Unknown())),
    }),
    signature: t.Optional(t.String()),
  },
  { description: "An ALTCHA v2 challenge (PBKDF2/SHA-256), valid 10 minutes" },
);

export function formRoutes(deps: { db: Db; config: Config; dispatch: Dispatch }) {
  const { db, config, dispatch } = deps;
  const ownHost = new URL(config.baseUrl).hostname.toLowerCase();

  function fail(request: Request, err: AppError, headers: Record<string, string>): Response {
    if (wantsJson(request)) {
      return new Response(JSON.stringify(errorBody("signup", err.status, err.message, err.data)), { status: err.status, headers: { ...headers, "content-type": "application/json" } });
    }
    const title = err.status === 429 ? "Too many attempts" : err.status === 403 ? "This form cannot be used here" : "Something is missing";
    const back = request.headers.get("referer");
    const html = page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(err.message)}</p>${back ? `<p><a class="button" href="${escapeHtml(back)}">Go back</a></p>` : ""}`);
    const res = htmlResponse(html, err.status);
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    return res;
  }

  async function findWaitlist(key: string) {
    const [w] = await db.select().from(db.t.waitlists).where(eq(db.t.waitlists.key, key));
    return w;
  }

  const cors = (request: Request): Record<string, string> => {
    const origin = request.headers.get("origin");
    return origin && origin !== "null" ? { "access-control-allow-origin": origin, vary: "Origin" } : {};
  };

  /** A per-IP limit of one waitlist's public actions; a refused one answers 429 with Retry-After. */
  async function limitIp(subject: string, limit: number, headers: Record<string, string>): Promise<AppError | null> {
    const decision = config.rateLimits ? await countAndDecide(db, subject, limit) : uncounted(limit, now());
    Object.assign(headers, rateHeaders(decision));
    if (decision.allowed) return null;
    return new AppError("rate_limited", `Too many attempts from your network: try again in ${decision.retryAfter} s`, { retry_after: decision.retryAfter });
  }

  /** Checks and spends a solution (400 naming altcha otherwise); returned only once it is ours to give back. */
  async function spendCaptcha(waitlistKey: string, payload: unknown): Promise<Solution> {
    const solution = await checkSolution(db, waitlistKey, payload);
    await spendSolution(db, solution);
    return solution;
  }

  return new Elysia({ name: "forms/routes" })
    .use(embedRoutes(deps))
    .get(
      "/assets/altcha/:file",
      ({ params }) => {
        const asset = CAPTCHA_ASSETS[params.file];
        if (!asset) return new Response("not found", { status: 404 });
        // public files: a team's own site loads the module script cross-origin (module scripts need CORS)
        return new Response(asset.body, { headers: { "content-type": asset.type, "cache-control": "public, max-age=3600", "access-control-allow-origin": "*" } });
      },
      { detail: { hide: true }, params: t.Object({ file: t.String() }) },
    )
    .get(
      "/s/:waitlistKey/challenge",
      async ({ params, set, request }) => {
        const w = await findWaitlist(params.waitlistKey);
        if (!w) throw new AppError("not_found", "This waitlist does not exist");
        set.headers["cache-control"] = "no-store";
        // the widget on a site allowed to post the form fetches its challenge cross-origin
        if (isAllowedHost(submittingHost(request), w, ownHost)) Object.assign(set.headers, cors(request));
        return issueChallenge(db, w.key);
      },
      {
        params: t.Object({ waitlistKey: t.String() }),
        response: { 200: ChallengeResponse, 404: ErrorBody },
        detail: {
          tags: ["Public form"],
          summary: "Captcha challenge for the public form",
          description:
            "No API key. An ALTCHA proof-of-work challenge (the JSON the altcha widget fetches), valid for 10 minutes. With the waitlist's captcha setting \"altcha\", POST /s/{waitlistKey} needs the solved payload in its altcha field; each solution is accepted once.",
          security: [],
        },
      },
    )
    .options("/s/:waitlistKey", async ({ params, request }) => {
      const w = await findWaitlist(params.waitlistKey);
      if (!w || !isAllowedHost(submittingHost(request), w, ownHost)) return new Response(null, { status: 403 });
      return new Response(null, {
        status: 204,
        headers: { ...cors(request), "access-control-allow-methods": "POST", "access-control-allow-headers": "content-type, accept", "access-control-max-age": "600" },
      });
    }, { detail: { hide: true } })
    .post(
      "/s/:waitlistKey",
      async ({ params, request, body, server }) => {
        const headers = cors(request);
        const w = await findWaitlist(params.waitlistKey);
        if (!w) return fail(request, new AppError("not_found", "This waitlist does not exist"), {});
        if (!isAllowedHost(submittingHost(request), w, ownHost)) {
          return fail(request, new AppError("forbidden", "This site may not post to this waitlist: add its domain to the waitlist's allowed_domains"), {});
        }
        const ip = clientIp(request, server, config.trustProxy);
        const limited = await limitIp(`form:${ip}:${w.id}`, FORM_LIMIT, headers);
        if (limited) return fail(request, limited, headers);
        let solution: Solution | null = null;
        try {
          const fields = body as Record<string, unknown>;
          const input = formSignUp(fields, formFieldsOf(w).map((q) => q.key), request.headers.get("referer"));
          let result;
          if (!input) result = honeypotAnswer(config.baseUrl, w.key);
          else {
            // issue 16: with the captcha on, a solved challenge is spent before anything is stored
            if (w.captcha === "altcha") solution = await spendCaptcha(w.key, fields?.altcha);
            result = await signUp(db, w, input, { joinedWith: "form", requestIp: ip, refererHost: submittingHost(request), baseUrl: config.baseUrl, dispatch });
          }
          if (wantsJson(request)) return new Response(JSON.stringify(result), { headers: { ...headers, "content-type": "application/json" } });
          // issue 16: posted on the waitlist's custom domain, the browser stays there (its page allows form-action 'self' only)
          const location = w.customDomain && requestHost(request) === w.customDomain ? new URL(result.redirect_url).pathname : result.redirect_url;
          return new Response(null, { status: 303, headers: { ...headers, location } });
        } catch (err) {
          // a sign-up that stored nothing gives its solution back, so the visitor can correct the form
          if (solution) await releaseSolution(db, solution);
          if (err instanceof AppError) return fail(request, err, headers);
          throw err;
        }
      },
      {
        detail: {
          tags: ["Public form"],
          summary: "Public form action",
          description:
            "No API key. Point an HTML form at it (urlencoded or multipart) or post JSON: email (required), name, phone, ref or referred_by, fingerprint, the answers to the waitlist's questions by key, utm_source, utm_medium, utm_campaign, utm_term, utm_content and referrer_host (without any utm_ field, those of the Referer's query string are taken); other fields become metadata. The Origin or Referer must be this service, the waitlist's custom domain or one of its allowed_domains (403 otherwise). Browsers get 303 to the thank-you or confirm-pending page; a client sending Accept: application/json gets the sign-up JSON. 10 posts a minute per IP per waitlist. With the captcha setting \"altcha\", altcha (the widget's base64 payload of a challenge from GET /s/{waitlistKey}/challenge) is required and each solution works once. Confirmation emails are capped per address (one per waitlist per 10 minutes, three a day); an over-cap sign-up answers as usual.",
          requestBody: {
            content: {
              "application/x-www-form-urlencoded": {
                schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, name: { type: "string" }, phone: { type: "string" }, ref: { type: "string" }, altcha: { type: "string" } } },
              },
              "multipart/form-data": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, altcha: { type: "string" } } } },
              "application/json": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, altcha: { type: "string" } } } },
            },
          },
          responses: {
            200: { description: "JSON clients: the sign-up response", content: { "application/json": { schema: SignUpResponse as any } } },
            303: { description: "Browsers: redirect to the thank-you or confirm-pending page" },
            400: { description: "Invalid email, or (captcha on) a missing, invalid, expired or used altcha", content: { "application/json": { schema: SignUpErrorBody as any } } },
            403: { description: "Submitting site not allowed", content: { "application/json": { schema: ErrorBody as any } } },
            413: { description: "Body over 1 MB, declared or as read (chunked); browsers get a page", content: { "application/json": { schema: ErrorBody as any } } },
            429: { description: "Too many posts from this IP", content: { "application/json": { schema: SignUpErrorBody as any } } },
          },
        } as any,
        params: t.Object({ waitlistKey: t.String() }),
      },
    )
    .post(
      "/pending/:waitlistKey/resend",
      async ({ params, request, body, server }) => {
        // issue 16: the confirm-pending page's "send it again", under the confirmation caps
        const headers = cors(request);
        const w = await findWaitlist(params.waitlistKey);
        if (!w) return fail(request, new AppError("not_found", "This waitlist does not exist"), {});
        if (!isAllowedHost(submittingHost(request), w, ownHost)) return fail(request, new AppError("forbidden", "This site may not post to this waitlist"), {});
        const ip = clientIp(request, server, config.trustProxy);
        const limited = await limitIp(`resend:${ip}:${w.id}`, RESEND_LIMIT, headers);
        if (limited) return fail(request, limited, headers);
        let solution: Solution | null = null;
        try {
          const fields = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
          const raw = Array.isArray(fields.email) ? fields.email[0] : fields.email;
          if (typeof raw !== "string" || !raw.trim()) throw badRequest("email is required");
          refuseNul({ email: raw });
          if (w.captcha === "altcha") solution = await spendCaptcha(w.key, fields.altcha);
          await resendConfirmation(db, w, raw, dispatch);
        } catch (err) {
          if (solution) await releaseSolution(db, solution);
          if (err instanceof AppError) return fail(request, err, headers);
          throw err;
        }
        // the same answer whether the address is pending, confirmed, unknown or over its caps: no oracle
        if (wantsJson(request)) return new Response(JSON.stringify({ success: true, message: RESEND_MESSAGE }), { headers: { ...headers, "content-type": "application/json" } });
        const res = htmlResponse(resendAnswerPage(w, RESEND_MESSAGE));
        for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
        return res;
      },
      {
        params: t.Object({ waitlistKey: t.String() }),
        detail: {
          tags: ["Public form"],
          summary: "Send the confirmation email again",
          description:
            "No API key. The confirm-pending page's button: email (and altcha when the waitlist's captcha is on). If that address is waiting for confirmation on this waitlist, the confirmation email is sent again, at most one per address and waitlist per 10 minutes and three per address a day. The answer is the same whether or not the address exists, is pending or was capped. Origin rules as POST /s/{waitlistKey}; 10 posts a minute per IP per waitlist.",
          security: [],
          requestBody: {
            content: {
              "application/x-www-form-urlencoded": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, altcha: { type: "string" } } } },
              "multipart/form-data": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, altcha: { type: "string" } } } },
              "application/json": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, altcha: { type: "string" } } } },
            },
          },
          responses: {
            200: {
              description: "Browsers: a page saying a new email is on its way if the address is pending; JSON clients: {success, message}",
              content: { "application/json": { schema: ResendResponse as any }, "text/html": { schema: { type: "string" } } },
            },
            400: { description: "Missing or invalid email, or (captcha on) a missing, invalid, expired or used altcha", content: { "application/json": { schema: SignUpErrorBody as any } } },
            403: { description: "Submitting site not allowed", content: { "application/json": { schema: ErrorBody as any } } },
            404: { description: "Unknown waitlist", content: { "application/json": { schema: ErrorBody as any } } },
            429: { description: "Too many posts from this IP", content: { "application/json": { schema: SignUpErrorBody as any } } },
          },
        } as any,
      },
    );
}

/** A filled honeypot gets what a real double opt-in sign-up would get, and nothing is stored. */
function honeypotAnswer(baseUrl: string, waitlistKey: string) {
  return {
    success: true,
    is_new_sign_up: true,
    is_pending_confirmation: true,
    message: MESSAGES.newPending,
    redirect_url: `${baseUrl}/pending/${waitlistKey}`,
  };
}
