// Broadcasts (issue 45): the list with counts, a new draft, and one broadcast: a draft is composed with a live preview
// (saved as you type, then previewed: its recipients now and the first one's email), test-sent, sent or scheduled;
// a broadcast on its way shows its progress until it is sent.
import { api, ApiError, wl } from "./api.js";
import { announce, confirmDialog, field, formatDate, formatNumber, h, mount } from "./dom.js";
import { waitlistHeader } from "./nav.js";

const COUNTS = [
  ["recipients", "Recipients"],
  ["sent", "Sent"],
  ["failed", "Failed"],
  ["bounced", "Bounced"],
  ["skipped", "Skipped"],
  ["unsubscribed", "Unsubscribed"],
];
const STARTER = "Hi {{first_name}},\n\nYou are **#{{position}}** on the list. Share [your link]({{referral_link}}) to move up.\n";
const MERGE_HINT = "Markdown. Merge tags: {{first_name}}, {{position}}, {{referral_link}}, {{status_link}}, {{unsubscribe_link}} (added at the end when missing).";

const base = (key) => `#/w/${encodeURIComponent(key)}/broadcasts`;
const statusBadge = (status) => h("span", { class: `badge broadcast-${status}`, "data-status": status }, status);
const when = (ms) => (ms ? new Date(ms).toLocaleString("en", { dateStyle: "medium", timeStyle: "short" }) : "–");

export async function broadcastsView(key) {
  const [settings, list] = await Promise.all([api("GET", `${wl(key)}/settings`).then((r) => r.data.settings), api("GET", `${wl(key)}/broadcasts`).then((r) => r.data.broadcasts)]);
  const subject = h("input", { name: "subject", required: true, maxlength: 200, placeholder: "50 more spots this week" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  async function create(e) {
    e.preventDefault();
    error.hidden = true;
    try {
      const { data } = await api("POST", `${wl(key)}/broadcasts`, { subject: subject.value, body_markdown: STARTER });
      location.hash = `${base(key)}/${encodeURIComponent(data.broadcast.id)}`;
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
    }
  }
  return h(
    "div",
    {},
    waitlistHeader(key, settings.name, "/broadcasts"),
    h(
      "form",
      { class: "card", onsubmit: create },
      h("h2", {}, "New broadcast"),
      h("p", { class: "hint" }, "Write to your list: choose who receives it, preview it, send yourself a test, then send or schedule it."),
      field("Subject", subject),
      error,
      h("button", { type: "submit", class: "primary" }, "Write it"),
    ),
    h(
      "section",
      { class: "card", "aria-labelledby": "broadcasts-title" },
      h("h2", { id: "broadcasts-title" }, "Broadcasts"),
      list.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "broadcasts" },
              h("thead", {}, h("tr", {}, h("th", {}, "Subject"), h("th", {}, "Status"), COUNTS.map(([, label]) => h("th", { class: "num" }, label)), h("th", {}, "Created"))),
              h(
                "tbody",
                {},
                list.map((b) =>
                  h(
                    "tr",
                    { "data-id": b.id },
                    h("th", { scope: "row" }, h("a", { href: `${base(key)}/${encodeURIComponent(b.id)}` }, b.subject)),
                    h("td", {}, statusBadge(b.status)),
                    COUNTS.map(([name]) => h("td", { class: "num", "data-count": name }, formatNumber(b[name]))),
                    h("td", {}, formatDate(b.created_at)),
                  ),
                ),
              ),
            ),
          )
        : h("p", { class: "empty" }, "No broadcast yet."),
    ),
  );
}

export async function broadcastView(key, id) {
  const [settings, b, tags] = await Promise.all([
    api("GET", `${wl(key)}/settings`).then((r) => r.data.settings),
    api("GET", `${wl(key)}/broadcasts/${encodeURIComponent(id)}`).then((r) => r.data.broadcast),
    api("GET", `${wl(key)}/tags`).then(
      (r) => r.data.tags,
      (err) => (err instanceof ApiError && err.status === 403 ? [] : Promise.reject(err)),
    ),
  ]);
  const body = b.status === "draft" ? composer(key, b, tags) : progress(key, b);
  return h("div", {}, waitlistHeader(key, settings.name, "/broadcasts"), h("p", { class: "crumbs" }, h("a", { href: base(key) }, "All broadcasts")), body);
}

/** A draft: its fields, saved and previewed after each pause in typing; test, send, schedule, delete. */
function composer(key, b, tags) {
  const path = `${wl(key)}/broadcasts/${encodeURIComponent(b.id)}`;
  const seg = b.segment;
  const subject = h("input", { name: "subject", value: b.subject, required: true, maxlength: 200 });
  const text = h("textarea", { name: "body_markdown", rows: 12 }, b.body_markdown);
  const statuses = ["waiting", "invited", "joined"].map((s) => {
    const box = h("input", { type: "checkbox", name: "status", value: s, checked: !seg.status || seg.status.includes(s), id: `status-${s}` });
    return { s, box, el: h("div", { class: "check" }, box, h("label", { for: `status-${s}` }, s)) };
  });
  const tagSelect = (name, chosen = []) =>
    h("select", { name, multiple: true, size: Math.min(6, Math.max(2, tags.length)) }, tags.map((t) => h("option", { value: t.name, selected: chosen.some((c) => c.toLowerCase() === t.name.toLowerCase()) }, t.name)));
  const tagsAny = tagSelect("tags_any", seg.tags_any);
  const tagsAll = tagSelect("tags_all", seg.tags_all);
  const number = (name, value, min) => h("input", { name, type: "number", min, inputmode: "numeric", value: value ?? "" });
  const minReferrals = number("min_referrals", seg.min_referrals, 0);
  const positionLte = number("position_lte", seg.position_lte, 1);
  const day = (ms) => (ms === undefined ? "" : new Date(ms).toISOString().slice(0, 10));
  const after = h("input", { name: "signed_up_after", type: "date", value: day(seg.signed_up_after) });
  const before = h("input", { name: "signed_up_before", type: "date", value: day(seg.signed_up_before) });

  const segment = () => {
    const out = {};
    const chosen = statuses.filter((x) => x.box.checked).map((x) => x.s);
    if (chosen.length && chosen.length < 3) out.status = chosen;
    const picked = (select) => [...select.selectedOptions].map((o) => o.value);
    if (picked(tagsAny).length) out.tags_any = picked(tagsAny);
    if (picked(tagsAll).length) out.tags_all = picked(tagsAll);
    if (minReferrals.value !== "") out.min_referrals = Number(minReferrals.value);
    if (positionLte.value !== "") out.position_lte = Number(positionLte.value);
    if (after.value) out.signed_up_after = Date.parse(after.value);
    if (before.value) out.signed_up_before = Date.parse(before.value);
    return out;
  };

  const recipients = h("strong", { "data-recipients": "" }, formatNumber(b.recipients));
  const previewNote = h("p", { class: "hint", role: "status" }, "The preview follows your changes; the draft is saved as you type.");
  const previewSubject = h("p", { class: "preview-subject" });
  // the HTML part in a frame of its own (its CSP lets the email's inline styles apply); it says when it is ready
  const frame = h("iframe", { class: "preview-frame email-frame", title: "Preview of the email (HTML part)", sandbox: "allow-scripts", src: "/dashboard/email-frame" });
  let html = "";
  const show = () => frame.contentWindow?.postMessage(html, "*");
  const onReady = (e) => {
    if (!frame.isConnected && html) return window.removeEventListener("message", onReady);
    if (e.source === frame.contentWindow && e.data === "email-frame-ready") show();
  };
  window.addEventListener("message", onReady);
  const plain = h("pre", { class: "email-text", "aria-label": "Preview of the email (text part)" });
  let timer;
  let seq = 0;
  async function saveAndPreview() {
    const mine = ++seq;
    try {
      await api("PATCH", path, { subject: subject.value, body_markdown: text.value, segment: segment() });
      const { data } = await api("GET", `${path}/preview`);
      if (mine !== seq) return;
      recipients.textContent = formatNumber(data.recipients);
      previewSubject.textContent = data.sample.subject;
      html = data.sample.html;
      show();
      plain.textContent = data.sample.text;
      previewNote.textContent = "Saved. The preview shows the email of the first recipient.";
      previewNote.className = "hint";
    } catch (err) {
      if (mine !== seq) return;
      previewNote.textContent = `Not saved: ${err.message}`;
      previewNote.className = "notice error";
    }
  }
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(saveAndPreview, 500);
  };

  const testTo = h("input", { type: "email", name: "test_email", placeholder: "you@example.com", autocomplete: "email" });
  const sendTest = async () => {
    try {
      await saveAndPreview();
      const r = await api("POST", `${path}/test`, { email: testTo.value });
      announce(r.message);
    } catch (err) {
      announce(err.message, "error");
    }
  };
  const at = h("input", { type: "datetime-local", name: "send_at" });
  async function send(sendAt) {
    await saveAndPreview();
    const what = sendAt ? `Schedule it for ${when(sendAt)}?` : "Send it now?";
    if (!(await confirmDialog(what, `It goes to the ${recipients.textContent} subscribers of its segment (as they are when it is sent), once each.`, sendAt ? "Schedule" : "Send"))) return;
    try {
      await api("POST", `${path}/send`, sendAt ? { send_at: sendAt } : {});
      announce(sendAt ? "Broadcast scheduled." : "Broadcast on its way.");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (err) {
      announce(err.message, "error");
    }
  }
  const remove = async () => {
    if (!(await confirmDialog("Delete this draft?", "It cannot be undone."))) return;
    try {
      await api("DELETE", path);
      location.hash = base(key);
    } catch (err) {
      announce(err.message, "error");
    }
  };

  const form = h(
    "form",
    { class: "card", oninput: changed, onchange: changed, onsubmit: (e) => e.preventDefault() },
    h("h2", {}, "Compose ", statusBadge(b.status)),
    field("Subject", subject),
    field("Message", text, MERGE_HINT),
    h(
      "fieldset",
      {},
      h("legend", {}, "Who receives it"),
      h("p", { class: "hint" }, "Everything you choose applies together. Unconfirmed, rejected, unsubscribed, bounced and complained subscribers never receive a broadcast."),
      h("div", { class: "segmented" }, statuses.map((x) => x.el)),
      tags.length ? h("div", { class: "row" }, field("With any of these tags", tagsAny), field("With all of these tags", tagsAll)) : null,
      h("div", { class: "row" }, field("At least this many referrals", minReferrals), field("At this position or better", positionLte)),
      h("div", { class: "row" }, field("Signed up after", after), field("Signed up before", before)),
      h("p", {}, recipients, " recipients now"),
    ),
  );
  saveAndPreview();
  return h(
    "div",
    { class: "page-editor" },
    h(
      "div",
      {},
      form,
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Send"),
        h("div", { class: "row" }, field("Send a test to", testTo, "With example values, subject prefixed [Test]."), h("div", { class: "actions" }, h("button", { type: "button", class: "change", onclick: sendTest }, "Send test"))),
        h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => send() }, "Send now")),
        h(
          "div",
          { class: "row" },
          field("Or schedule for", at),
          h("div", { class: "actions" }, h("button", { type: "button", class: "change", onclick: () => (at.value ? send(new Date(at.value).getTime()) : announce("Choose a date and time first.", "error")) }, "Schedule")),
        ),
        h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: remove }, "Delete draft")),
      ),
    ),
    h("section", { class: "card preview", "aria-labelledby": "email-preview-title" }, h("h2", { id: "email-preview-title" }, "Preview"), previewNote, previewSubject, frame, h("details", {}, h("summary", {}, "Text part"), plain)),
  );
}

/** A scheduled, sending, sent or cancelled broadcast: its progress and counts, refreshed until it is done. */
function progress(key, initial) {
  const path = `${wl(key)}/broadcasts/${encodeURIComponent(initial.id)}`;
  const holder = h("section", { class: "card", "aria-live": "polite" });
  const render = (b) => {
    const settled = b.sent + b.failed + b.bounced + b.skipped;
    const open = b.status === "scheduled" || b.status === "sending";
    mount(
      holder,
      h("h2", {}, b.subject, " ", statusBadge(b.status)),
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, b.status === "scheduled" ? "Sends at" : "Started"),
        h("dd", {}, when(b.status === "scheduled" ? b.send_at : b.started_at)),
        b.finished_at ? [h("dt", {}, "Finished"), h("dd", {}, when(b.finished_at))] : null,
        b.cancelled_at ? [h("dt", {}, "Cancelled"), h("dd", {}, when(b.cancelled_at))] : null,
      ),
      b.status === "sending" ? h("div", { class: "progress" }, h("progress", { max: Math.max(1, b.recipients), value: settled }), h("span", {}, `${formatNumber(settled)} of ${formatNumber(b.recipients)} settled`)) : null,
      h("div", { class: "counters" }, COUNTS.map(([name, label]) => h("div", { class: "counter", "data-count": name }, h("span", { class: "label" }, label), h("strong", {}, formatNumber(b[name]))))),
      open ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: cancel }, b.status === "scheduled" ? "Cancel the schedule" : "Stop sending")) : null,
      h("details", {}, h("summary", {}, "Message"), h("pre", { class: "email-text" }, b.body_markdown)),
    );
    if (open) setTimeout(poll, 2000);
  };
  async function poll() {
    if (!holder.isConnected) return; // the user left this page
    try {
      render((await api("GET", path)).data.broadcast);
    } catch (err) {
      announce(err.message, "error");
    }
  }
  async function cancel() {
    if (!(await confirmDialog("Stop this broadcast?", "Emails not sent yet will not be sent; those already sent stay sent.", "Stop"))) return;
    try {
      render((await api("POST", `${path}/cancel`)).data.broadcast);
      announce("Broadcast cancelled.");
    } catch (err) {
      announce(err.message, "error");
    }
  }
  render(initial);
  return holder;
}
