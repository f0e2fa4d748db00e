// The team (issue 48): users and their roles, invitations (a single-use link, also emailed), sessions that can be
// revoked; and a user's own sign-in: their sessions and two-factor sign-in with recovery codes.
import { account } from "./account.js";
import { api } from "./api.js";
import { announce, confirmDialog, dialog, field, formatDate, h, showSecret } from "./dom.js";

const ROLES = [
  ["owner", "Owner: everything, users and every key"],
  ["admin", "Admin: everything but users and others' keys"],
  ["editor", "Editor: subscribers, tags, pages, broadcasts"],
  ["viewer", "Viewer: reads only"],
];
const refresh = () => window.dispatchEvent(new HashChangeEvent("hashchange"));

function sessionsTable(sessions, { showUser }) {
  if (!sessions.length) return h("p", { class: "empty" }, "No sessions.");
  const mine = account.user?.id;
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "sessions" },
      h("caption", { class: "sr-only" }, "Sessions"),
      h("thead", {}, h("tr", {}, [...(showUser ? ["User"] : []), "Signed in", "IP", "Browser", ""].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        sessions.map((s) =>
          h(
            "tr",
            { "data-session": s.id, "data-user": s.user_id },
            showUser ? h("th", { scope: "row" }, s.user_email) : null,
            h("td", {}, formatDate(s.created_at)),
            h("td", {}, s.ip ?? "–"),
            h("td", { class: "agent", title: s.user_agent ?? "" }, s.user_agent ?? "–"),
            h(
              "td",
              { class: "keep-visible" },
              h(
                "button",
                {
                  type: "button",
                  class: "small revoke",
                  "aria-label": `Revoke the session of ${s.user_email} from ${formatDate(s.created_at)}`,
                  onclick: async () => {
                    if (!(await confirmDialog("Revoke this session?", `Its next request is refused and ${s.user_id === mine ? "you are" : `${s.user_email} is`} signed out there.`, "Revoke"))) return;
                    try {
                      await api("DELETE", `/api/v1/account/sessions/${encodeURIComponent(s.id)}`);
                      announce("Session revoked.");
                      refresh();
                    } catch (err) {
                      announce(err.message, "error");
                    }
                  },
                },
                "Revoke",
              ),
            ),
          ),
        ),
      ),
    ),
  );
}

export async function teamView() {
  const owner = account.role === "owner";
  const [users, sessions] = await Promise.all([
    account.role === "owner" || account.role === "admin" ? api("GET", "/api/v1/account/users") : { data: { users: [account.user] } },
    api("GET", "/api/v1/account/sessions"),
  ]);
  const rows = users.data.users.map((u) =>
    h(
      "tr",
      { "data-user": u.id },
      h("th", { scope: "row" }, u.name ? `${u.name} <${u.email}>` : u.email),
      h(
        "td",
        {},
        owner
          ? h(
              "select",
              {
                "aria-label": `Role of ${u.email}`,
                onchange: async (e) => {
                  try {
                    await api("PATCH", `/api/v1/account/users/${encodeURIComponent(u.id)}`, { role: e.target.value });
                    announce(`${u.email} is now ${e.target.value}.`);
                  } catch (err) {
                    announce(err.message, "error");
                    e.target.value = u.role;
                  }
                },
              },
              ROLES.map(([r]) => h("option", { value: r, selected: r === u.role }, r)),
            )
          : u.role,
      ),
      h("td", {}, u.active ? (u.totp ? "Password and authenticator" : "Password") : "Invited"),
      h("td", {}, formatDate(u.created_at)),
      h(
        "td",
        {},
        owner && u.id !== account.user?.id
          ? h(
              "button",
              {
                type: "button",
                class: "danger small",
                "aria-label": `Remove ${u.email}`,
                onclick: async () => {
                  if (!(await confirmDialog(`Remove ${u.email}?`, "They can no longer sign in; their sessions end now.", "Remove"))) return;
                  try {
                    await api("DELETE", `/api/v1/account/users/${encodeURIComponent(u.id)}`);
                    refresh();
                  } catch (err) {
                    announce(err.message, "error");
                  }
                },
              },
              "Remove",
            )
          : null,
      ),
    ),
  );
  return h(
    "section",
    {},
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Waitlists"), " / "),
    h("h1", { tabindex: "-1" }, "Team"),
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "users" }, h("caption", { class: "sr-only" }, "Users"), h("thead", {}, h("tr", {}, ["Who", "Role", "Sign-in", "Since", ""].map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows)),
    ),
    owner ? inviteForm() : null,
    h("h2", {}, owner ? "Sessions" : "Your sessions"),
    sessionsTable(sessions.data.sessions, { showUser: owner }),
  );
}

function inviteForm() {
  const email = h("input", { type: "email", name: "email", required: true });
  const role = h("select", { name: "role" }, ROLES.map(([r, label]) => h("option", { value: r, selected: r === "editor" }, label)));
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  return h(
    "form",
    {
      class: "card",
      "aria-labelledby": "invite-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        try {
          const r = (await api("POST", "/api/v1/account/users", { email: email.value.trim(), role: role.value })).data;
          await showSecret(
            "Invitation link",
            r.emailed ? `Emailed to ${r.user.email}. It works once, for 7 days; you can also pass it on yourself.` : `No email could be sent (no SMTP server): give ${r.user.email} this link. It works once, for 7 days.`,
            r.invite_url,
          );
          refresh();
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        }
      },
    },
    h("h2", { id: "invite-title" }, "Invite someone"),
    field("Email", email),
    field("Role", role),
    error,
    h("button", { type: "submit", class: "primary" }, "Send invitation"),
  );
}

/** The signed-in user's own sign-in: two-factor sign-in, and their sessions. */
export async function meView() {
  const [{ data: me }, sessions] = await Promise.all([api("GET", "/api/v1/session"), api("GET", `/api/v1/account/sessions?user_id=${encodeURIComponent(account.user?.id ?? "")}`)]);
  const totp = me.user.totp
    ? h(
        "div",
        { class: "card" },
        h("p", {}, "Two-factor sign-in is on: each sign-in asks for your authenticator's code."),
        h(
          "button",
          {
            type: "button",
            onclick: async () => {
              const password = await dialog("Turn two-factor sign-in off", (close) => {
                const input = h("input", { type: "password", autocomplete: "current-password", "aria-label": "Your password" });
                return h("form", { onsubmit: (e) => (e.preventDefault(), close(input.value)) }, field("Your password", input), h("div", { class: "actions" }, h("button", { type: "submit", class: "danger" }, "Turn off")));
              });
              if (!password) return;
              try {
                await api("DELETE", "/api/v1/session/totp", { password });
                announce("Two-factor sign-in is off.");
                refresh();
              } catch (err) {
                announce(err.message, "error");
              }
            },
          },
          "Turn off",
        ),
      )
    : h(
        "div",
        { class: "card" },
        h("p", {}, "Two-factor sign-in is off. With it on, a stolen password is not enough to sign in."),
        h(
          "button",
          {
            type: "button",
            onclick: async () => {
              try {
                const started = (await api("POST", "/api/v1/session/totp")).data;
                const code = await dialog("Set up your authenticator", (close) => {
                  const input = h("input", { inputmode: "numeric", autocomplete: "one-time-code", "aria-label": "Code from the app" });
                  return h(
                    "form",
                    { onsubmit: (e) => (e.preventDefault(), close(input.value.trim())) },
                    h("p", {}, "Add this account to your authenticator app (the link on a phone, or type the key), then enter the 6-digit code it shows."),
                    h("p", {}, h("a", { href: started.otpauth_url }, "Open in the authenticator app")),
                    h("input", { class: "secret", readonly: true, value: started.secret, "aria-label": "Setup key" }),
                    field("Code from the app", input),
                    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Turn on")),
                  );
                });
                if (!code) return;
                const { recovery_codes } = (await api("POST", "/api/v1/session/totp/confirm", { code })).data;
                await showSecret("Recovery codes", "Each works once in place of a code, if you lose your phone. Keep them somewhere safe: they are not shown again.", recovery_codes.join(" "));
                refresh();
              } catch (err) {
                announce(err.message, "error");
              }
            },
          },
          "Turn on two-factor sign-in",
        ),
      );
  return h(
    "section",
    {},
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Waitlists"), " / "),
    h("h1", { tabindex: "-1" }, "Your sign-in"),
    h("p", {}, `${me.user.name ? `${me.user.name} <${me.user.email}>` : me.user.email} · ${me.user.role} of ${me.account.username}`),
    h("h2", {}, "Two-factor sign-in"),
    totp,
    h("h2", {}, "Your sessions"),
    sessionsTable(sessions.data.sessions, { showUser: false }),
  );
}
