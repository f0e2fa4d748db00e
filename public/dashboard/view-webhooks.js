// Webhook endpoints of one waitlist (issue 49): each with its event filter and format, switched off and on, edited,
// tested, its signing secret shown and rotated, and its delivery log with a retry per attempt and a replay since a time.
import { api, wl } from "./api.js";
import { announce, checkbox, confirmDialog, dialog, field, h, mount, showSecret } from "./dom.js";
import { waitlistHeader } from "./nav.js";

/** The event types an endpoint may filter on (src/outbox/events.ts EVENT_TYPES); none ticked: every type. */
const EVENT_TYPES = [
  "subscriber.created",
  "subscriber.pending",
  "subscriber.confirmed",
  "subscriber.updated",
  "subscriber.deleted",
  "referral.credited",
  "milestone.reached",
  "subscriber.invited",
  "subscriber.joined",
  "subscriber.rejected",
  "subscriber.unsubscribed",
  "subscriber.bounced",
  "subscriber.complained",
];
const FORMATS = [
  ["json", "JSON event (Standard Webhooks signature)"],
  ["slack", "Slack message"],
  ["discord", "Discord message"],
];
const STATUSES = ["delivered", "retrying", "failed", "skipped"];
const MAX_ENDPOINTS = 10;
const PAGE = 25;

const formatTime = (ms) => new Date(ms).toLocaleString("en", { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
const formatLabel = (format) => FORMATS.find(([value]) => value === format)?.[1] ?? format;
/** A receiver's answer on one line, short enough for a table cell (the whole first 1 KB is its title). */
const preview = (text) => {
  const line = (text ?? "").replace(/\s+/g, " ").trim();
  return line.length > 60 ? `${line.slice(0, 60)}…` : line || "–";
};
const reload = () => window.dispatchEvent(new HashChangeEvent("hashchange"));

export async function webhooksView(key) {
  const [settings, list] = await Promise.all([api("GET", `${wl(key)}/settings`).then((r) => r.data.settings), api("GET", `${wl(key)}/webhooks`).then((r) => r.data.webhooks)]);
  return h(
    "div",
    {},
    waitlistHeader(key, settings.name, "/webhooks"),
    h(
      "section",
      { "aria-labelledby": "endpoints-title" },
      h("h2", { id: "endpoints-title" }, "Webhook endpoints"),
      h(
        "p",
        { class: "hint" },
        `Every event is POSTed to each enabled endpoint whose filter takes it, signed with that endpoint's secret (Standard Webhooks). Up to ${MAX_ENDPOINTS} per waitlist; the first is the one the settings page edits. An endpoint failing for 5 days is switched off.`,
      ),
      list.length ? list.map((e) => endpointCard(key, e)) : h("p", { class: "empty" }, "No endpoint yet."),
    ),
    createForm(key, list.length),
  );
}

/** The fields of an endpoint, for a new one and for the edit dialog; `value()` is the request's body. */
function endpointFields(initial = {}) {
  const url = h("input", { type: "url", name: "url", required: true, maxlength: 2048, value: initial.url ?? "", placeholder: "https://example.com/hooks/waitlist" });
  const description = h("input", { name: "description", maxlength: 200, value: initial.description ?? "" });
  const format = h("select", { name: "format" }, FORMATS.map(([value, label]) => h("option", { value, selected: (initial.format ?? "json") === value }, label)));
  const events = EVENT_TYPES.map((type) => {
    const box = checkbox(type, (initial.events ?? []).includes(type), "events");
    box.querySelector("input").value = type;
    return box;
  });
  const legacy = checkbox("Also send the legacy X-Webhook-* headers (HMAC-SHA256 of the body)", initial.legacy_signature ?? false, "legacy_signature");
  return {
    element: [
      field("URL", url, "Events are POSTed here."),
      field("Description", description, "What it is for, e.g. \"CRM sync\"."),
      field("Format", format, "Slack and Discord get a short message instead of the event's JSON."),
      h("fieldset", { class: "events" }, h("legend", {}, "Events (none ticked: every event)"), events),
      legacy,
    ],
    value: () => ({
      url: url.value.trim(),
      description: description.value.trim() || null,
      format: format.value,
      events: events.map((box) => box.querySelector("input")).filter((c) => c.checked).map((c) => c.value),
      legacy_signature: legacy.querySelector("input").checked,
    }),
  };
}

function createForm(key, count) {
  const fields = endpointFields();
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const full = count >= MAX_ENDPOINTS;
  const submit = h("button", { type: "submit", class: "primary", disabled: full }, "Add endpoint");
  return h(
    "form",
    {
      // .change: hidden from a role that may not add one (dashboard.css)
      class: "card change",
      "aria-labelledby": "endpoint-create-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        submit.disabled = true;
        try {
          const made = (await api("POST", `${wl(key)}/webhooks`, fields.value())).data.webhook;
          await showSecret("Signing secret of the new endpoint", "Your receiver verifies each delivery with it. It is shown on this page too, when asked.", made.secret);
          announce("Endpoint added.");
          reload();
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        } finally {
          submit.disabled = full;
        }
      },
    },
    h("h2", { id: "endpoint-create-title" }, "Add an endpoint"),
    full ? h("p", { class: "notice" }, `This waitlist has ${MAX_ENDPOINTS} endpoints, the most it may have: delete one first.`) : null,
    fields.element,
    error,
    submit,
  );
}

/** One endpoint: what it is, its buttons, and its delivery log (which keeps its filters when the rest is redrawn). */
function endpointCard(key, initial) {
  const path = `${wl(key)}/webhooks/${encodeURIComponent(initial.id)}`;
  const titleId = `webhook-${initial.id}`;
  const button = (label, onclick, cls = "change") => h("button", { type: "button", class: cls, onclick }, label);
  // the buttons stay while what they act on is redrawn, so that focus stays on the one just used
  const toggleButton = button("", toggle);
  const secretButton = h("button", { type: "button", class: "change", "aria-expanded": "false", onclick: revealSecret }, "Show signing secret");
  const heading = h("h3", { id: titleId });
  const facts = h("dl", { class: "facts" });
  const result = h("p", { class: "notice", role: "status", hidden: true });
  const secretShown = h("code", { class: "secret-value", hidden: true });
  const log = deliveryLog(path);
  const card = h(
    "article",
    { class: "card endpoint", "data-webhook-id": initial.id, "aria-labelledby": titleId },
    heading,
    facts,
    h(
      "div",
      { class: "actions" },
      toggleButton,
      button("Edit", edit),
      button("Send test event", sendTest),
      secretButton,
      button("Rotate secret", rotate),
      button("Delete", remove, "danger"),
    ),
    result,
    secretShown,
    log.element,
  );
  let current = initial;
  let secret = null;

  function render(e) {
    current = e;
    card.dataset.enabled = String(e.enabled);
    mount(heading, e.url, " ", h("span", { class: "badge", "data-state": e.enabled ? "enabled" : "disabled" }, e.enabled ? "enabled" : "disabled"));
    mount(
      facts,
      h("dt", {}, "Description"),
      h("dd", {}, e.description ?? "–"),
      h("dt", {}, "Format"),
      h("dd", {}, formatLabel(e.format)),
      h("dt", {}, "Events"),
      h("dd", { class: "events" }, e.events.length ? e.events.join(", ") : "All events"),
      h("dt", {}, "Status"),
      h("dd", { class: "state" }, e.enabled ? "Enabled" : e.disabled_reason ? `Disabled: ${e.disabled_reason}` : "Disabled"),
      e.failing_since ? [h("dt", {}, "Failing since"), h("dd", {}, formatTime(e.failing_since))] : null,
      e.legacy_signature ? [h("dt", {}, "Signature"), h("dd", {}, "Standard Webhooks and the legacy X-Webhook-* headers")] : null,
    );
    toggleButton.textContent = e.enabled ? "Disable" : "Enable";
  }
  const showSecretValue = (show) => {
    secretShown.textContent = show ? secret : "";
    secretShown.hidden = !show;
    secretButton.textContent = show ? "Hide signing secret" : "Show signing secret";
    secretButton.setAttribute("aria-expanded", String(show));
  };

  async function toggle() {
    const enabling = !current.enabled;
    try {
      render((await api("PATCH", path, { enabled: enabling })).data.webhook);
      announce(enabling ? "Endpoint enabled." : "Endpoint disabled: its events are logged as skipped.");
    } catch (err) {
      announce(err.message, "error");
    }
  }

  function edit() {
    const fields = endpointFields(current);
    const error = h("p", { class: "notice error", role: "alert", hidden: true });
    return dialog("Edit the endpoint", (close) =>
      h(
        "form",
        {
          onsubmit: async (ev) => {
            ev.preventDefault();
            error.hidden = true;
            try {
              render((await api("PATCH", path, fields.value())).data.webhook);
              announce("Endpoint saved.");
              close(true);
            } catch (err) {
              error.textContent = err.message;
              error.hidden = false;
            }
          },
        },
        fields.element,
        error,
        h("div", { class: "actions" }, h("button", { type: "button", onclick: () => close(false) }, "Cancel"), h("button", { type: "submit", class: "primary" }, "Save")),
      ),
    );
  }

  async function remove() {
    if (!(await confirmDialog("Delete this endpoint?", `${current.url} gets no more events; its undelivered events and its delivery log are deleted too.`))) return;
    try {
      await api("DELETE", path);
    } catch (err) {
      return announce(err.message, "error");
    }
    announce("Endpoint deleted.");
    reload();
  }

  async function sendTest() {
    result.hidden = true;
    try {
      const { data } = await api("POST", `${path}/test`);
      result.textContent = data.delivered ? `Test event ${data.event_id} delivered (HTTP ${data.status}, ${data.duration_ms} ms).` : `Test event not delivered: ${data.error ?? `HTTP ${data.status}`}.`;
      result.className = `notice ${data.delivered ? "success" : "error"}`;
    } catch (err) {
      result.textContent = err.message;
      result.className = "notice error";
    }
    result.hidden = false;
  }

  async function revealSecret() {
    if (!secretShown.hidden) return showSecretValue(false);
    try {
      // the list leaves secrets out; the endpoint read alone has it (an admin's read)
      secret ??= (await api("GET", path)).data.webhook.secret;
      showSecretValue(true);
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async function rotate() {
    if (!(await confirmDialog("Rotate the signing secret?", "Deliveries carry a signature under the old secret too for 24 hours: update your receiver within that time.", "Rotate"))) return;
    try {
      secret = (await api("POST", `${path}/rotate-secret`)).data.secret;
      showSecretValue(true);
      announce("Signing secret rotated.");
    } catch (err) {
      announce(err.message, "error");
    }
  }

  render(initial);
  log.load(true).catch((err) => log.fail(err));
  return card;
}

/** An endpoint's delivery log, newest first: filters, a page at a time, a retry per attempt and a replay since a time. */
function deliveryLog(path) {
  const status = h("select", { name: "status" }, h("option", { value: "" }, "Any status"), STATUSES.map((s) => h("option", { value: s }, s)));
  const event = h("select", { name: "event" }, h("option", { value: "" }, "Any event"), EVENT_TYPES.map((type) => h("option", { value: type }, type)));
  const body = h("tbody", {});
  const more = h("button", { type: "button", hidden: true, onclick: () => load(false).catch(fail) }, "Load more");
  const empty = h("p", { class: "empty", hidden: true }, "No delivery for these filters yet.");
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const since = h("input", { type: "datetime-local", name: "since", required: true });
  const replayed = h("p", { class: "notice", role: "status", hidden: true });
  let cursor = null;
  let latest = 0;

  const row = (d) =>
    h(
      "tr",
      { "data-delivery": d.id, "data-event-id": d.event_id, "data-status": d.status },
      h("td", {}, h("time", { datetime: new Date(d.attempted_at).toISOString() }, formatTime(d.attempted_at))),
      h("th", { scope: "row" }, h("code", {}, d.event)),
      h("td", { class: "status" }, h("span", { class: `badge delivery-${d.status}` }, d.status)),
      h("td", { class: "num" }, d.status_code ?? "–"),
      h("td", { class: "num" }, d.latency_ms === null ? "–" : `${d.latency_ms} ms`),
      h("td", {}, d.error ?? "–"),
      h("td", { title: d.response ?? "" }, preview(d.response)),
      h("td", { class: "row-actions" }, h("button", { type: "button", class: "change small", "aria-label": `Retry ${d.event} ${d.event_id}`, onclick: () => retry(d) }, "Retry")),
    );

  async function load(reset) {
    const q = new URLSearchParams({ limit: String(PAGE) });
    if (status.value) q.set("status", status.value);
    if (event.value) q.set("event", event.value);
    if (!reset && cursor) q.set("before", cursor);
    const mine = ++latest;
    const { data } = await api("GET", `${path}/deliveries?${q}`);
    if (mine !== latest) return; // a newer load (a refresh, other filters) answers instead
    error.hidden = true;
    if (reset) mount(body);
    body.append(...data.deliveries.map(row));
    cursor = data.next_cursor;
    more.hidden = !cursor;
    empty.hidden = body.children.length > 0;
  }
  function fail(err) {
    error.textContent = err.message;
    error.hidden = false;
  }
  const refresh = () => load(true).catch(fail);

  /** After a retry or replay: the log again once the attempts have had a moment (the server sends them in the background). */
  function follow(times = 5) {
    if (times === 0 || !body.isConnected) return;
    setTimeout(() => refresh().then(() => follow(times - 1)), 1000);
  }

  async function retry(d) {
    try {
      await api("POST", `${path}/deliveries/${encodeURIComponent(d.id)}/retry`);
      announce(`${d.event} ${d.event_id} is being sent again.`);
      follow();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async function replay(e) {
    e.preventDefault();
    replayed.hidden = true;
    try {
      // datetime-local is the browser's local time, as Date reads it
      const { data } = await api("POST", `${path}/replay`, { since: new Date(since.value).getTime() });
      replayed.textContent = data.replayed === 1 ? "1 event is being sent again." : `${data.replayed} events are being sent again.`;
      replayed.className = "notice success";
      follow();
    } catch (err) {
      replayed.textContent = err.message;
      replayed.className = "notice error";
    }
    replayed.hidden = false;
  }

  return {
    load,
    fail,
    element: h(
      "section",
      { class: "delivery-log" },
      h("h4", {}, "Delivery log"),
      h(
        "form",
        {
          class: "filters row",
          onsubmit: (e) => {
            e.preventDefault();
            refresh();
          },
        },
        field("Status", status),
        field("Event", event),
        h("div", { class: "actions" }, h("button", { type: "submit" }, "Filter"), h("button", { type: "button", onclick: refresh }, "Refresh")),
      ),
      error,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "deliveries" },
          h("caption", { class: "sr-only" }, "Delivery log"),
          h("thead", {}, h("tr", {}, ["Time", "Event", "Status", "HTTP", "Latency", "Error", "Response", ""].map((c) => h("th", { scope: "col" }, c)))),
          body,
        ),
      ),
      empty,
      more,
      h(
        "form",
        { class: "row replay change", onsubmit: replay },
        field("Replay since", since, "Sends again every event since then that was not delivered: failed, retrying, or skipped while disabled."),
        h("div", { class: "actions" }, h("button", { type: "submit", class: "change" }, "Replay")),
      ),
      replayed,
    ),
  };
}
