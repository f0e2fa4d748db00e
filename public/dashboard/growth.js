// Issue 46 on a waitlist's overview: the two embed snippets (script and iframe), where sign-ups come from
// (GET .../stats/sources) and the referral loop (GET .../stats/funnel), as tables with bars of our own (no library).
import { api, wl } from "./api.js";
import { formatNumber, formatPercent, h, mount } from "./dom.js";

/** A read-only snippet with its copy button. */
function snippet(label, code) {
  const id = `snippet-${Math.random().toString(36).slice(2, 9)}`;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("textarea", { id, class: "snippet", readonly: true, rows: 2, onfocus: (e) => e.target.select() }, code),
    h("button", { type: "button", onclick: (e) => navigator.clipboard?.writeText(code).then(() => (e.target.textContent = "Copied"), () => {}) }, "Copy"),
  );
}

/** The widget for any site: a script tag, and an iframe for sites that forbid scripts. */
export function embedCard(key) {
  const base = location.origin;
  return h(
    "section",
    { class: "card", "aria-labelledby": "embed-title" },
    h("h2", { id: "embed-title" }, "Put the form on your site"),
    h("p", {}, "Paste one of these where the form should appear. Add your site's domain to Allowed domains in Settings first: other sites are refused."),
    snippet("Script (the form in your page, with your questions, the captcha and the referral link after sign-up)", `<script src="${base}/embed.js" data-waitlist="${key}" async></script>`),
    snippet("Iframe (for sites that do not allow scripts)", `<iframe src="${base}/embed/${key}" title="Join the waitlist" width="100%" height="460" style="border:0"></iframe>`),
  );
}

/** A bar as wide as `value` of `max`, with its number: the table stays readable without the bars. */
const bar = (value, max) =>
  h("span", { class: "bar-cell" }, h("svg:svg", { class: "bar", viewBox: "0 0 100 8", preserveAspectRatio: "none", "aria-hidden": "true" }, h("svg:rect", { x: 0, y: 0, height: 8, width: max > 0 ? (100 * value) / max : 0 })), formatNumber(value));

export function sourcesCard(key) {
  const holder = h("div", {}, h("p", { class: "empty" }, "Loading…"));
  api("GET", `${wl(key)}/stats/sources?days=30`).then(
    ({ data }) => {
      if (!data.sources.length) return mount(holder, h("p", { class: "empty" }, "No views or sign-ups in the last 30 days."));
      const max = Math.max(...data.sources.map((r) => r.sign_ups));
      mount(
        holder,
        h(
          "div",
          { class: "table-wrap" },
          h(
          "table",
          { class: "sources" },
          h("caption", { class: "sr-only" }, "Views and sign-ups by source, last 30 days"),
          h("thead", {}, h("tr", {}, ["Source", "Medium", "Campaign", "Views", "Sign-ups", "Confirmed", "Conversion"].map((c) => h("th", { scope: "col" }, c)))),
          h(
            "tbody",
            {},
            data.sources.map((r) =>
              h(
                "tr",
                {},
                h("td", {}, r.source ?? "(direct)"),
                h("td", {}, r.medium ?? "–"),
                h("td", {}, r.campaign ?? "–"),
                h("td", { class: "num" }, formatNumber(r.views)),
                h("td", { class: "num" }, bar(r.sign_ups, max)),
                h("td", { class: "num" }, formatNumber(r.confirmed)),
                h("td", { class: "num" }, formatPercent(r.sign_ups, r.views)),
              ),
            ),
          ),
          ),
        ),
      );
    },
    (err) => mount(holder, h("p", { class: "notice error", role: "alert" }, err.message)),
  );
  return h("section", { class: "card", "aria-labelledby": "sources-title" }, h("h2", { id: "sources-title" }, "Where sign-ups come from (30 days)"), holder);
}

export function funnelCard(key) {
  const holder = h("div", {}, h("p", { class: "empty" }, "Loading…"));
  api("GET", `${wl(key)}/stats/funnel?days=30`).then(
    ({ data }) => {
      const steps = [
        ["Views", data.views],
        ["Sign-ups", data.sign_ups],
        ["Confirmed", data.confirmed],
        ["Shared their link", data.shares],
        ["Referred someone", data.referrers],
      ];
      const max = Math.max(1, ...steps.map(([, v]) => v));
      mount(
        holder,
        h("dl", { class: "funnel" }, steps.map(([label, value]) => [h("dt", {}, label), h("dd", {}, bar(value, max))])),
        h(
          "p",
          { class: "k-factor" },
          h("strong", { "data-k-factor": String(data.k_factor) }, `Viral coefficient K = ${data.k_factor}`),
          ` (${formatNumber(data.invitations)} invitations, ${formatNumber(data.referred_sign_ups)} referred sign-ups). Above 1, every sign-up brings more than one more.`,
        ),
      );
    },
    (err) => mount(holder, h("p", { class: "notice error", role: "alert" }, err.message)),
  );
  return h("section", { class: "card", "aria-labelledby": "funnel-title" }, h("h2", { id: "funnel-title" }, "The referral loop (30 days)"), holder);
}
