// AI page HTML through an allow-list (sanitize-html): no scripts, handlers, frames, objects, images or
// external resources; forms post only to the waitlist; CSS without url(), @import or escapes (DESIGN §4 AI pages).
// Style attributes become classes in one stylesheet, so the page keeps the strict CSP (no inline styles).
// sanitize-html (with postcss) is loaded on the first generation: ~18 MB an instance without AI never needs.
type SanitizeHtml = typeof import("sanitize-html");
let library: Promise<SanitizeHtml> | null = null;
const loadSanitizer = () => (library ??= import("sanitize-html").then((m) => (m.default ?? m) as SanitizeHtml));

const TAGS = [
  "main", "header", "footer", "section", "article", "nav", "aside", "div", "span", "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr",
  "ul", "ol", "li", "dl", "dt", "dd", "strong", "em", "b", "i", "u", "s", "small", "mark", "sup", "sub", "blockquote", "q", "cite",
  "code", "pre", "figure", "figcaption", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "a", "form", "fieldset",
  "legend", "label", "input", "button", "textarea", "select", "option",
];
const INPUT_TYPES = new Set(["email", "text", "tel", "hidden", "submit", "checkbox", "radio"]);

/** A CSS value or rule body that could fetch something or hide from this filter. */
const FORBIDDEN_CSS = /url\s*\(|@import|expression\s*\(|image-set|image\s*\(|element\s*\(|javascript:|behavio(u)?r|-moz-binding|\\|<|>/i;

function cleanDeclarations(block: string): string {
  return block
    .split(";")
    .map((d) => d.trim())
    .filter((d) => {
      const colon = d.indexOf(":");
      if (colon <= 0) return false;
      const prop = d.slice(0, colon).trim().toLowerCase();
      return /^-?[a-z][a-z-]*$/.test(prop) && !FORBIDDEN_CSS.test(d.slice(colon + 1));
    })
    .join("; ");
}

/** Rules of a <style> block: comments and at-rules other than @media dropped, each declaration filtered. */
export function cleanStylesheet(css: string): string {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, "");
  const out: string[] = [];
  const rule = /([^{}]+)\{([^{}]*)\}/g;
  // flatten one level of @media: keep its rules inside a rebuilt @media block
  const media = /@media([^{]+)\{((?:[^{}]*\{[^{}]*\})*)\s*\}/g;
  const selectorOk = (sel: string) => !/[<>\\@]/.test(sel) && sel.trim().length > 0;
  const rules = (body: string) => {
    const kept: string[] = [];
    for (const m of body.matchAll(rule)) {
      const sel = m[1].trim();
      if (sel.startsWith("@") || !selectorOk(sel)) continue;
      const decl = cleanDeclarations(m[2]);
      if (decl) kept.push(`${sel} { ${decl} }`);
    }
    return kept;
  };
  let rest = text;
  for (const m of text.matchAll(media)) {
    const query = m[1].trim();
    if (/^[\w\s():,.-]+$/.test(query)) {
      const inner = rules(m[2]);
      if (inner.length) out.push(`@media ${query} { ${inner.join(" ")} }`);
    }
    rest = rest.replace(m[0], "");
  }
  rest = rest.replace(/@[a-z-]+[^{;]*(\{[^{}]*(\{[^{}]*\}[^{}]*)*\}|;)/gi, "");
  return [...rules(rest), ...out].join("\n");
}

export interface SanitizedPage {
  html: string;
  css: string;
}

export async function sanitizePage(dirty: string, formAction: string): Promise<SanitizedPage> {
  const sanitizeHtml = await loadSanitizer();
  const styles: string[] = [];
  for (const m of dirty.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)) styles.push(cleanStylesheet(m[1]));
  const inline: string[] = [];
  const html = sanitizeHtml(dirty, {
    allowedTags: TAGS,
    disallowedTagsMode: "discard",
    nonTextTags: ["style", "script", "textarea-noscript", "noscript", "title", "iframe", "object", "embed", "svg", "math", "template"],
    allowedAttributes: {
      "*": ["class", "id", "style", "role", "title", "aria-*", "data-*", "lang", "dir"],
      a: ["href", "target", "rel"],
      form: ["action", "method"],
      input: ["type", "name", "placeholder", "required", "value", "autocomplete", "maxlength", "minlength", "checked"],
      label: ["for"],
      button: ["type", "name", "value"],
      textarea: ["name", "placeholder", "rows", "maxlength"],
      select: ["name", "required"],
      option: ["value", "selected"],
      th: ["colspan", "rowspan", "scope"],
      td: ["colspan", "rowspan"],
    },
    allowedSchemes: ["http", "https", "mailto"],
    allowProtocolRelative: false,
    allowedSchemesAppliedToAttributes: ["href", "action"],
    transformTags: {
      // a form may only post to this waitlist's form action
      form: () => ({ tagName: "form", attribs: { method: "post", action: formAction } }),
      input: (tagName, attribs) => {
        const type = (attribs.type ?? "text").toLowerCase();
        return { tagName: "input", attribs: { ...attribs, type: INPUT_TYPES.has(type) ? type : "text" } };
      },
      a: (tagName, attribs) => ({ tagName: "a", attribs: { ...attribs, rel: "noopener noreferrer" } }),
      "*": (tagName, attribs) => {
        if (!attribs.style) return { tagName, attribs };
        const { style, ...rest } = attribs;
        const decl = cleanDeclarations(style);
        if (!decl) return { tagName, attribs: rest };
        const cls = `ai-s${inline.length}`;
        inline.push(`.${cls} { ${decl} }`);
        return { tagName, attribs: { ...rest, class: [rest.class, cls].filter(Boolean).join(" ") } };
      },
    },
  });
  return { html, css: [...styles, ...inline].filter(Boolean).join("\n") };
}
