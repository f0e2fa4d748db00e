// POST /s/{waitlistKey}: the public form action (DESIGN §4), for browsers (303 to a page) and JSON clients.
import { Elysia, t } from "elysia";
import { eq } from "drizzle-orm";
import { now } from "../clock";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { waitlists } from "../db/schema";
import { AppError, ErrorBody, errorBody, SignUpErrorBody } from "../http/errors";
import { clientIp, requestHost } from "../http/client-ip";
import { countAndDecide, rateHeaders, uncounted } from "../http/rate-limit";
import type { Dispatch } from "../outbox/events";
import { escapeHtml } from "../pages/html";
import { htmlResponse, page } from "../pages/layout";
import { MESSAGES, signUp } from "../subscribers/signup";
import { SignUpResponse } from "../subscribers/model";
import { formSignUp, isAllowedHost, submittingHost, wantsJson } from "./service";

/** DESIGN §4: 10 form posts a minute per IP per waitlist. */
export const FORM_LIMIT = 10;

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
    const [w] = await db.select().from(waitlists).where(eq(waitlists.key, key));
    return w;
  }

  const cors = (request: Request): Record<string, string> => {
    const origin = request.headers.get("origin");
    return origin && origin !== "null" ? { "access-control-allow-origin": origin, vary: "Origin" } : {};
  };

  return new Elysia({ name: "forms/routes" })
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
        const decision = config.rateLimits ? await countAndDecide(db.$writer, `form:${ip}:${w.id}`, FORM_LIMIT) : uncounted(FORM_LIMIT, now());
        Object.assign(headers, rateHeaders(decision));
        if (!decision.allowed) {
          return fail(request, new AppError("rate_limited", `Too many sign-ups from your network: try again in ${decision.retryAfter} s`, { retry_after: decision.retryAfter }), headers);
        }
        try {
          const input = formSignUp(body as Record<string, unknown>);
          const result = input
            ? await signUp(db, w, input, { joinedWith: "form", requestIp: ip, refererHost: submittingHost(request), baseUrl: config.baseUrl, dispatch })
            : honeypotAnswer(config.baseUrl, w.key);
          if (wantsJson(request)) return new Response(JSON.stringify(result), { headers: { ...headers, "content-type": "application/json" } });
          // issue 16: posted on the waitlist's custom domain, the browser stays there (its page allows form-action 'self' only)
          const location = w.customDomain && requestHost(request) === w.customDomain ? new URL(result.redirect_url).pathname : result.redirect_url;
          return new Response(null, { status: 303, headers: { ...headers, location } });
        } catch (err) {
          if (err instanceof AppError) return fail(request, err, headers);
          throw err;
        }
      },
      {
        detail: {
          tags: ["Public form"],
          summary: "Public form action",
          description:
            "No API key. Point an HTML form at it (urlencoded or multipart) or post JSON: email (required), name, phone, ref or referred_by, fingerprint; other fields become metadata. The Origin or Referer must be this service, the waitlist's custom domain or one of its allowed_domains (403 otherwise). Browsers get 303 to the thank-you or confirm-pending page; a client sending Accept: application/json gets the sign-up JSON. 10 posts a minute per IP per waitlist.",
          requestBody: {
            content: {
              "application/x-www-form-urlencoded": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" }, name: { type: "string" }, phone: { type: "string" }, ref: { type: "string" } } } },
              "multipart/form-data": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" } } } },
              "application/json": { schema: { type: "object", required: ["email"], properties: { email: { type: "string" } } } },
            },
          },
          responses: {
            200: { description: "JSON clients: the sign-up response", content: { "application/json": { schema: SignUpResponse as any } } },
            303: { description: "Browsers: redirect to the thank-you or confirm-pending page" },
            400: { description: "Invalid email", content: { "application/json": { schema: SignUpErrorBody as any } } },
            403: { description: "Submitting site not allowed", content: { "application/json": { schema: ErrorBody as any } } },
            413: { description: "Body over 1 MB, declared or as read (chunked); browsers get a page", content: { "application/json": { schema: ErrorBody as any } } },
            429: { description: "Too many posts from this IP", content: { "application/json": { schema: SignUpErrorBody as any } } },
          },
        } as any,
        params: t.Object({ waitlistKey: t.String() }),
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
