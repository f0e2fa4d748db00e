// The dashboard's entry: sign-in with an account key (kept in sessionStorage), the header, and the
// hash router that mounts one view at a time (DESIGN §9).
import { api, ApiError, session } from "./api.js";
import { account } from "./account.js";
import { announce, h, mount } from "./dom.js";
import { waitlistsView } from "./view-waitlists.js";
import { overviewView } from "./view-overview.js";
import { settingsView } from "./view-settings.js";
import { pageView } from "./view-page.js";
import { broadcastsView, broadcastView } from "./view-broadcasts.js";
import { keysView } from "./view-keys.js";
import { auditView } from "./view-audit.js";

const root = document.getElementById("app");
const header = document.getElementById("account");

account.onChange(renderHeader);

function renderHeader(me) {
  if (!me) return mount(header);
  mount(
    header,
    h("span", { class: "who" }, me.account.username, " · ", me.plan.name),
    h("span", { class: "credits", "data-credits": me.ai_credits.remaining ?? "" }, `AI credits: ${me.ai_credits.remaining ?? "–"}`),
    h("a", { href: "#/keys" }, "API keys"),
    h("a", { href: "#/audit" }, "Audit log"),
    h("button", { type: "button", class: "link", onclick: () => signOut("You are signed out.") }, "Sign out"),
  );
}

function signOut(message) {
  session.signOut();
  account.clear();
  location.hash = "#/";
  renderSignIn(message);
}

function renderSignIn(message) {
  const input = h("input", { type: "password", name: "key", autocomplete: "off", required: true, spellcheck: "false", placeholder: "wl_acct_…", id: "key" });
  const error = h("p", { class: "notice error", role: "alert", hidden: !message || message === "You are signed out." }, message ?? "");
  const form = h(
    "form",
    {
      class: "card signin",
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
    h("h1", {}, "Sign in"),
    h("p", {}, "Use an account API key. It stays in this browser tab only and is cleared when you sign out or close the tab."),
    h("div", { class: "field" }, h("label", { for: "key" }, "Account API key"), input),
    error,
    h("button", { type: "submit", class: "primary" }, "Sign in"),
  );
  mount(root, form);
  if (message === "You are signed out.") announce(message);
  input.focus();
}

const ROUTES = [
  [/^#?\/?$/, () => waitlistsView()],
  [/^#\/w\/([^/]+)\/?$/, (key) => overviewView(key)],
  [/^#\/w\/([^/]+)\/settings$/, (key) => settingsView(key)],
  [/^#\/w\/([^/]+)\/page$/, (key) => pageView(key)],
  [/^#\/w\/([^/]+)\/broadcasts$/, (key) => broadcastsView(key)],
  [/^#\/w\/([^/]+)\/broadcasts\/([^/]+)$/, (key, id) => broadcastView(key, id)],
  [/^#\/keys$/, () => keysView()],
  [/^#\/audit$/, () => auditView()],
];

let current = 0;

async function route() {
  if (!session.key) return renderSignIn();
  const hash = location.hash || "#/";
  const match = ROUTES.map(([re, view]) => [hash.match(re), view]).find(([m]) => m);
  const mine = ++current;
  mount(root, h("p", { class: "loading", role: "status" }, "Loading…"));
  try {
    const view = match ? await match[1](...match[0].slice(1).map(decodeURIComponent)) : h("p", {}, "Nothing here. ", h("a", { href: "#/" }, "Back to your waitlists"));
    if (mine !== current) return; // the user moved on meanwhile
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
} else {
  renderSignIn();
}
