// The sign-up widget for any site (issue 46): <script src="{BASE_URL}/embed.js" data-waitlist="KEY" async></script>.
// It renders the waitlist's form in a shadow root (the host page's CSS cannot reach it), copies ?ref= and the utm_*
// parameters of the host page's address and the referring host into the post, solves the captcha when it is on
// (ALTCHA's proof of work, with the browser's own PBKDF2), posts to {BASE_URL}/s/{KEY} and shows the place in line
// and the referral link. Everything comes from the server this file came from; nothing is loaded from elsewhere.
(() => {
  "use strict";
  const FIELDS = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"];
  const CSS = `:host{all:initial;display:block;--a:#4f46e5;--at:#fff;--t:#111827;--m:#4b5563;--b:#d1d5db;--bg:#fff;--i:#fff;color-scheme:light}
:host([data-theme=dark]){--t:#f3f4f6;--m:#9ca3af;--b:#374151;--bg:#111827;--i:#0b0f19;color-scheme:dark}
*{box-sizing:border-box}
.w{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--t);background:var(--bg);border:1px solid var(--b);border-radius:16px;padding:20px;max-width:480px}
h2{font-size:1.25rem;line-height:1.25;margin:0 0 12px}
form{display:grid;gap:10px;margin:0}
label{display:grid;gap:4px;font-size:.85rem;font-weight:600;color:var(--m)}
input,select,textarea{width:100%;padding:10px 12px;border:1px solid var(--b);border-radius:10px;background:var(--i);color:var(--t);font:inherit}
textarea{resize:vertical}
fieldset{border:1px solid var(--b);border-radius:10px;padding:6px 12px;margin:0;display:grid;gap:4px}
legend{font-size:.85rem;font-weight:600;color:var(--m);padding:0 4px}
label.c{display:flex;gap:8px;align-items:center;font-weight:500;color:var(--t)}
label.c input{width:auto}
button{padding:11px 16px;border:0;border-radius:10px;background:var(--a);color:var(--at);font:inherit;font-weight:700;cursor:pointer}
button[disabled]{opacity:.6;cursor:progress}
:focus-visible{outline:3px solid var(--a);outline-offset:2px}
.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
.msg{margin:0;font-size:.9rem;min-height:1.4em}
.err{color:#b91c1c}
:host([data-theme=dark]) .err{color:#fca5a5}
.pos{font-size:2.2rem;font-weight:800;margin:4px 0;color:var(--a)}
.row{display:flex;gap:8px}
a{color:var(--a)}`;

  /** An element with attributes and children (text through textContent: nothing the server sends is parsed as markup). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== false && v != null) e.setAttribute(k, v === true ? "" : String(v));
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));

  /** ALTCHA v2 (PBKDF2/SHA-256): counters from 0 until the derived key starts with the prefix; eight at a time. */
  async function solve(base, key) {
    const res = await fetch(`${base}/s/${encodeURIComponent(key)}/challenge`, { cache: "no-store" });
    if (!res.ok) throw new Error("The captcha could not be loaded");
    const challenge = await res.json();
    const p = challenge.parameters;
    const nonce = unhex(p.nonce);
    const salt = unhex(p.salt);
    const prefix = p.keyPrefix.toLowerCase();
    const derive = async (n) => {
      const pw = new Uint8Array(nonce.length + 4);
      pw.set(nonce);
      new DataView(pw.buffer).setUint32(nonce.length, n, false);
      const k = await crypto.subtle.importKey("raw", pw, "PBKDF2", false, ["deriveBits"]);
      return hex(new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: p.cost }, k, (p.keyLength || 32) * 8)));
    };
    const start = Date.now();
    for (let n = 0; n < 10000000; n += 8) {
      const keys = await Promise.all(Array.from({ length: 8 }, (_, i) => derive(n + i)));
      const i = keys.findIndex((k) => k.startsWith(prefix));
      if (i >= 0) return btoa(JSON.stringify({ challenge, solution: { counter: n + i, derivedKey: keys[i], time: Date.now() - start } }));
    }
    throw new Error("The captcha could not be solved");
  }

  /** One question as form controls, named by its key (as the hosted page renders it). */
  function question(q) {
    const req = q.required || null;
    const max = q.max_length || (q.type === "text" ? 200 : 2000);
    if (q.type === "multiselect") {
      return el("fieldset", {}, el("legend", {}, q.label + (q.required ? " (at least one)" : "")), ...q.options.map((o) => el("label", { class: "c" }, el("input", { type: "checkbox", name: q.key, value: o }), o)));
    }
    if (q.type === "checkbox") return el("label", { class: "c" }, el("input", { type: "checkbox", name: q.key, value: "on", required: req }), q.label);
    let control;
    if (q.type === "select") control = el("select", { name: q.key, required: req }, el("option", { value: "" }, "Choose…"), ...q.options.map((o) => el("option", {}, o)));
    else if (q.type === "textarea") control = el("textarea", { name: q.key, rows: 3, maxlength: max, required: req });
    else if (q.type === "number") control = el("input", { name: q.key, type: "number", step: "any", inputmode: "decimal", required: req });
    else control = el("input", { name: q.key, type: q.type === "url" ? "url" : "text", maxlength: max, required: req });
    return el("label", {}, q.label, control);
  }

  /** What the host page's address and arrival say: ref, utm_*, the host of the page before it. */
  function arrival() {
    const query = new URLSearchParams(location.search);
    const found = {};
    const ref = query.get("ref");
    if (ref && /^[A-Za-z0-9_-]{1,64}$/.test(ref)) found.ref = ref;
    for (const f of FIELDS) {
      const v = (query.get(f) || "").trim();
      if (v && v.length <= 200) found[f] = v;
    }
    try {
      const from = document.referrer && new URL(document.referrer).hostname;
      if (from && from !== location.hostname) found.referrer_host = from;
    } catch (_) {}
    return found;
  }

  async function mount(script) {
    script.setAttribute("data-mounted", "");
    const key = script.getAttribute("data-waitlist");
    const base = new URL(script.src).origin;
    // an element of its own name: a host page's rules for div, form, input... do not match it
    const host = el("waitlist-form", { "data-waitlist": key });
    script.after(host);
    const root = host.attachShadow({ mode: "open" });
    if ("adoptedStyleSheets" in root && "replaceSync" in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } else root.append(el("style", {}, CSS));
    const box = el("div", { class: "w", part: "widget" });
    root.append(box);
    const fail = (text) => box.replaceChildren(el("p", { class: "msg err", role: "alert" }, text));

    let cfg;
    try {
      const res = await fetch(`${base}/s/${encodeURIComponent(key)}/widget`, { cache: "no-store" });
      if (!res.ok) return fail("This waitlist does not exist.");
      cfg = await res.json();
    } catch (_) {
      return fail("The waitlist could not be reached. Try again later.");
    }
    if (!cfg.allowed) return fail(`This site may not show the ${cfg.name} waitlist: add ${location.hostname} to its allowed domains.`);
    const theme = script.getAttribute("data-theme") || cfg.theme;
    host.setAttribute("data-theme", theme === "auto" ? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light") : theme === "dark" ? "dark" : "light");
    host.style.setProperty("--a", /^#[0-9a-f]{6}$/i.test(cfg.color) ? cfg.color : "#4f46e5");

    const found = arrival();
    const id = (name) => `wl-${key}-${name}`;
    const msg = el("p", { class: "msg", role: "status", "aria-live": "polite", id: id("msg") });
    const button = el("button", { type: "submit" }, cfg.button_text);
    const form = el(
      "form",
      { "aria-describedby": id("msg") },
      el("label", {}, "Email", el("input", { name: "email", type: "email", autocomplete: "email", required: true, maxlength: 254, placeholder: "you@example.com" })),
      cfg.collect_name ? el("label", {}, "Name", el("input", { name: "name", type: "text", autocomplete: "name", maxlength: 200 })) : null,
      cfg.collect_phone ? el("label", {}, "Phone", el("input", { name: "phone", type: "tel", autocomplete: "tel", maxlength: 200 })) : null,
      ...cfg.questions.map(question),
      el("div", { class: "hp", "aria-hidden": "true" }, el("label", {}, "Website", el("input", { name: "website", type: "text", tabindex: "-1", autocomplete: "off" }))),
      button,
      msg,
    );
    box.replaceChildren(el("h2", { id: id("title") }, cfg.headline), form);
    form.setAttribute("aria-labelledby", id("title"));
    // a view, counted like a hosted page's (the host page's ref and origin say where it came from)
    fetch(`${base}/s/${encodeURIComponent(key)}/view`, { method: "POST", body: new URLSearchParams(found) }).catch(() => {});

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = new URLSearchParams(new FormData(form));
      for (const [k, v] of Object.entries(found)) body.set(k, v);
      button.disabled = true;
      msg.className = "msg";
      try {
        if (cfg.captcha === "altcha") {
          msg.textContent = "Checking that you are human…";
          body.set("altcha", await solve(base, key));
        }
        msg.textContent = "Signing you up…";
        const res = await fetch(`${base}/s/${encodeURIComponent(key)}`, { method: "POST", headers: { accept: "application/json" }, body });
        const answer = await res.json();
        if (!res.ok) throw new Error(answer.message || "The sign-up failed");
        done(answer);
      } catch (err) {
        msg.className = "msg err";
        msg.setAttribute("role", "alert");
        msg.textContent = err && err.message ? err.message : "The sign-up failed. Try again.";
        button.disabled = false;
      }
    });

    function done(answer) {
      const title = el("h2", { tabindex: "-1" }, answer.is_pending_confirmation ? "Check your inbox" : "You're on the list!");
      const parts = [title];
      if (answer.is_pending_confirmation) parts.push(el("p", { role: "status" }, answer.message));
      else {
        if (answer.inflated_position != null) parts.push(el("p", { class: "pos", role: "status", "aria-label": `Your place in line: ${answer.inflated_position}` }, `#${answer.inflated_position.toLocaleString("en")}`));
        if (answer.referral_code) {
          const link = cfg.referral_link.replace("REFERRALCODE", encodeURIComponent(answer.referral_code));
          const input = el("input", { type: "text", readonly: true, value: link, "aria-label": "Your referral link" });
          const copy = el("button", { type: "button" }, "Copy");
          copy.addEventListener("click", async () => {
            try {
              await navigator.clipboard.writeText(link);
            } catch (_) {
              input.select();
            }
            copy.textContent = "Copied!";
          });
          parts.push(el("p", {}, "Share your link: each friend who joins moves you up."), el("div", { class: "row" }, input, copy));
        }
        parts.push(el("p", {}, el("a", { href: answer.redirect_url, target: "_top" }, "See your place in line")));
      }
      box.replaceChildren(...parts);
      title.focus();
    }
  }

  for (const script of document.querySelectorAll("script[data-waitlist]:not([data-mounted])")) if (/\/embed\.js(\?|$)/.test(script.src)) mount(script);
})();
