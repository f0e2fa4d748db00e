// One waitlist at a glance: headline counters, the daily chart (30 or 90 days), conversion, top
// referrers, and the subscribers table.
import { api, ApiError, wl } from "./api.js";
import { dailyChart } from "./chart.js";
import { formatNumber, formatPercent, h, mount } from "./dom.js";
import { waitlistHeader } from "./nav.js";
import { subscribersTable } from "./subscribers-table.js";
import { embedCard, funnelCard, sourcesCard } from "./growth.js";

/** The answer, or `fallback` when the plan does not include the endpoint (403). */
const unlessForbidden = (promise, fallback) => promise.catch((err) => (err instanceof ApiError && err.status === 403 ? fallback : Promise.reject(err)));

export async function overviewView(key) {
  const [settings, stats, tags] = await Promise.all([
    api("GET", `${wl(key)}/settings`).then((r) => r.data.settings),
    api("GET", `${wl(key)}/stats`).then((r) => r.data),
    unlessForbidden(api("GET", `${wl(key)}/tags`).then((r) => r.data.tags), null),
  ]);
  const counters = h("div", { class: "counters" });
  const renderCounters = (s) =>
    mount(
      counters,
      counter("Subscribers", formatNumber(s.subscribers_total), "subscribers"),
      counter("Page views", formatNumber(s.views_total), "views"),
      counter("Conversion", formatPercent(s.subscribers_total, s.views_total), "conversion", "Sign-ups per tracked view"),
      counter("Referral program", s.referral_program_enabled ? "On" : "Off", "referrals"),
    );
  renderCounters(stats);

  const chartHolder = h("div", { class: "chart-holder" });
  const rangeButtons = [30, 90].map((days) => h("button", { type: "button", "aria-pressed": days === 30 ? "true" : "false", onclick: () => showDays(days) }, `${days} days`));
  async function showDays(days) {
    for (const b of rangeButtons) b.setAttribute("aria-pressed", String(b.textContent.startsWith(String(days))));
    try {
      const { data } = await api("GET", `${wl(key)}/stats/daily?days=${days}`);
      mount(chartHolder, dailyChart(data.days));
    } catch (err) {
      mount(chartHolder, h("p", { class: "notice error", role: "alert" }, err.message));
    }
  }
  await showDays(30);

  const referrers = h("div", {});
  async function loadReferrers() {
    try {
      const { data } = await api("GET", `${wl(key)}/subscribers?sort_by=referral_count&sort_dir=desc&limit=5`);
      const top = data.subscribers.filter((s) => s.referral_count > 0);
      mount(
        referrers,
        top.length
          ? h("ol", { class: "referrers" }, top.map((s) => h("li", {}, h("span", {}, s.email), h("span", { class: "num" }, `${formatNumber(s.referral_count)} referral${s.referral_count === 1 ? "" : "s"}`))))
          : h("p", { class: "empty" }, "No referrals yet."),
      );
    } catch (err) {
      mount(referrers, h("p", { class: "notice" }, err.message));
    }
  }
  await loadReferrers();

  /** After an edit or a delete: the counters, chart and referrers follow. */
  async function refresh() {
    renderCounters((await api("GET", `${wl(key)}/stats`)).data);
    await Promise.all([showDays(Number(rangeButtons.find((b) => b.getAttribute("aria-pressed") === "true").textContent.split(" ")[0])), loadReferrers()]);
  }

  return h(
    "div",
    {},
    waitlistHeader(key, settings.name, ""),
    counters,
    h(
      "section",
      { class: "card", "aria-labelledby": "daily-title" },
      h("div", { class: "section-head" }, h("h2", { id: "daily-title" }, "Sign-ups and views per day"), h("div", { class: "segmented", role: "group", "aria-label": "Range" }, rangeButtons)),
      chartHolder,
    ),
    h("section", { class: "card", "aria-labelledby": "ref-title" }, h("h2", { id: "ref-title" }, "Top referrers"), referrers),
    sourcesCard(key),
    funnelCard(key),
    embedCard(key),
    tags === null
      ? h("section", { class: "card" }, h("h2", {}, "Subscribers"), h("p", { class: "notice" }, "Your plan does not include the subscriber list. Growth and higher plans do."))
      : subscribersTable(key, tags, refresh),
  );
}

function counter(label, value, name, hint) {
  return h("div", { class: "counter", "data-counter": name }, h("span", { class: "label" }, label), h("strong", {}, value), hint ? h("small", {}, hint) : null);
}
