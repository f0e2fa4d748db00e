// The daily chart: sign-ups as bars and views as a line, an inline SVG of our own (no library, no
// inline style: colors come from the stylesheet through classes). The same numbers are in a table.
import { formatNumber, h } from "./dom.js";

const W = 720;
const H = 220;
const PAD = { top: 12, right: 12, bottom: 28, left: 44 };

/** An axis maximum of four round steps (1, 2 or 5 x 10^k each) at or above `n`, so every grid line is a whole number. */
function niceMax(n) {
  const raw = Math.max(1, n / 4);
  const p = 10 ** Math.floor(Math.log10(raw));
  return 4 * [1, 2, 5, 10].map((m) => m * p).find((m) => m >= raw);
}

/** `days`: [{date, sign_ups, views}] oldest first (GET .../stats/daily). */
export function dailyChart(days) {
  const max = niceMax(Math.max(1, ...days.map((d) => Math.max(d.sign_ups, d.views))));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const step = plotW / days.length;
  const x = (i) => PAD.left + step * i + step / 2;
  const y = (v) => PAD.top + plotH - (v / max) * plotH;
  const totalSignUps = days.reduce((s, d) => s + d.sign_ups, 0);
  const totalViews = days.reduce((s, d) => s + d.views, 0);
  const label = `Sign-ups and views per day, ${days[0]?.date} to ${days[days.length - 1]?.date}: ${formatNumber(totalSignUps)} sign-ups, ${formatNumber(totalViews)} views.`;

  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    h("svg:g", {}, h("svg:line", { class: "grid", x1: PAD.left, x2: W - PAD.right, y1: y(max * f), y2: y(max * f) }), h("svg:text", { class: "axis", x: PAD.left - 6, y: y(max * f) + 4, "text-anchor": "end" }, formatNumber(Math.round(max * f)))),
  );
  const barW = Math.max(1, step * 0.6);
  const bars = days.map((d, i) =>
    h("svg:rect", { class: "bar", x: x(i) - barW / 2, y: y(d.sign_ups), width: barW, height: Math.max(0, PAD.top + plotH - y(d.sign_ups)) }, h("svg:title", {}, `${d.date}: ${d.sign_ups} sign-ups, ${d.views} views`)),
  );
  const line = h("svg:polyline", { class: "line", fill: "none", points: days.map((d, i) => `${x(i).toFixed(1)},${y(d.views).toFixed(1)}`).join(" ") });
  const every = Math.ceil(days.length / 6);
  const ticks = days.map((d, i) => (i % every === 0 ? h("svg:text", { class: "axis", x: x(i), y: H - 8, "text-anchor": "middle" }, d.date.slice(5)) : null));

  return h(
    "figure",
    { class: "chart" },
    h("svg:svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, "data-sign-ups": totalSignUps, "data-views": totalViews }, grid, bars, line, ticks),
    h("figcaption", {}, h("span", { class: "key bar-key" }, "Sign-ups"), " ", h("span", { class: "key line-key" }, "Views")),
    h(
      "details",
      {},
      h("summary", {}, "Show as a table"),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          {},
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Date"), h("th", { scope: "col" }, "Sign-ups"), h("th", { scope: "col" }, "Views"))),
          h("tbody", {}, days.map((d) => h("tr", {}, h("td", {}, d.date), h("td", {}, formatNumber(d.sign_ups)), h("td", {}, formatNumber(d.views))))),
        ),
      ),
    ),
  );
}
