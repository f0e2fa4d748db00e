// Account keys (issue 48): every key that works, without its secret; a new key (read-only, or limited to named
// waitlists) shown once; any key revoked, this one included (then the dashboard signs out).
import { api, ApiError } from "./api.js";
import { confirmDialog, field, formatDate, h, showSecret, announce } from "./dom.js";

export async function keysView() {
  const [{ data }, lists] = await Promise.all([api("GET", "/api/v1/account/keys"), api("GET", "/api/v1/waitlists")]);
  const waitlistName = new Map(lists.data.waitlists.map((w) => [w.key, w.name]));
  const rows = data.keys.map((k) =>
    h(
      "tr",
      { "data-key-id": k.id },
      h("th", { scope: "row" }, k.name),
      h("td", {}, h("code", {}, `${k.prefix}…`)),
      h("td", {}, k.kind === "waitlist" ? "Waitlist" : "Account"),
      h("td", {}, k.scopes.includes("write") ? "Read and write" : "Read only"),
      h("td", {}, k.waitlists ? k.waitlists.map((key) => waitlistName.get(key) ?? key).join(", ") : "All"),
      h("td", {}, formatDate(k.created_at)),
      h("td", {}, k.last_used_at ? formatDate(k.last_used_at) : "Never"),
      h("td", {}, h("button", { type: "button", class: "danger small", onclick: () => revoke(k) }, "Revoke")),
    ),
  );
  return h(
    "section",
    {},
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Waitlists"), " / "),
    h("h1", { tabindex: "-1" }, "API keys"),
    h("p", {}, "Every key that works for this account. A key is shown once, when it is made; only its first characters are kept to tell it apart."),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "keys" },
        h("caption", { class: "sr-only" }, "API keys"),
        h("thead", {}, h("tr", {}, ["Name", "Starts with", "Kind", "Access", "Waitlists", "Created", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows),
      ),
    ),
    createForm(lists.data.waitlists),
  );
}

async function revoke(k) {
  const ok = await confirmDialog(`Revoke "${k.name}"?`, `Requests with the key ${k.prefix}… are refused from now on, on every instance. This cannot be undone.`, "Revoke");
  if (!ok) return;
  try {
    await api("DELETE", `/api/v1/account/keys/${encodeURIComponent(k.id)}`);
  } catch (err) {
    return announce(err.message, "error");
  }
  announce(`Key "${k.name}" revoked.`);
  // the key this tab signed in with may be the one revoked: the next request tells
  try {
    await api("GET", "/api/v1/me");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
  }
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

function createForm(waitlists) {
  const name = h("input", { name: "name", required: true, maxlength: 100 });
  const readOnly = h("input", { type: "checkbox", id: "key-read-only", name: "read_only" });
  const limits = waitlists.map((w) => h("input", { type: "checkbox", name: "waitlist", value: w.key, id: `key-w-${w.key}` }));
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Create key");
  return h(
    "form",
    {
      class: "card",
      "aria-labelledby": "key-create-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        submit.disabled = true;
        const chosen = limits.filter((c) => c.checked).map((c) => c.value);
        const body = { name: name.value.trim(), ...(readOnly.checked ? { scopes: ["read"] } : {}), ...(chosen.length ? { waitlists: chosen } : {}) };
        try {
          const made = (await api("POST", "/api/v1/account/keys", body)).data.api_key;
          await showSecret("Your new key", "Copy it now: it is not shown again.", made.api_key);
          window.dispatchEvent(new HashChangeEvent("hashchange"));
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", { id: "key-create-title" }, "New key"),
    field("Name", name, "What it is for, e.g. \"CRM sync\"."),
    h("div", { class: "check" }, readOnly, h("label", { for: "key-read-only" }, "Read only: it can read, and every change with it is refused")),
    waitlists.length
      ? h(
          "fieldset",
          {},
          h("legend", {}, "Limit to these waitlists (none ticked: all of them)"),
          limits.map((c, i) => h("div", { class: "check" }, c, h("label", { for: c.id }, waitlists[i].name))),
        )
      : null,
    error,
    submit,
  );
}
