// The subscribers table of one waitlist: search, sort, tag filter and pages over GET .../subscribers,
// editing points and tags, deleting with a confirmation, and the CSV export.
import { api, wl } from "./api.js";
import { announce, checkbox, confirmDialog, dialog, field, formatDate, formatNumber, h, mount } from "./dom.js";

const SORTS = [
  ["date", "Sign-up date"],
  ["position", "Position"],
  ["points", "Points"],
  ["referral_count", "Referrals"],
  ["email", "Email"],
];

const NUMERIC = new Set(["Position", "Points", "Referrals"]);

/** The table as a section element; `onChange` runs after an edit or delete (counters refresh). */
export function subscribersTable(key, tags, onChange) {
  const state = { page: 1, limit: 20, sort_by: "date", sort_dir: "desc", q: "", tag: "", status: "" };
  const body = h("div", { class: "table-wrap", "aria-live": "polite" });
  const pager = h("nav", { class: "pager", "aria-label": "Subscriber pages" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });

  async function load() {
    const query = new URLSearchParams({ page: String(state.page), limit: String(state.limit), sort_by: state.sort_by, sort_dir: state.sort_dir });
    if (state.q) query.set("q", state.q);
    if (state.tag) query.set("tag", state.tag);
    if (state.status) query.set("status", state.status);
    error.hidden = true;
    try {
      const { data } = await api("GET", `${wl(key)}/subscribers?${query}`);
      render(data);
    } catch (err) {
      mount(body);
      mount(pager);
      error.textContent = err.message;
      error.hidden = false;
    }
  }

  function render(data) {
    const rows = data.subscribers.map((s) =>
      h(
        "tr",
        { "data-email": s.email },
        h("td", { class: "num" }, s.position === undefined ? (s.final_position ? `(${formatNumber(s.final_position)})` : "–") : formatNumber(s.position)),
        h(
          "td",
          {},
          h("span", { class: `badge status-${s.status}` }, s.status),
          // issue 16: no email goes to them; they keep their place
          s.unsubscribed_at ? h("span", { class: "badge unsubscribed", title: `Unsubscribed ${formatDate(s.unsubscribed_at)}` }, "unsubscribed") : null,
        ),
        h("th", { scope: "row" }, s.email),
        h("td", {}, s.name ?? ""),
        h("td", { class: "num" }, s.points === undefined ? "–" : formatNumber(s.points)),
        h("td", { class: "num" }, formatNumber(s.referral_count)),
        h("td", {}, s.tags.map((t) => h("span", { class: `tag tag-${t.color}` }, t.name))),
        h("td", {}, formatDate(s.joined_at)),
        h(
          "td",
          { class: "row-actions" },
          s.status === "waiting" ? h("button", { type: "button", class: "change", "aria-label": `Invite ${s.email}`, onclick: () => inviteOne(s) }, "Invite") : null,
          s.status === "waiting" || s.status === "invited" ? h("button", { type: "button", class: "change", "aria-label": `Reject ${s.email}`, onclick: () => rejectOne(s) }, "Reject") : null,
          h("button", { type: "button", class: "change", "aria-label": `Edit ${s.email}`, onclick: () => edit(s) }, "Edit"),
          h("button", { type: "button", class: "danger", "aria-label": `Delete ${s.email}`, onclick: () => remove(s) }, "Delete"),
        ),
      ),
    );
    mount(
      body,
      data.subscribers.length
        ? h(
            "table",
            { class: "subscribers" },
            h("caption", { class: "sr-only" }, `Subscribers, page ${data.page} of ${Math.max(1, data.pages)}`),
            h("thead", {}, h("tr", {}, ["Position", "Status", "Email", "Name", "Points", "Referrals", "Tags", "Joined", "Actions"].map((c) => h("th", { scope: "col", class: NUMERIC.has(c) && "num" }, c)))),
            h("tbody", {}, rows),
          )
        : h("p", { class: "empty" }, state.q || state.tag ? "No subscriber matches." : "No subscribers yet."),
    );
    mount(
      pager,
      h("button", { type: "button", disabled: data.page <= 1, onclick: () => go(data.page - 1) }, "Previous"),
      h("span", { class: "page-of" }, `Page ${data.page} of ${Math.max(1, data.pages)} · ${formatNumber(data.total)} total`),
      h("button", { type: "button", disabled: data.page >= data.pages, onclick: () => go(data.page + 1) }, "Next"),
    );
  }

  const go = (page) => {
    state.page = page;
    void load();
  };

  async function edit(s) {
    const points = h("input", { type: "number", min: 0, value: s.points ?? 0, disabled: s.points === undefined, inputmode: "numeric" });
    const current = new Set(s.tags.map((t) => t.id));
    const boxes = tags.map((t) => ({ tag: t, box: checkbox(t.name, current.has(t.id)) }));
    const newTag = h("input", { maxlength: 50, placeholder: "e.g. beta" });
    const error = h("p", { class: "notice error", role: "alert", hidden: true });
    await dialog(`Edit ${s.email}`, (close) =>
      h(
        "form",
        {
          onsubmit: async (e) => {
            e.preventDefault();
            try {
              const ref = `${wl(key)}/subscribers/${encodeURIComponent(s.id)}`;
              if (s.points !== undefined && Number(points.value) !== s.points) await api("PUT", ref, { points: Number(points.value) });
              const add = boxes.filter(({ tag, box }) => box.querySelector("input").checked && !current.has(tag.id)).map(({ tag }) => tag.id);
              if (newTag.value.trim()) add.push(newTag.value.trim());
              if (add.length) await api("POST", `${ref}/tags`, { tags: add });
              for (const { tag, box } of boxes) if (!box.querySelector("input").checked && current.has(tag.id)) await api("DELETE", `${ref}/tags/${encodeURIComponent(tag.id)}`);
              close(true);
              announce(`Saved ${s.email}.`);
              if (add.length) await reloadTags();
              await onChange?.();
              await load();
            } catch (err) {
              error.textContent = err.message;
              error.hidden = false;
            }
          },
        },
        field("Points", points, s.points === undefined ? "Points can be set once the subscriber has confirmed their email." : "Position follows points at once."),
        h("fieldset", {}, h("legend", {}, "Tags"), boxes.length ? boxes.map((b) => b.box) : h("p", { class: "hint" }, "No tags yet."), field("Add a tag", newTag)),
        error,
        h("div", { class: "actions" }, h("button", { type: "button", onclick: () => close(false) }, "Cancel"), h("button", { type: "submit", class: "primary" }, "Save")),
      ),
    );
  }

  async function remove(s) {
    if (!(await confirmDialog(`Delete ${s.email}?`, "They leave the waitlist at once; a referral they brought is taken back from their referrer. This cannot be undone."))) return;
    try {
      await api("DELETE", `${wl(key)}/subscribers/${encodeURIComponent(s.id)}`);
      announce(`Deleted ${s.email}.`);
      await onChange?.();
      await load();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async function inviteOne(s) {
    try {
      await api("POST", `${wl(key)}/subscribers/invite`, { ids: [s.id] });
      announce(`Invited ${s.email}: the invitation email is on its way.`);
      await onChange?.();
      await load();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  async function rejectOne(s) {
    if (!(await confirmDialog(`Reject ${s.email}?`, "They leave the line for good; an invitation they have stops working.", "Reject"))) return;
    try {
      await api("POST", `${wl(key)}/subscribers/${encodeURIComponent(s.id)}/reject`);
      announce(`Rejected ${s.email}.`);
      await onChange?.();
      await load();
    } catch (err) {
      announce(err.message, "error");
    }
  }

  /** "Invite next N": who they are first, then one click. */
  const inviteCount = h("input", { type: "number", min: 1, max: 100, value: 10, inputmode: "numeric" });
  const invitePreview = h("div", { class: "invite-preview", "aria-live": "polite" });
  async function previewInvite() {
    const n = Math.max(1, Math.min(100, Number(inviteCount.value) || 1));
    try {
      const { data } = await api("GET", `${wl(key)}/subscribers?status=waiting&sort_by=position&sort_dir=asc&limit=${n}`);
      if (!data.subscribers.length) return mount(invitePreview, h("p", { class: "empty" }, "Nobody is waiting."));
      mount(
        invitePreview,
        h("ol", { class: "invitees" }, data.subscribers.map((x) => h("li", {}, `#${x.position} ${x.email}`))),
        h(
          "button",
          {
            type: "button",
            class: "primary",
            onclick: async () => {
              try {
                const r = await api("POST", `${wl(key)}/subscribers/invite`, { count: data.subscribers.length });
                mount(invitePreview);
                announce(`Invited ${r.data.invited.length}: their invitation emails are on their way.`);
                await onChange?.();
                await load();
              } catch (err) {
                announce(err.message, "error");
              }
            },
          },
          `Invite these ${data.subscribers.length}`,
        ),
      );
    } catch (err) {
      mount(invitePreview, h("p", { class: "notice error", role: "alert" }, err.message));
    }
  }

  async function exportCsv(e) {
    const button = e.currentTarget;
    button.disabled = true;
    try {
      const res = await api("GET", `${wl(key)}/subscribers/export`, undefined, { raw: true });
      const url = URL.createObjectURL(await res.blob());
      const link = h("a", { href: url, download: `subscribers-${key}.csv`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      announce("Export downloaded.");
    } catch (err) {
      announce(err.message, "error");
    } finally {
      button.disabled = false;
    }
  }

  let typing;
  const search = h("input", {
    type: "search",
    placeholder: "Email or name",
    oninput: (e) => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        state.q = e.target.value.trim();
        go(1);
      }, 300);
    },
  });
  const sort = h(
    "select",
    { onchange: (e) => ((state.sort_by = e.target.value), (state.sort_dir = e.target.value === "position" || e.target.value === "email" ? "asc" : "desc"), (dir.value = state.sort_dir), go(1)) },
    SORTS.map(([value, label]) => h("option", { value }, label)),
  );
  const dir = h("select", { onchange: (e) => ((state.sort_dir = e.target.value), go(1)) }, h("option", { value: "desc" }, "Descending"), h("option", { value: "asc" }, "Ascending"));
  const tagFilter = h("select", { onchange: (e) => ((state.tag = e.target.value), go(1)) });
  const statusFilter = h(
    "select",
    { onchange: (e) => ((state.status = e.target.value), go(1)) },
    [["", "All"], ["waiting", "Waiting"], ["invited", "Invited"], ["joined", "Joined"], ["rejected", "Rejected"], ["pending", "Pending confirmation"]].map(([value, label]) => h("option", { value }, label)),
  );
  const renderTagOptions = () => mount(tagFilter, h("option", { value: "" }, "All"), tags.map((t) => h("option", { value: t.id, selected: t.id === state.tag }, t.name)));
  renderTagOptions();
  /** New tag names become tags when first used: the filter and the edit dialog list them from then on. */
  async function reloadTags() {
    tags = (await api("GET", `${wl(key)}/tags`)).data.tags;
    renderTagOptions();
  }

  void load();
  return h(
    "section",
    { class: "card", "aria-labelledby": "subs-title" },
    h("div", { class: "section-head" }, h("h2", { id: "subs-title" }, "Subscribers"), h("button", { type: "button", onclick: exportCsv }, "Export CSV")),
    h(
      "details",
      { class: "invite-next change" },
      h("summary", {}, "Invite the next in line"),
      h("div", { class: "row" }, field("How many", inviteCount), h("div", { class: "actions" }, h("button", { type: "button", onclick: previewInvite }, "Preview who"))),
      invitePreview,
    ),
    h("div", { class: "filters" }, field("Search", search), field("Sort by", sort), field("Order", dir), field("Tag", tagFilter), field("Status", statusFilter)),
    error,
    body,
    pager,
  );
}
