// The dashboard's entry: sign-in as a user (email and password, TOTP when on: issue 48) or with an account key (kept
// in sessionStorage), the links that set a password, the header, and the hash router that mounts one view at a time
// (DESIGN §9).
import { api, ApiError, session } from "./api.js";
import { account } from "./account.js";
import { announce, h, mount } from "./dom.js";
import { waitlistsView } from "./view-waitlists.js";
import { overviewView } from "./view-overview.js";
import { settingsView } from "./view-settings.js";
import { pageView } from "./view-page.js";
import { broadcastsView, broadcastView } from "./view-broadcasts.js";
import { keysView } from "./view-keys.js";
import { webhooksView } from "./view-webhooks.js";
import { auditView } from "./view-audit.js";
import { meView, teamView } from "./view-team.js";

const root = document.getElementById("app");
const header = document.getElementById("account");

account.onChange(renderHeader);

/** The pages of a link that sets a password (an invitation's, a reset's): the token after '#'. */
const LINK_PAGE = /^#\/(welcome|reset)\//;

/** What each role may change, most to least (issue 48); a key acts as an owner. */
const RANK = { owner: 4, admin: 3, editor: 2, viewer: 1 };
const may = (needed) => RANK[account.role] >= RANK[needed];

function renderHeader(me) {
  document.body.dataset.role = me ? account.role : "";
  if (!me) return mount(header);
  mount(
    header,
    h("span", { class: "who" }, account.user ? `${account.user.name ?? account.user.email} (${account.role}) · ` : "", me.account.username, " · ", me.plan.name),
    h("span", { class: "credits", "data-credits": me.ai_credits.remaining ?? "" }, `AI credits: ${me.ai_credits.remaining ?? "–"}`),
    may("admin") ? h("a", { href: "#/keys" }, "API keys") : null,
    may("admin") ? h("a", { href: "#/audit" }, "Audit log") : null,
    account.user ? h("a", { href: "#/team" }, "Team") : null,
    account.user ? h("a", { href: "#/me" }, "Your sign-in") : null,
    h("button", { type: "button", class: "link", onclick: () => signOut("You are signed out.") }, "Sign out"),
  );
}

async function signOut(message) {
  // a user's session ends on the server too; a key simply stops being sent
  if (session.csrf && !session.key) await api("DELETE", "/api/v1/session", undefined, { quiet: true }).catch(() => {});
  session.signOut();
  account.clear();
  location.hash = "#/";
  renderSignIn(message);
}

/** Signed in as a user: the session's CSRF token kept, the account read. */
async function enterAsUser(data) {
  session.signInAsUser(data.csrf_token);
  await account.refresh();
  announce("");
  if (LINK_PAGE.test(location.hash)) location.hash = "#/";
  route();
}

function renderPasswordForm(message) {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true, id: "email" });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true, id: "password" });
  const code = h("input", { name: "totp_code", autocomplete: "one-time-code", inputmode: "numeric", id: "totp" });
  const codeField = h("div", { class: "field", hidden: true }, h("label", { for: "totp" }, "Authenticator code (or a recovery code)"), code);
  const error = h("p", { class: "notice error", role: "alert", hidden: !message || message === "You are signed out." }, message ?? "");
  return h(
    "form",
    {
      class: "card signin",
      "aria-labelledby": "signin-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        try {
          const body = { email: email.value.trim(), password: password.value, ...(code.value.trim() ? { totp_code: code.value.trim() } : {}) };
          const r = await api("POST", "/api/v1/session", body, { quiet: true });
          await enterAsUser(r.data);
        } catch (err) {
          if (err instanceof ApiError && err.body?.data?.totp_required) {
            codeField.hidden = false;
            code.focus();
          }
          error.textContent = err.message;
          error.hidden = false;
        }
      },
    },
    h("h1", { id: "signin-title" }, "Sign in"),
    h("div", { class: "field" }, h("label", { for: "email" }, "Email"), email),
    h("div", { class: "field" }, h("label", { for: "password" }, "Password"), password),
    codeField,
    error,
    h("button", { type: "submit", class: "primary" }, "Sign in with password"),
    h("p", {}, h("a", { href: "#/forgot" }, "Forgot your password?")),
  );
}

function renderSignIn(message) {
  if (LINK_PAGE.test(location.hash)) return renderSetPassword(location.hash.split("/")[1], decodeURIComponent(location.hash.split("/")[2] ?? ""));
  if (location.hash === "#/forgot") return renderForgot();
  const input = h("input", { type: "password", name: "key", autocomplete: "off", required: true, spellcheck: "false", placeholder: "wl_acct_…", id: "key" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const form = h(
    "form",
    {
      class: "card signin",
      "aria-labelledby": "key-title",
      onsubmit: async (e) => {
        e.preventDefault();
        const key = input.value.trim();
        error.hidden = true;
        try {
          // only an account key can read /me: a per-waitlist key is refused here (401)
          await api("GET", "/api/v1/me", undefined, { key });
        } catch (err) {
          error.textContent = err instanceof ApiError && err.status === 401 ? "That key was not accepted. Use an account API key (wl_acct_…)." : err.message;
          error.hidden = false;
          input.focus();
          return;
        }
        session.signIn(key);
        await account.refresh();
        announce("");
        route();
      },
    },
    h("h2", { id: "key-title" }, "Or with an API key"),
    h("p", {}, "Use an account API key. It stays in this browser tab only and is cleared when you sign out or close the tab."),
    h("div", { class: "field" }, h("label", { for: "key" }, "Account API key"), input),
    error,
    h("button", { type: "submit", class: "primary" }, "Sign in"),
  );
  mount(root, renderPasswordForm(message), form);
  if (message === "You are signed out.") announce(message);
  root.querySelector("#email")?.focus();
}

/** An invitation's or a reset's link: the token after '#' (a robot fetching the link sends none and changes nothing). */
function renderSetPassword(kind, token) {
  const name = h("input", { name: "name", autocomplete: "name", maxlength: 100, id: "name" });
  const password = h("input", { type: "password", name: "password", autocomplete: "new-password", required: true, minlength: 10, id: "new-password" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  mount(
    root,
    h(
      "form",
      {
        class: "card signin",
        onsubmit: async (e) => {
          e.preventDefault();
          error.hidden = true;
          try {
            const r = await api("POST", "/api/v1/session/password", { token, password: password.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) }, { quiet: true });
            await enterAsUser(r.data);
          } catch (err) {
            error.textContent = err.message;
            error.hidden = false;
          }
        },
      },
      h("h1", { tabindex: "-1" }, kind === "welcome" ? "Welcome: choose your password" : "Choose a new password"),
      kind === "welcome" ? h("div", { class: "field" }, h("label", { for: "name" }, "Your name"), name) : null,
      h("div", { class: "field" }, h("label", { for: "new-password" }, "Password"), password, h("small", {}, "At least 10 characters; a common password is refused.")),
      error,
      h("button", { type: "submit", class: "primary" }, kind === "welcome" ? "Set password and sign in" : "Set new password"),
    ),
  );
  password.focus();
}

function renderForgot() {
  const email = h("input", { type: "email", name: "email", required: true, id: "forgot-email" });
  const note = h("p", { class: "notice", role: "status", hidden: true });
  mount(
    root,
    h(
      "form",
      {
        class: "card signin",
        onsubmit: async (e) => {
          e.preventDefault();
          try {
            note.textContent = (await api("POST", "/api/v1/session/reset", { email: email.value.trim() }, { quiet: true })).message;
          } catch (err) {
            note.textContent = err.message;
          }
          note.hidden = false;
        },
      },
      h("h1", { tabindex: "-1" }, "Reset your password"),
      h("div", { class: "field" }, h("label", { for: "forgot-email" }, "Email"), email),
      note,
      h("button", { type: "submit", class: "primary" }, "Email me a link"),
      h("p", {}, h("a", { href: "#/" }, "Back to sign in")),
    ),
  );
}

// each view with the role its buttons need: a lower role sees the view without them (dashboard.css, issue 48)
const ROUTES = [
  [/^#?\/?$/, () => waitlistsView(), "admin"],
  [/^#\/w\/([^/]+)\/?$/, (key) => overviewView(key), "editor"],
  [/^#\/w\/([^/]+)\/settings$/, (key) => settingsView(key), "admin"],
  [/^#\/w\/([^/]+)\/page$/, (key) => pageView(key), "editor"],
  [/^#\/w\/([^/]+)\/broadcasts$/, (key) => broadcastsView(key), "editor"],
  [/^#\/w\/([^/]+)\/broadcasts\/([^/]+)$/, (key, id) => broadcastView(key, id), "editor"],
  [/^#\/w\/([^/]+)\/webhooks$/, (key) => webhooksView(key), "admin"],
  [/^#\/keys$/, () => keysView(), "admin"],
  [/^#\/audit$/, () => auditView(), "admin"],
  [/^#\/team$/, () => teamView(), "owner"],
  [/^#\/me$/, () => meView(), "viewer"],
];

let current = 0;

async function route() {
  if (!session.signedIn) return renderSignIn();
  const hash = location.hash || "#/";
  const match = ROUTES.map(([re, view, needs]) => [hash.match(re), view, needs]).find(([m]) => m);
  const mine = ++current;
  mount(root, h("p", { class: "loading", role: "status" }, "Loading…"));
  try {
    const view = match ? await match[1](...match[0].slice(1).map(decodeURIComponent)) : h("p", {}, "Nothing here. ", h("a", { href: "#/" }, "Back to your waitlists"));
    if (mine !== current) return; // the user moved on meanwhile
    if (match && view instanceof Element) view.dataset.needs = match[2];
    mount(root, view);
    root.querySelector("h1")?.focus();
  } catch (err) {
    if (mine !== current) return;
    mount(root, h("div", { class: "card" }, h("h1", { tabindex: "-1" }, "Could not load this page"), h("p", { class: "notice error", role: "alert" }, err.message), h("a", { href: "#/" }, "Back to your waitlists")));
  }
}

window.addEventListener("signed-out", (e) => signOut(e.detail));
window.addEventListener("hashchange", route);

if (session.key) {
  account.refresh().then(route, (err) => (err instanceof ApiError && err.status === 401 ? null : renderSignIn(err.message)));
} else if (session.mayHaveCookie) {
  // a session cookie from before (this tab's, or another's): signed in already
  api("GET", "/api/v1/session", undefined, { quiet: true }).then(
    (r) => (LINK_PAGE.test(location.hash) ? renderSignIn() : enterAsUser(r.data)),
    () => (session.signOut(), renderSignIn()),
  );
} else {
  renderSignIn();
}
