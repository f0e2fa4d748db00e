// Settings of one waitlist: every field of GET/PATCH .../settings, the webhook secret on demand with a
// test delivery and rotation (the first endpoint; the others are on view-webhooks.js), and a new per-waitlist API key
// (shown once).
import { api, wl } from "./api.js";
import { announce, checkbox, confirmDialog, field, h, mount, showSecret } from "./dom.js";
import { waitlistHeader } from "./nav.js";

export async function settingsView(key) {
  const s = (await api("GET", `${wl(key)}/settings`)).data.settings;
  const input = (name, value, attrs = {}) => h("input", { name, value: value ?? "", ...attrs });
  const area = (name, value, attrs = {}) => h("textarea", { name, rows: 5, ...attrs }, value ?? "");
  const f = {
    name: input("name", s.name, { required: true, maxlength: 100 }),
    category: input("category", s.category),
    description: area("description", s.description, { rows: 2 }),
    doubleOptIn: checkbox("Double opt-in: new subscribers confirm their email before they get a position", s.double_opt_in),
    validateEmails: checkbox("Refuse disposable email addresses", s.validate_emails),
    positionOffset: input("position_offset", s.position_offset, { type: "number", min: 0, inputmode: "numeric" }),
    allowedDomains: area("allowed_domains", s.allowed_domains.join("\n"), { rows: 3, placeholder: "example.com\n*.example.com" }),
    referral: checkbox("Referral program", s.referral_rewards.enabled),
    signupPoints: input("signup_points", s.referral_rewards.signup_points, { type: "number", min: 0, inputmode: "numeric" }),
    referralPoints: input("referral_points", s.referral_rewards.referral_points, { type: "number", min: 0, inputmode: "numeric" }),
    welcome: checkbox("Send a welcome email", s.welcome_email.enabled),
    welcomeSubject: input("welcome_subject", s.welcome_email.subject, { required: true }),
    welcomeBody: area("welcome_body", s.welcome_email.body, { required: true }),
    confirmationSubject: input("confirmation_subject", s.confirmation_email.subject, { required: true }),
    confirmationBody: area("confirmation_body", s.confirmation_email.body, { required: true }),
    webhookUrl: input("webhook_url", s.webhook.url, { type: "url", placeholder: "https://example.com/hooks/waitlist" }),
    webhookEnabled: checkbox("Send webhooks", s.webhook.enabled),
    customDomain: input("custom_domain", s.custom_domain, { placeholder: "waitlist.example.com" }),
    captcha: h(
      "select",
      { name: "captcha" },
      [
        ["off", "Off"],
        ["altcha", "ALTCHA proof of work (self-hosted, no third party)"],
      ].map(([value, label]) => h("option", { value, selected: s.captcha === value }, label)),
    ),
    signupUrl: input("signup_url", s.signup_url, { type: "url", placeholder: "https://www.example.com/join" }),
    ogImageUrl: input("og_image_url", s.og_image_url, { type: "url", placeholder: "https://example.com/share.png" }),
    leaderboard: checkbox("Show the top 10 referrers (first names or masked emails) on every status page", s.leaderboard),
    invitationSubject: input("invitation_subject", s.invitation_email.subject, { required: true }),
    invitationBody: area("invitation_body", s.invitation_email.body, { required: true }),
    inviteExpiryDays: input("invite_expiry_days", s.invite_expiry_days, { type: "number", min: 1, max: 365, inputmode: "numeric" }),
    inviteRedirectUrl: input("invite_redirect_url", s.invite_redirect_url, { type: "url", placeholder: "https://app.example.com/welcome" }),
    milestoneSubject: input("milestone_subject", s.milestone_email.subject, { required: true }),
    milestoneBody: area("milestone_body", s.milestone_email.body, { required: true }),
    senderName: input("sender_name", s.email_template.sender_name, { maxlength: 100, placeholder: s.name }),
    logoUrl: input("logo_url", s.email_template.logo_url, { type: "url", placeholder: "https://example.com/logo.png" }),
    color: input("color", s.email_template.color, { type: "color" }),
    footer: area("footer", s.email_template.footer, { rows: 3, maxlength: 500, placeholder: "Rocket Inc., 1 Launch Pad, City, Country" }),
  };
  const milestones = milestoneEditor(s.milestones);
  const questions = questionEditor(s.form_fields);
  const checked = (box) => box.querySelector("input").checked;
  const orNull = (v) => (v.trim() ? v.trim() : null);
  const error = h("p", { class: "notice error", role: "alert", hidden: true });

  async function save(e) {
    e.preventDefault();
    error.hidden = true;
    const body = {
      name: f.name.value.trim(),
      category: orNull(f.category.value),
      description: orNull(f.description.value),
      double_opt_in: checked(f.doubleOptIn),
      validate_emails: checked(f.validateEmails),
      position_offset: Number(f.positionOffset.value || 0),
      allowed_domains: f.allowedDomains.value.split(/[\s,]+/).filter(Boolean),
      referral_rewards: { enabled: checked(f.referral), signup_points: Number(f.signupPoints.value || 0), referral_points: Number(f.referralPoints.value || 0) },
      welcome_email: { enabled: checked(f.welcome), subject: f.welcomeSubject.value, body: f.welcomeBody.value },
      confirmation_email: { subject: f.confirmationSubject.value, body: f.confirmationBody.value },
      webhook: { url: orNull(f.webhookUrl.value), enabled: checked(f.webhookEnabled) },
      custom_domain: orNull(f.customDomain.value),
      captcha: f.captcha.value,
      signup_url: orNull(f.signupUrl.value),
      og_image_url: orNull(f.ogImageUrl.value),
      leaderboard: checked(f.leaderboard),
      milestones: milestones.value(),
      milestone_email: { subject: f.milestoneSubject.value, body: f.milestoneBody.value },
      invitation_email: { subject: f.invitationSubject.value, body: f.invitationBody.value },
      invite_expiry_days: Number(f.inviteExpiryDays.value || 14),
      invite_redirect_url: orNull(f.inviteRedirectUrl.value),
      form_fields: questions.value(),
      email_template: { sender_name: orNull(f.senderName.value), logo_url: orNull(f.logoUrl.value), color: f.color.value, footer: orNull(f.footer.value) },
    };
    try {
      await api("PATCH", `${wl(key)}/settings`, body);
      announce("Settings saved.");
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
      error.scrollIntoView({ block: "center" });
    }
  }

  return h(
    "div",
    {},
    waitlistHeader(key, s.name, "/settings"),
    h(
      "form",
      { class: "settings", onsubmit: save },
      h(
        "section",
        { class: "card" },
        h("h2", {}, "General"),
        h("dl", { class: "facts" }, h("dt", {}, "Waitlist key"), h("dd", {}, h("code", {}, s.key)), h("dt", {}, "Slug"), h("dd", {}, h("code", {}, s.slug))),
        field("Name", f.name),
        field("Category", f.category),
        field("Internal description", f.description, "Not shown publicly."),
        f.doubleOptIn,
        f.validateEmails,
        field("Position offset", f.positionOffset, "Added to every public position (inflated_position)."),
      ),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Referral program"),
        f.referral,
        h("div", { class: "row" }, field("Points for signing up", f.signupPoints), field("Points per referral", f.referralPoints)),
        f.leaderboard,
        milestones.element,
        field("Milestone email subject", f.milestoneSubject),
        field("Milestone email body", f.milestoneBody, "Sent when a referrer reaches a milestone; {{reward}} is its reward, {{referral_count}} their referrals."),
      ),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Forms and domains"),
        field("Allowed domains for your own forms", f.allowedDomains, "One per line; *.example.com allows subdomains. Forms posting from elsewhere are refused."),
        field("Custom domain", f.customDomain, "Point its DNS at this server; your published page is served at its root."),
        field("Captcha on the public form", f.captcha, "With ALTCHA, hosted pages solve a small proof-of-work before sending; your own forms must add the altcha field (see the API docs)."),
        field("Your own sign-up page", f.signupUrl, "Where referral links lead (with ?ref=CODE); empty: the custom domain, else the hosted page."),
        field("Share image", f.ogImageUrl, "Shown when your page or a status page is shared (Open Graph, Twitter card); 1200x630 works best."),
      ),
      h("section", { class: "card" }, h("h2", {}, "Your questions"), questions.element),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Emails"),
        f.welcome,
        field("Welcome subject", f.welcomeSubject),
        field("Welcome body", f.welcomeBody, "Markdown. Merge tags: {{first_name}}, {{name}}, {{position}}, {{inflated_position}}, {{referral_link}}, {{status_link}}, {{waitlist_name}}."),
        field("Confirmation subject", f.confirmationSubject),
        field("Confirmation body", f.confirmationBody, "Sent with double opt-in; {{confirm_link}} is the link to confirm."),
        h("h3", {}, "The look of every email"),
        h("div", { class: "row" }, field("Name at the top", f.senderName, "Empty: the waitlist's name."), field("Link colour", f.color)),
        field("Logo URL", f.logoUrl, "An image shown at the top, 40 px high, instead of the name."),
        field("Footer", f.footer, "Your postal address: anti-spam laws ask it of bulk email."),
      ),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Invitations"),
        field("Invitation subject", f.invitationSubject),
        field("Invitation body", f.invitationBody, "{{invite_link}} is the subscriber's single-use link."),
        h("div", { class: "row" }, field("Links work for (days)", f.inviteExpiryDays), field("After accepting, go to", f.inviteRedirectUrl, "Your app; it receives ?token= to verify. Empty: a welcome page.")),
      ),
      h(
        "section",
        { class: "card" },
        h("h2", {}, "Webhooks"),
        h("p", { class: "hint" }, "This is the first endpoint. More endpoints, event filters, Slack and Discord formats and each one's delivery log: ", h("a", { href: `#/w/${encodeURIComponent(key)}/webhooks` }, "Webhook endpoints"), "."),
        field("Webhook URL", f.webhookUrl),
        f.webhookEnabled,
        webhookTools(key, s.webhook.signing_secret),
      ),
      error,
      h("div", { class: "actions sticky" }, h("button", { type: "submit", class: "primary" }, "Save settings")),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Waitlist API key"),
      h("p", {}, "A key that works for this waitlist only (Growth and higher plans), e.g. for your own site's backend. Generating a new one revokes the previous one."),
      h(
        "button",
        {
          type: "button", class: "change",
          onclick: async () => {
            if (!(await confirmDialog("Generate a new waitlist key?", "The current waitlist key stops working at once.", "Generate"))) return;
            try {
              const { data } = await api("POST", `${wl(key)}/api-key`);
              await showSecret("New waitlist API key", "Copy it now: it is shown only once.", data.api_key.api_key);
            } catch (err) {
              announce(err.message, "error");
            }
          },
        },
        "Generate a new key",
      ),
    ),
  );
}

/** The signing secret (hidden until asked), a test delivery and secret rotation. */
function webhookTools(key, initialSecret) {
  let secret = initialSecret;
  const shown = h("code", { class: "secret-value", hidden: true });
  const toggle = h("button", { type: "button", "aria-expanded": "false", onclick: () => reveal(shown.hidden) }, "Show signing secret");
  const reveal = (show) => {
    shown.textContent = show ? secret : "";
    shown.hidden = !show;
    toggle.textContent = show ? "Hide signing secret" : "Show signing secret";
    toggle.setAttribute("aria-expanded", String(show));
  };
  const result = h("p", { class: "notice", role: "status", hidden: true });
  const test = h(
    "button",
    {
      type: "button", class: "change",
      onclick: async () => {
        test.disabled = true;
        result.hidden = true;
        try {
          const { data } = await api("POST", `${wl(key)}/settings/webhook/test`);
          result.textContent = data.delivered
            ? `Test event ${data.event_id} delivered (HTTP ${data.status}, ${data.duration_ms} ms).`
            : `Test event not delivered: ${data.error ?? `HTTP ${data.status}`}.`;
          result.className = `notice ${data.delivered ? "success" : "error"}`;
        } catch (err) {
          result.textContent = err.message;
          result.className = "notice error";
        } finally {
          result.hidden = false;
          test.disabled = false;
        }
      },
    },
    "Send test event",
  );
  const rotate = h(
    "button",
    {
      type: "button", class: "change",
      onclick: async () => {
        if (!(await confirmDialog("Rotate the signing secret?", "Events are signed with the new secret from now on; update your receiver.", "Rotate"))) return;
        try {
          secret = (await api("POST", `${wl(key)}/settings/webhook/rotate-secret`)).data.signing_secret;
          reveal(true);
          announce("Signing secret rotated.");
        } catch (err) {
          announce(err.message, "error");
        }
      },
    },
    "Rotate secret",
  );
  return h("div", { class: "webhook-tools" }, h("div", { class: "actions" }, toggle, test, rotate), shown, result, h("p", { class: "hint" }, "Save the URL first; the test event goes to the saved URL."));
}

const QUESTION_TYPES = [
  ["text", "Short text"],
  ["textarea", "Long text"],
  ["select", "One of a list"],
  ["multiselect", "Several of a list"],
  ["checkbox", "Checkbox"],
  ["number", "Number"],
  ["url", "Web address"],
];
const hasOptions = (type) => type === "select" || type === "multiselect";

/** Up to 20 questions of the sign-up form (issue 46), with a preview of the form's controls as the hosted page shows them. */
function questionEditor(initial) {
  const list = h("div", { class: "questions" });
  const preview = h("div", { class: "question-preview", "aria-label": "Preview of the questions on the form" });
  const addButton = h("button", { type: "button", class: "change", onclick: () => add({ key: "", label: "", type: "text", required: false, options: [] }) }, "Add a question");
  const rows = [];
  const slug = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^[^a-z]+|_+$/g, "").slice(0, 40);
  function add(q) {
    const label = h("input", { value: q.label, maxlength: 200, "aria-label": "Question", placeholder: "What is your role?" });
    const key = h("input", { value: q.key, maxlength: 40, "aria-label": "Answer key", placeholder: "role", pattern: "[a-z][a-z0-9_]*" });
    const type = h("select", { "aria-label": "Answer type" }, QUESTION_TYPES.map(([value, text]) => h("option", { value, selected: q.type === value }, text)));
    const options = h("input", { value: q.options.join(", "), "aria-label": "Options, separated by commas", placeholder: "founder, engineer, other" });
    const requiredId = `q-${Math.random().toString(36).slice(2, 9)}`;
    const required = h("input", { type: "checkbox", id: requiredId, checked: q.required });
    const row = h("div", { class: "question" }, label, key, type, options, h("span", { class: "check" }, required, h("label", { for: requiredId }, "Required")));
    const entry = { row, label, key, type, options, required };
    // a new question's key follows its text until it is edited by hand
    let keyEdited = Boolean(q.key);
    key.addEventListener("input", () => (keyEdited = true));
    label.addEventListener("input", () => {
      if (!keyEdited) key.value = slug(label.value);
    });
    row.addEventListener("input", sync);
    row.addEventListener("change", sync);
    row.append(h("button", { type: "button", class: "danger", "aria-label": "Remove this question", onclick: () => (rows.splice(rows.indexOf(entry), 1), row.remove(), sync()) }, "Remove"));
    rows.push(entry);
    list.append(row);
    sync();
  }
  const current = () =>
    rows
      .filter((r) => r.label.value.trim() && r.key.value.trim())
      .map((r) => ({
        key: r.key.value.trim(),
        label: r.label.value.trim(),
        type: r.type.value,
        required: r.required.checked,
        ...(hasOptions(r.type.value) ? { options: r.options.value.split(",").map((o) => o.trim()).filter(Boolean) } : {}),
      }));
  function sync() {
    addButton.disabled = rows.length >= 20;
    // disabled rather than hidden: the row keeps its columns
    for (const r of rows) r.options.disabled = !hasOptions(r.type.value);
    mount(preview, current().map(control));
  }
  for (const q of initial) add(q);
  return {
    element: h(
      "div",
      {},
      h("p", { class: "hint" }, "Asked on your hosted page and the form action; answers are on each subscriber, filter the list and are columns of the CSV export."),
      list,
      addButton,
      h("h3", {}, "Preview"),
      preview,
    ),
    value: current,
  };
}

/** A question as the hosted page shows it (disabled: a preview). */
function control(q) {
  const label = q.label + (q.required ? " *" : "");
  switch (q.type) {
    case "textarea":
      return h("label", { class: "field" }, label, h("textarea", { rows: 2, disabled: true }));
    case "select":
      return h("label", { class: "field" }, label, h("select", { disabled: true }, h("option", {}, "Choose…"), (q.options ?? []).map((o) => h("option", {}, o))));
    case "multiselect":
      return h("fieldset", {}, h("legend", {}, label), (q.options ?? []).map((o) => h("label", { class: "check" }, h("input", { type: "checkbox", disabled: true }), o)));
    case "checkbox":
      return h("label", { class: "check" }, h("input", { type: "checkbox", disabled: true }), label);
    default:
      return h("label", { class: "field" }, label, h("input", { type: q.type === "number" ? "number" : q.type === "url" ? "url" : "text", disabled: true }));
  }
}

/** Up to 10 milestones: referrals needed, the reward, and an optional tag. */
function milestoneEditor(initial) {
  const list = h("div", { class: "milestones" });
  const addButton = h("button", { type: "button", class: "change", onclick: () => add({ referrals: "", reward: "", tag: "" }) }, "Add a milestone");
  const rows = [];
  function add(m) {
    const referrals = h("input", { type: "number", min: 1, value: m.referrals, inputmode: "numeric", "aria-label": "Referrals needed" });
    const reward = h("input", { value: m.reward, maxlength: 200, "aria-label": "Reward", placeholder: "Early access" });
    const tag = h("input", { value: m.tag ?? "", maxlength: 40, "aria-label": "Tag (optional)", placeholder: "tag (optional)" });
    const row = h("div", { class: "milestone" }, referrals, reward, tag);
    const entry = { row, referrals, reward, tag };
    row.append(h("button", { type: "button", class: "danger", "aria-label": "Remove this milestone", onclick: () => (rows.splice(rows.indexOf(entry), 1), row.remove(), sync()) }, "Remove"));
    rows.push(entry);
    list.append(row);
    sync();
  }
  const sync = () => (addButton.disabled = rows.length >= 10);
  for (const m of initial) add(m);
  return {
    element: h("fieldset", {}, h("legend", {}, "Milestone rewards"), h("p", { class: "hint" }, "Referrers who reach a number of referrals get the reward once, by email, with the tag."), list, addButton),
    value: () =>
      rows
        .filter((r) => r.reward.value.trim())
        .map((r) => ({ referrals: Number(r.referrals.value), reward: r.reward.value.trim(), ...(r.tag.value.trim() ? { tag: r.tag.value.trim() } : {}) })),
  };
}
