// The dashboard's only way to the server: the public REST API (DESIGN §9: no private API), signed in either as a user
// (issue 48: the session cookie, and its CSRF token on every change) or with an account key as X-Api-Key. Errors
// become ApiError with a message a person can act on.

const KEY = "waitlist.apiKey";
const CSRF = "waitlist.csrf";
/** Set while this browser has a user's session: only then is the cookie asked about (a 401 otherwise). */
const USER = "waitlist.user";

export const session = {
  /** The account key this tab signed in with, if it did. */
  get key() {
    return sessionStorage.getItem(KEY);
  },
  /** The session's CSRF token, when signed in as a user (the cookie itself is HttpOnly). */
  get csrf() {
    return sessionStorage.getItem(CSRF);
  },
  get signedIn() {
    return Boolean(this.key || this.csrf);
  },
  signIn(key) {
    sessionStorage.setItem(KEY, key);
  },
  signInAsUser(csrf) {
    sessionStorage.removeItem(KEY);
    sessionStorage.setItem(CSRF, csrf);
    localStorage.setItem(USER, "1");
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(CSRF);
    localStorage.removeItem(USER);
  },
  /** This browser signed in as a user before (another tab, or before a reload): its cookie may still work. */
  get mayHaveCookie() {
    return Boolean(this.csrf || localStorage.getItem(USER));
  },
};

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** Readable text for an error answer of any of the spec's shapes. */
function messageOf(status, body, headers) {
  if (status === 429) {
    const wait = body?.data?.retry_after ?? Number(headers.get("retry-after"));
    return `Too many requests for your plan's rate limit. Try again in ${wait > 0 ? `${wait} s` : "a moment"}.`;
  }
  if (status === 401) return typeof body?.message === "string" && body.message !== "Invalid API key" ? body.message : "You are signed out (the key or session was revoked or has expired). Sign in again.";
  const text = typeof body?.message === "string" ? body.message : typeof body?.error?.message === "string" ? body.error.message : null;
  if (status === 403) return text ?? "Your plan does not include this.";
  if (status >= 500) return text && status !== 500 ? text : "The server could not complete this request. Try again.";
  return text ?? `Request failed (${status}).`;
}

/** Calls the API; resolves the parsed JSON body, rejects with ApiError. `raw: true` resolves the Response. */
export async function api(method, path, body, opts = {}) {
  const key = opts.key ?? session.key;
  const headers = key ? { "x-api-key": key } : {};
  if (!key && session.csrf && method !== "GET" && method !== "HEAD") headers["x-csrf-token"] = session.csrf;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "Cannot reach the server. Check your connection and try again.");
  }
  if (res.ok && opts.raw) return res;
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, messageOf(res.status, parsed, res.headers), parsed);
    if (res.status === 401 && !opts.key && !opts.quiet) window.dispatchEvent(new CustomEvent("signed-out", { detail: err.message }));
    throw err;
  }
  return parsed;
}

/** Per-waitlist paths. */
export const wl = (key) => `/api/v1/waitlist/${encodeURIComponent(key)}`;
