// The landing page of one waitlist: its fields with a live preview (POST .../landing-page/preview),
// save, publish and unpublish, and the AI builder with the credits and the wait shown.
import { account } from "./account.js";
import { api, wl } from "./api.js";
import { announce, checkbox, field, h, mount } from "./dom.js";
import { waitlistHeader } from "./nav.js";

const GENERATE_TYPICAL_S = 50;

export async function pageView(key) {
  const settings = (await api("GET", `${wl(key)}/settings`)).data.settings;
  // asked for only when there is one: a 404 is an error in the browser's console
  const page = settings.landing_page_status === null ? null : (await api("GET", `${wl(key)}/landing-page`)).data.landing_page;
  const me = account.me ?? (await account.refresh());
  return h("div", {}, waitlistHeader(key, settings.name, "/page"), editor(key, page, me));
}

function editor(key, page, me) {
  const isAi = page?.page_type === "ai";
  const seo = page?.seo ?? {};
  const f = {
    headline: h("input", { name: "headline", value: page?.headline ?? "", minlength: 3, maxlength: 120, required: true, disabled: isAi }),
    description: h("textarea", { name: "description", rows: 4, maxlength: 1000, disabled: isAi }, page?.description ?? ""),
    buttonText: h("input", { name: "button_text", value: page?.button_text ?? "Join the waitlist", maxlength: 40, disabled: isAi }),
    collectName: checkbox("Ask for a name", page?.collect_name ?? false),
    collectPhone: checkbox("Ask for a phone number", page?.collect_phone ?? false),
    backgroundType: h(
      "select",
      { name: "background_type", disabled: isAi },
      // a saved background can be changed but not removed through the API
      (page?.background ? ["color", "gradient"] : ["none", "color", "gradient"]).map((v) => h("option", { value: v, selected: (page?.background?.type ?? "none") === v }, v === "none" ? "Theme default" : v[0].toUpperCase() + v.slice(1))),
    ),
    backgroundValue: h("input", { name: "background_value", value: page?.background?.value ?? "", placeholder: "#4f46e5 or linear-gradient(135deg, #4f46e5, #ec4899)", disabled: isAi }),
    theme: h("select", { name: "theme" }, ["light", "dark"].map((v) => h("option", { value: v, selected: (page?.theme ?? "light") === v }, v === "light" ? "Light" : "Dark"))),
    seoTitle: h("input", { name: "seo_title", value: seo.title ?? "", maxlength: 70 }),
    seoDescription: h("textarea", { name: "seo_description", rows: 2, maxlength: 200 }, seo.description ?? ""),
    seoKeywords: h("input", { name: "seo_keywords", value: (seo.keywords ?? []).join(", "), placeholder: "launch, beta" }),
    ogTitle: h("input", { name: "og_title", value: seo.og_title ?? "", maxlength: 70 }),
    ogDescription: h("textarea", { name: "og_description", rows: 2, maxlength: 200 }, seo.og_description ?? ""),
  };
  for (const box of [f.collectName, f.collectPhone]) box.querySelector("input").disabled = isAi;

  /** The form as PATCH fields (AI pages: theme and seo only, spec). */
  function fields() {
    const seoFields = {
      title: f.seoTitle.value.trim(),
      description: f.seoDescription.value.trim(),
      keywords: f.seoKeywords.value.split(",").map((k) => k.trim()).filter(Boolean),
      og_title: f.ogTitle.value.trim(),
      og_description: f.ogDescription.value.trim(),
    };
    if (isAi) return { theme: f.theme.value, seo: seoFields };
    return {
      headline: f.headline.value.trim(),
      description: f.description.value.trim(),
      button_text: f.buttonText.value.trim() || "Join the waitlist",
      collect_name: f.collectName.querySelector("input").checked,
      collect_phone: f.collectPhone.querySelector("input").checked,
      ...(f.backgroundType.value !== "none" && f.backgroundValue.value.trim() ? { background: { type: f.backgroundType.value, value: f.backgroundValue.value.trim() } } : {}),
      theme: f.theme.value,
      seo: seoFields,
    };
  }

  // the live preview: one request per pause in typing; the newest answer wins
  const frame = h("iframe", { class: "preview-frame", title: "Preview of the landing page", sandbox: "allow-same-origin" });
  const previewNote = h("p", { class: "hint", role: "status" }, "Preview updates as you type.");
  let pause;
  let asked = 0;
  async function refreshPreview() {
    const mine = ++asked;
    const body = fields();
    // a headline still being typed previews as the saved one (or a placeholder)
    if (body.headline !== undefined && body.headline.length < 3) delete body.headline;
    try {
      const { data } = await api("POST", `${wl(key)}/landing-page/preview`, body);
      if (mine !== asked) return;
      // same origin as the dashboard, whatever BASE_URL says (frame-src 'self')
      frame.src = new URL(data.preview_url).pathname;
      previewNote.textContent = "Preview updates as you type.";
      previewNote.className = "hint";
    } catch (err) {
      if (mine !== asked) return;
      previewNote.textContent = `Preview not updated: ${err.message}`;
      previewNote.className = "notice error";
    }
  }
  const onEdit = () => {
    clearTimeout(pause);
    pause = setTimeout(refreshPreview, 400);
  };

  const status = h("p", { class: "page-status" });
  const renderStatus = (p) =>
    mount(
      status,
      p
        ? [h("span", { class: `badge status-${p.status}` }, p.status), " ", p.hosted_page_url ? h("a", { href: p.hosted_page_url, target: "_blank", rel: "noopener" }, p.hosted_page_url) : "Not live yet: publish to put it online."]
        : "No page yet: fill in the fields and save to create a draft.",
    );
  renderStatus(page);
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const fail = (err) => {
    error.textContent = err.message;
    error.hidden = false;
  };

  async function save(e) {
    e.preventDefault();
    error.hidden = true;
    try {
      if (page) page = (await api("PATCH", `${wl(key)}/landing-page`, fields())).data.landing_page;
      else {
        await api("POST", `${wl(key)}/landing-page`, fields());
        page = (await api("GET", `${wl(key)}/landing-page`)).data.landing_page;
      }
      renderStatus(page);
      renderPublish();
      saveButton.textContent = "Save";
      announce(page.status === "published" ? "Saved: the live page has changed." : "Draft saved.");
    } catch (err) {
      fail(err);
    }
  }

  const saveButton = h("button", { type: "submit", class: "primary" }, page ? "Save" : "Create draft");
  const publishArea = h("span", { class: "publish" });
  function renderPublish() {
    if (!page) return mount(publishArea);
    const live = page.status === "published";
    mount(
      publishArea,
      h(
        "button",
        {
          type: "button",
          class: live ? "change" : "primary",
          onclick: async () => {
            error.hidden = true;
            try {
              await api("POST", `${wl(key)}/landing-page/publish`, live ? { unpublish: true } : {});
              page = (await api("GET", `${wl(key)}/landing-page`)).data.landing_page;
              renderStatus(page);
              renderPublish();
              announce(live ? "The page is offline." : "The page is live.");
            } catch (err) {
              fail(err);
            }
          },
        },
        live ? "Unpublish" : "Publish",
      ),
    );
  }
  renderPublish();

  const form = h(
    "form",
    { class: "card page-form", oninput: onEdit, onchange: onEdit, onsubmit: save },
    h("h2", {}, "Page"),
    status,
    isAi ? h("p", { class: "notice" }, "This page was made by the AI builder: change its text and layout with the AI below; theme and SEO can be edited here.") : null,
    field("Headline", f.headline, "3 to 120 characters."),
    field("Description", f.description),
    field("Button text", f.buttonText),
    f.collectName,
    f.collectPhone,
    h("div", { class: "row" }, field("Background", f.backgroundType), field("Color or gradient", f.backgroundValue)),
    field("Theme", f.theme),
    h(
      "details",
      {},
      h("summary", {}, "Search and social"),
      field("Title", f.seoTitle),
      field("Description", f.seoDescription),
      field("Keywords", f.seoKeywords, "Comma-separated, up to 10."),
      field("Social title", f.ogTitle),
      field("Social description", f.ogDescription),
    ),
    error,
    h("div", { class: "actions" }, saveButton, publishArea),
  );

  void refreshPreview();
  return h(
    "div",
    { class: "page-editor" },
    form,
    h("section", { class: "card preview", "aria-labelledby": "preview-title" }, h("h2", { id: "preview-title" }, "Preview"), previewNote, frame),
    aiBuilder(key, page, me),
  );
}

/** Generate (or edit) the page with the configured AI model; 20 to 50 s, shown as progress. */
function aiBuilder(key, page, me) {
  const credits = me.ai_credits.remaining;
  const prompt = h("textarea", { name: "prompt", rows: 4, maxlength: 2000, required: true, placeholder: "A calm page for a note-taking app for researchers, dark blue, with a short list of three benefits" });
  const isEdit = page?.page_type === "ai";
  const progress = h("div", { class: "progress", hidden: true, role: "status" });
  const error = h("p", { class: "notice error", role: "alert", hidden: true });
  const button = h("button", { type: "submit", class: "primary", disabled: !credits }, isEdit ? "Change the page with AI" : "Generate a page");
  return h(
    "form",
    {
      class: "card ai",
      "aria-labelledby": "ai-title",
      onsubmit: async (e) => {
        e.preventDefault();
        error.hidden = true;
        button.disabled = true;
        const started = Date.now();
        const bar = h("progress", { max: GENERATE_TYPICAL_S, value: 0 });
        const label = h("span", {}, "Generating… this usually takes 20 to 50 seconds.");
        mount(progress, bar, label);
        progress.hidden = false;
        const tick = setInterval(() => {
          const s = Math.round((Date.now() - started) / 1000);
          bar.value = Math.min(s, GENERATE_TYPICAL_S - 1);
          label.textContent = `Generating… ${s} s (usually 20 to 50 seconds).`;
        }, 1000);
        try {
          await api("POST", `${wl(key)}/landing-page/generate`, { prompt: prompt.value.trim(), ...(isEdit ? { is_edit: true } : {}) });
          await account.refresh();
          announce("The AI page is ready as a draft: check the preview, then publish.");
          window.dispatchEvent(new HashChangeEvent("hashchange"));
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
          await account.refresh().catch(() => {});
        } finally {
          clearInterval(tick);
          progress.hidden = true;
          button.disabled = false;
        }
      },
    },
    h("h2", { id: "ai-title" }, "AI builder"),
    h("p", {}, `Describe the page you want; each generation costs 1 credit. Credits left: `, h("strong", { "data-credits": credits ?? "" }, credits ?? "–"), "."),
    credits ? null : h("p", { class: "notice" }, "No AI credits left on this account."),
    field(isEdit ? "What should change?" : "Describe your page", prompt, "Up to 2000 characters."),
    error,
    progress,
    h("div", { class: "actions" }, button),
  );
}
