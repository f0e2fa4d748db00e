// DOM helpers of the dashboard: elements built from data with textContent only (never innerHTML),
// an announcer for screen readers, modal dialogs, and number and date formats.

/**
 * h("button", { class: "primary", onclick }, "Save"): attributes starting with "on" become listeners;
 * false, null and undefined attributes are left out; children are nodes or text (never parsed as HTML).
 */
export function h(tag, attrs = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "value" && !svg) el.value = value;
    else if (name === "checked" && !svg) el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A polite status message for sighted users (the banner) and screen readers (aria-live). */
export function announce(message, kind = "info") {
  const region = document.getElementById("status");
  if (!region) return;
  mount(region, message ? h("p", { class: `notice ${kind}` }, message) : null);
  if (message && kind !== "error") {
    clearTimeout(announce.timer);
    announce.timer = setTimeout(() => mount(region), 6000);
  }
}

/**
 * A modal <dialog> (keyboard: Tab stays inside, Esc closes). `body` gets a `close(result)` callback;
 * resolves with the result (undefined when dismissed).
 */
export function dialog(title, body) {
  return new Promise((resolve) => {
    let result;
    const close = (value) => {
      result = value;
      el.close();
    };
    const el = h("dialog", { class: "dialog", "aria-labelledby": "dialog-title" }, h("h2", { id: "dialog-title" }, title), body(close));
    el.addEventListener("close", () => {
      el.remove();
      resolve(result);
    });
    document.body.append(el);
    el.showModal();
  });
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export function confirmDialog(title, message, action = "Delete") {
  return dialog(title, (close) =>
    h(
      "div",
      {},
      h("p", {}, message),
      h("div", { class: "actions" }, h("button", { type: "button", onclick: () => close(false) }, "Cancel"), h("button", { type: "button", class: "danger", onclick: () => close(true) }, action)),
    ),
  ).then(Boolean);
}

/** Shows a secret once, with a copy button. */
export function showSecret(title, note, secret) {
  return dialog(title, (close) =>
    h(
      "div",
      {},
      h("p", {}, note),
      h("input", { class: "secret", readonly: true, value: secret, "aria-label": title, onfocus: (e) => e.target.select() }),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", onclick: (e) => navigator.clipboard?.writeText(secret).then(() => (e.target.textContent = "Copied"), () => {}) }, "Copy"),
        h("button", { type: "button", class: "primary", onclick: () => close() }, "Done"),
      ),
    ),
  );
}

export const formatNumber = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en"));
export const formatDate = (ms) => (ms ? new Date(ms).toLocaleDateString("en", { year: "numeric", month: "short", day: "numeric" }) : "–");
export const formatPercent = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "–");

/** A labelled form control: label text, then the control, then an optional hint. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintEl = hint ? h("small", { id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintEl);
}

/** A checkbox with its label after it. */
export function checkbox(label, checked, name) {
  const id = `c-${Math.random().toString(36).slice(2, 9)}`;
  return h("div", { class: "check" }, h("input", { type: "checkbox", id, name, checked }), h("label", { for: id }, label));
}
