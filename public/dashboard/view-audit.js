// The audit log (issue 48): every change made through the API, newest first, filtered by who and what, a page at a time.
import { api } from "./api.js";
import { field, h, mount } from "./dom.js";

const formatTime = (ms) => new Date(ms).toLocaleString("en", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });

export async function auditView() {
  const { data: keys } = await api("GET", "/api/v1/account/keys");
  const actor = h("select", { name: "actor" }, h("option", { value: "" }, "Anyone"), keys.keys.map((k) => h("option", { value: k.id }, `Key: ${k.name}`)));
  const action = h("input", { name: "action", placeholder: "e.g. subscriber or settings.update", spellcheck: "false" });
  const since = h("input", { type: "date", name: "since" });
  const body = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, "Load more");
  const empty = h("p", { class: "empty", hidden: true }, "Nothing recorded for these filters.");
  let cursor = null;

  const row = (e) =>
    h(
      "tr",
      { "data-entry": e.id },
      h("td", {}, h("time", { datetime: new Date(e.at).toISOString() }, formatTime(e.at))),
      h("td", {}, `${e.actor.type === "key" ? "Key" : "User"}: ${e.actor.name}`),
      h("th", { scope: "row" }, h("code", {}, e.action)),
      h("td", {}, e.target ?? "–"),
      h("td", {}, e.ip ?? "–"),
      h("td", { class: "agent", title: e.user_agent ?? "" }, e.user_agent ?? "–"),
    );

  async function load(reset) {
    const q = new URLSearchParams({ limit: "50" });
    if (actor.value) q.set("actor", actor.value);
    if (action.value.trim()) q.set("action", action.value.trim());
    if (since.value) q.set("since", new Date(`${since.value}T00:00:00`).toISOString());
    if (!reset && cursor) q.set("before", cursor);
    const { data } = await api("GET", `/api/v1/account/audit?${q}`);
    if (reset) mount(body);
    body.append(...data.entries.map(row));
    cursor = data.next_cursor;
    more.hidden = !cursor;
    empty.hidden = body.children.length > 0;
  }
  more.addEventListener("click", () => load(false));

  await load(true);
  return h(
    "section",
    {},
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Waitlists"), " / "),
    h("h1", { tabindex: "-1" }, "Audit log"),
    h("p", {}, "Every change made through the API or this dashboard: who, what, when and from where. Sign-ups and page views are the visitors' own and are not listed here."),
    h(
      "form",
      {
        class: "filters row",
        onsubmit: (e) => {
          e.preventDefault();
          load(true);
        },
      },
      field("Who", actor),
      field("What", action),
      field("Since", since),
      h("button", { type: "submit" }, "Filter"),
    ),
    h(
      "div",
      { class: "table-wrap" },
      h("table", { class: "audit" }, h("caption", { class: "sr-only" }, "Audit log"), h("thead", {}, h("tr", {}, ["When", "Who", "What", "Target", "IP", "User agent"].map((c) => h("th", { scope: "col" }, c)))), body),
    ),
    empty,
    more,
  );
}
