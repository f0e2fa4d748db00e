// What the public routes answer (pages, links, the form action, docs), for the OpenAPI document: their
// routes are hidden from the generator or document JSON only, so their statuses, HTML and redirects live here.
import { ErrorBody, SignUpErrorBody, SignUpRateLimitedBody } from "../http/error-schemas";
import { HTML, htmlPage, json, LOCATION, plain, rateLimitHeaders, RETRY_AFTER } from "./responses";

type Json = Record<string, any>;

export interface PublicOperation {
  method: "get" | "post" | "head";
  /** OpenAPI path template, `{param}` style. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  query?: string[];
  responses: Record<number, Json>;
}

const notFoundPage = (what: string) => htmlPage(`${what}: a friendly HTML page`);
const statusLive = {
  type: "object",
  required: ["status", "position", "inflated_position", "referral_count", "points"],
  properties: {
    status: { type: "string" },
    position: { type: ["number", "null"] },
    inflated_position: { type: ["number", "null"] },
    referral_count: { type: "number" },
    points: { type: "number" },
  },
};

/** A form post answers JSON clients (Accept: application/json) in JSON and browsers with a page (forms/routes.ts). */
const jsonOrPage = (description: string, schema: unknown, headers: Json = {}) => ({
  description,
  headers,
  content: { "application/json": { schema: plain(schema) }, ...HTML },
});

/** The form actions' refusals: JSON for JSON clients, a page for browsers; the per-IP limit's headers once it is counted. */
const formErrors = {
  400: jsonOrPage("Invalid or missing field, or (captcha on) altcha (JSON clients: the sign-up error shape; browsers: a page)", SignUpErrorBody, rateLimitHeaders(false)),
  403: jsonOrPage("The submitting site is not allowed to post to this waitlist", ErrorBody),
  404: jsonOrPage("No such waitlist", ErrorBody),
  429: jsonOrPage("More than 10 posts a minute from this IP to this waitlist", SignUpRateLimitedBody, { ...rateLimitHeaders(true), ...RETRY_AFTER }),
};

/**
 * An entry documents its route only while the app serves that method and path. Routes documented
 * at their source (pages/links.ts: confirm, invite, unsubscribe, leave) need no entry.
 */
export const PUBLIC_OPERATIONS: PublicOperation[] = [
  {
    method: "get",
    path: "/",
    operationId: "getHome",
    summary: "Home page, or a custom domain's published page",
    description: "On a waitlist's custom_domain, / is its published landing page (404 when none is published).",
    tags: ["Pages"],
    query: ["ref", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"],
    responses: { 200: htmlPage("The page"), 404: notFoundPage("No published page on this domain") },
  },
  {
    method: "get",
    path: "/p/{slug}",
    operationId: "getHostedPage",
    summary: "Hosted landing page",
    description:
      "The waitlist's published page; ?ref= carries a referral code into its form, utm_* parameters and the referring host (the Referer) are carried into the sign-up too (issue 46). Any other query parameter is ignored. Counts a view, under its source.",
    tags: ["Pages"],
    query: ["ref", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"],
    responses: { 200: htmlPage("The published page"), 404: notFoundPage("No published page under this slug") },
  },
  {
    method: "get",
    path: "/preview/{token}",
    operationId: "getPagePreview",
    summary: "Preview of unsaved landing-page changes",
    tags: ["Pages"],
    responses: { 200: htmlPage("The preview (its form does not submit)"), 404: notFoundPage("Preview expired or unknown") },
  },
  {
    method: "get",
    path: "/t/{token}",
    operationId: "getStatusPage",
    summary: "Thank-you and status page",
    description: "Position, referral link and share buttons of the subscriber whose sign_up_token this is.",
    tags: ["Pages"],
    responses: { 200: htmlPage("The status page"), 404: notFoundPage("Unknown status link") },
  },
  {
    method: "get",
    path: "/t/{token}/live",
    operationId: "getStatusLive",
    summary: "Live numbers of the status page",
    tags: ["Pages"],
    responses: { 200: json("Current status and position", statusLive), 404: json("Unknown status link", ErrorBody) },
  },
  {
    method: "get",
    path: "/og/{file}",
    operationId: "getShareImage",
    summary: "Generated share image",
    description:
      "`file` is the waitlist's key and `.png`: a 1200x630 PNG of the waitlist's name on its colour (settings email_template.color), the og:image of its hosted and status pages while og_image_url is unset (issue 46). The same bytes for the same name and colour; a request whose If-None-Match names its ETag gets 304 Not Modified, without a body.",
    tags: ["Pages"],
    responses: {
      200: {
        description: "The image",
        headers: {
          ETag: { description: "A hash of the name and colour drawn", required: true, schema: { type: "string" } },
          "Cache-Control": { description: "public, max-age=3600", required: true, schema: { type: "string" } },
        },
        content: { "image/png": {} },
      },
      404: notFoundPage("Unknown waitlist"),
    },
  },
  {
    method: "get",
    path: "/pending/{waitlistKey}",
    operationId: "getPendingPage",
    summary: "Confirm-pending page",
    tags: ["Pages"],
    responses: { 200: htmlPage("Check your inbox"), 404: notFoundPage("Unknown waitlist") },
  },
  {
    method: "get",
    path: "/dashboard",
    operationId: "getDashboard",
    summary: "Dashboard",
    description: "Signs in with an account key kept in sessionStorage; talks to this API only.",
    tags: ["Docs"],
    responses: { 200: htmlPage("The dashboard's shell") },
  },
  {
    method: "get",
    path: "/swagger",
    operationId: "getSwaggerUi",
    summary: "Swagger UI",
    tags: ["Docs"],
    responses: { 200: htmlPage("Swagger UI, its assets served by this server") },
  },
  {
    method: "get",
    path: "/swagger/json",
    operationId: "getOpenApiDocument",
    summary: "This OpenAPI document",
    tags: ["Docs"],
    responses: { 200: json("The OpenAPI 3.1 document", { type: "object", required: ["openapi", "info", "paths"], properties: { openapi: { type: "string" }, info: { type: "object" }, paths: { type: "object" } } }) },
  },
  {
    // forms/routes.ts documents the JSON answers; here: the browser's pages, 404 and the headers
    method: "post",
    path: "/s/{waitlistKey}",
    operationId: "postPublicForm",
    summary: "Public form action",
    tags: ["Public form"],
    responses: {
      200: { description: "JSON clients: the sign-up response", headers: rateLimitHeaders(true) },
      303: { description: "Browsers: on to the thank-you or confirm-pending page", headers: { ...LOCATION, ...rateLimitHeaders(true) } },
      ...formErrors,
    },
  },
  {
    method: "post",
    path: "/pending/{waitlistKey}/resend",
    operationId: "resendConfirmation",
    summary: "Send the confirmation email again",
    tags: ["Public form"],
    responses: { 200: { description: "The same answer whatever the address", headers: rateLimitHeaders(true) }, ...formErrors },
  },
];
