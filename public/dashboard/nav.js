// The heading and tabs shared by the views of one waitlist.
import { h } from "./dom.js";

const TABS = [
  ["", "Overview"],
  ["/settings", "Settings"],
  ["/page", "Landing page"],
  ["/broadcasts", "Broadcasts"],
  ["/webhooks", "Webhooks"],
];

export function waitlistHeader(key, name, active) {
  const base = `#/w/${encodeURIComponent(key)}`;
  return h(
    "header",
    { class: "waitlist-head" },
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "Waitlists"), " / "),
    h("h1", { tabindex: "-1" }, name),
    h(
      "nav",
      { class: "tabs", "aria-label": "Waitlist sections" },
      TABS.map(([path, label]) => h("a", { href: base + path, "aria-current": path === active ? "page" : false }, label)),
    ),
  );
}
