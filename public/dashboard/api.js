// The dashboard's only way to the server: the public REST API with the account key as X-Api-Key
// (DESIGN §9: no private API). Errors become ApiError with a message a person can act on.

const KEY = "waitlist.apiKey";

export const session = {
  get key() {
    return sessionStorage.getItem(KEY);
  },
  signIn(key) {
    sessionStorage.setItem(KEY, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
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
  if (status === 401) return "Your API key was not accepted (unknown or revoked). Sign in again with an account key.";
  const text = typeof body?.message === "string" ? body.message : typeof body?.error?.message === "string" ? body.error.message : null;
  if (status === 403) return text ?? "Your plan does not include this.";
  if (status >= 500) return text && status !== 500 ? text : "The server could not complete this request. Try again.";
  return text ?? `Request failed (${status}).`;
}

/** Calls the API; resolves the parsed JSON body, rejects with ApiError. `raw: true` resolves the Response. */
export async function api(method, path, body, opts = {}) {
  const headers = { "x-api-key": opts.key ?? session.key ?? "" };
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
    if (res.status === 401 && !opts.key) window.dispatchEvent(new CustomEvent("signed-out", { detail: err.message }));
    throw err;
  }
  return parsed;
}

/** Per-waitlist paths. */
export const wl = (key) => `/api/v1/waitlist/${encodeURIComponent(key)}`;
