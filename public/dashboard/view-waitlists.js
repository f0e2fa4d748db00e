// Waitlists: the account's list with subscribers and views, and the form that creates one.
import { account } from "./account.js";
import { api } from "./api.js";
import { checkbox, field, formatDate, formatNumber, h } from "./dom.js";

export async function waitlistsView() {
  const [{ data }, me] = await Promise.all([api("GET", "/api/v1/waitlists"), account.me ? account.me : account.refresh()]);
  const list = data.waitlists.length
    ? h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "waitlists" },
          h("caption", { class: "sr-only" }, "Your waitlists"),
          h("thead", {}, h("tr", {}, ["Name", "Slug", "Subscribers", "Views", "Created"].map((c) => h("th", { scope: "col", class: (c === "Subscribers" || c === "Views") && "num" }, c)))),
          h(
            "tbody",
            {},
            data.waitlists.map((w) =>
              h(
                "tr",
                { "data-key": w.key },
                h("th", { scope: "row" }, h("a", { href: `#/w/${encodeURIComponent(w.key)}` }, w.name)),
                h("td", {}, w.slug),
                h("td", { class: "num" }, formatNumber(w.subscribers)),
                h("td", { class: "num" }, formatNumber(w.views)),
                h("td", {}, formatDate(w.created_at)),
              ),
            ),
          ),
        ),
      )
    : h("p", { class: "empty" }, "No waitlists yet: create your first one below.");

  return h(
    "section",
    {},
    h("h1", { tabindex: "-1" }, "Waitlists"),
    list,
    me.waitlists.can_create ? createForm() : h("p", { class: "notice" }, `Your plan allows ${me.waitlists.max} waitlist${me.waitlists.max === 1 ? "" : "s"}; you have ${me.waitlists.count}.`),
  );
}

function createForm() {
  const name = h("input", { name: "name", required: true, maxlength: 100 });
  const slug = h("input", { name: "slug", maxlength: 100, pattern: "[a-z0-9]+(-[a-z0-9]+)*" });
  const referral = checkbox("Referral program: referrals move people up the list", true, "referral");
  const signupPoints = h("input", { type: "number", name: "signup_points", min: 0, value: 50, inputmode: "numeric" });
  const referralPoints = h("input", { type: "number", name: "referral_points", min: 0, value: 30, inputmode: "numeric" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Create waitlist");
  return h(
    "form",
    {
      class: "card",
      "aria-labelledby": "create-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        submit.disabled = true;
        const body = {
          name: name.value.trim(),
          ...(slug.value.trim() ? { slug: slug.value.trim() } : {}),
          referral_rewards: {
            enabled: referral.querySelector("input").checked,
            signup_points: Number(signupPoints.value || 0),
            referral_points: Number(referralPoints.value || 0),
          },
        };
        try {
          const created = await api("POST", "/api/v1/waitlists", body);
          await account.refresh();
          location.hash = `#/w/${encodeURIComponent(created.data.waitlist.key)}`;
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h2", { id: "create-title" }, "New waitlist"),
    field("Name", name, "Up to 100 characters; unique across this service."),
    field("Slug (optional)", slug, "Lowercase letters, digits and dashes; made from the name when left empty. Your page lives at /p/slug."),
    referral,
    h("div", { class: "row" }, field("Points for signing up", signupPoints), field("Points per referral", referralPoints)),
    error,
    submit,
  );
}
