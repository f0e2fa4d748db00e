// AI page HTML through a parser-based allow-list (issue 16 item 7, DESIGN §4 AI pages and §10): parsed with parse5
// as the content of <body>, rebuilt from allowed HTML elements and attributes only, then re-parsed and rebuilt until
// the output is stable, so what a browser parses is what was checked (no mutation XSS). No scripts, handlers, frames,
// objects, images, foreign (svg/math) content, raw-text elements or external resources; forms post only to the
// waitlist. Style attributes become classes in one filtered stylesheet, so the page keeps its strict CSP.
import { parse, parseFragment, html as parse5Html } from "parse5";
import type { DefaultTreeAdapterMap } from "parse5";
import { cleanDeclarations, cleanStylesheet } from "./css";

export { cleanStylesheet } from "./css";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

/** Kept with their allowed attributes. */
const TAGS = new Set([
  "main", "header", "footer", "section", "article", "nav", "aside", "div", "span", "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr",
  "ul", "ol", "li", "dl", "dt", "dd", "strong", "em", "b", "i", "u", "s", "small", "mark", "sup", "sub", "blockquote", "q", "cite",
  "code", "pre", "figure", "figcaption", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "a", "form", "fieldset",
  "legend", "label", "input", "button",
]);
const VOID = new Set(["br", "hr", "input"]);

/**
 * Removed with everything inside: scripts and styles (a <style> is read into the stylesheet first), raw-text and
 * RCDATA elements (their content is not markup, the classic mutation-XSS carriers), embedding and metadata elements,
 * and elements whose content a browser parses specially. Any other element outside TAGS is unwrapped: its
 * children stay, sanitized the same way. Foreign (svg/math) elements are removed whole whatever their name.
 */
const DROP_WITH_CONTENT = new Set([
  "script", "style", "template", "textarea", "title", "xmp", "noembed", "noframes", "noscript", "plaintext", "iframe", "frame",
  "frameset", "object", "embed", "applet", "param", "meta", "base", "link", "head", "svg", "math", "select", "option", "optgroup",
  "datalist", "img", "image", "picture", "source", "video", "audio", "track", "canvas", "map", "area", "portal", "fencedframe",
  "selectedcontent", "dialog", "slot", "listing",
]);

const GLOBAL_ATTRIBUTES = new Set(["class", "id", "role", "title", "lang", "dir"]);
const ATTRIBUTES: Record<string, Set<string>> = {
  a: new Set(["href", "target"]),
  input: new Set(["type", "name", "placeholder", "required", "value", "autocomplete", "maxlength", "minlength", "checked"]),
  label: new Set(["for"]),
  button: new Set(["type", "name", "value"]),
  th: new Set(["colspan", "rowspan", "scope"]),
  td: new Set(["colspan", "rowspan"]),
};
const INPUT_TYPES = new Set(["email", "text", "tel", "hidden", "submit", "checkbox", "radio"]);
const BUTTON_TYPES = new Set(["submit", "button", "reset"]);
/** Attributes a browser reads as a URL; only `a href` is allowed at all, but any of them is checked. */
const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction", "xlink:href", "srcset", "poster", "background", "data", "codebase", "cite", "longdesc", "ping", "manifest", "icon", "lowsrc", "dynsrc", "srcdoc"]);
const SAFE_SCHEMES = new Set(["http", "https", "mailto", "tel"]);

/**
 * A link that can only navigate: http(s), mailto, tel or a relative path. The value is already entity-decoded by
 * the parser; whitespace and control characters are removed everywhere before the scheme is read (a browser drops
 * tabs and newlines inside a URL), and protocol-relative or backslash URLs are refused.
 */
export function isSafeUrl(value: string): boolean {
  const url = value.replace(/[\u0000-\u0020\u007f-\u009f\u00a0\u1680\u180e\u2000-\u200f\u2028\u2029\u205f\u3000\ufeff]/g, "");
  if (/^[\\/]{2}/.test(url) || url.startsWith("/\\")) return false;
  const scheme = url.match(/^([^/?#:]*):/)?.[1];
  return scheme === undefined || SAFE_SCHEMES.has(scheme.toLowerCase());
}

const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\u00a0/g, "&nbsp;");
const escapeAttribute = (s: string) => escapeText(s).replace(/"/g, "&quot;");

interface Pass {
  formAction: string;
  /** First pass only: <style> blocks and style attributes are read into the stylesheet. */
  styles: string[] | null;
  inline: string[] | null;
}

function attributesOf(el: Element, tag: string, pass: Pass): [string, string][] {
  const out: [string, string][] = [];
  const allowed = ATTRIBUTES[tag];
  let classes: string | null = null;
  for (const attr of el.attrs) {
    // namespaced (xlink:, xml:) attributes never belong to an HTML element we keep
    if (attr.namespace || attr.prefix) continue;
    const name = attr.name.toLowerCase();
    const value = attr.value;
    if (URL_ATTRIBUTES.has(name) && !isSafeUrl(value)) continue;
    if (name === "style") {
      const decl = pass.inline ? cleanDeclarations(value) : "";
      if (decl) {
        const cls = `ai-s${pass.inline!.length}`;
        pass.inline!.push(`.${cls} { ${decl} }`);
        classes = classes ? `${classes} ${cls}` : cls;
      }
      continue;
    }
    if (name === "class") {
      const kept = value.split(/\s+/).filter((c) => /^-?[A-Za-z_][\w-]*$/.test(c)).join(" ");
      if (kept) classes = classes ? `${kept} ${classes}` : kept;
      continue;
    }
    const ok = GLOBAL_ATTRIBUTES.has(name) || allowed?.has(name) || /^aria-[a-z]+$/.test(name) || /^data-[a-z0-9_-]+$/.test(name);
    if (!ok) continue;
    if (tag === "input" && name === "type") out.push([name, INPUT_TYPES.has(value.trim().toLowerCase()) ? value.trim().toLowerCase() : "text"]);
    else if (tag === "button" && name === "type") out.push([name, BUTTON_TYPES.has(value.trim().toLowerCase()) ? value.trim().toLowerCase() : "submit"]);
    else if (tag === "a" && name === "target") {
      if (value === "_blank" || value === "_self") out.push([name, value]);
    } else out.push([name, value]);
  }
  if (classes) out.unshift(["class", classes]);
  // a form may only post to this waitlist's form action; a link never hands over the opener or the referrer
  if (tag === "form") return [["method", "post"], ["action", pass.formAction]];
  if (tag === "a") out.push(["rel", "noopener noreferrer"]);
  return out;
}

function rebuild(nodes: Node[], pass: Pass): string {
  let html = "";
  for (const node of nodes) {
    if (node.nodeName === "#text") {
      html += escapeText((node as DefaultTreeAdapterMap["textNode"]).value);
      continue;
    }
    if (!("tagName" in node)) continue; // comments, doctypes
    const el = node as Element;
    const tag = el.tagName.toLowerCase();
    if (el.namespaceURI !== parse5Html.NS.HTML) continue;
    if (tag === "style" && pass.styles) {
      pass.styles.push(cleanStylesheet(el.childNodes.map((c) => (c.nodeName === "#text" ? (c as DefaultTreeAdapterMap["textNode"]).value : "")).join("")));
      continue;
    }
    if (DROP_WITH_CONTENT.has(tag)) continue;
    if (!TAGS.has(tag)) {
      html += rebuild(el.childNodes, pass);
      continue;
    }
    const attrs = attributesOf(el, tag, pass)
      .map(([name, value]) => ` ${name}="${escapeAttribute(value)}"`)
      .join("");
    html += VOID.has(tag) ? `<${tag}${attrs}>` : `<${tag}${attrs}>${rebuild(el.childNodes, pass)}</${tag}>`;
  }
  return html;
}

/** The <body> element that fragments are parsed in, as a browser parses the body of our page. */
const bodyContext = () => {
  const doc = parse("<!doctype html><html><head></head><body></body></html>");
  const htmlEl = doc.childNodes.find((n) => n.nodeName === "html") as Element;
  return htmlEl.childNodes.find((n) => n.nodeName === "body") as Element;
};

const PASSES_MAX = 6;

export interface SanitizedPage {
  html: string;
  css: string;
}

export function sanitizePage(dirty: string, formAction: string): SanitizedPage {
  const styles: string[] = [];
  const inline: string[] = [];
  const context = bodyContext();
  const first = (html: string) => rebuild(parseFragment(context, html, { scriptingEnabled: true }).childNodes, { formAction, styles, inline });
  const again = (html: string) => rebuild(parseFragment(context, html, { scriptingEnabled: true }).childNodes, { formAction, styles: null, inline: null });
  // re-parse what we built until it reads back the same: whatever a second parse would turn into something else
  // (mis-nested tables and forms, foster parenting) is rebuilt through the allow-list again
  let html = first(dirty);
  for (let i = 0; ; i++) {
    const next = again(html);
    if (next === html) break;
    html = next;
    if (i === PASSES_MAX) {
      // a page that never settles is hostile: keep its words, not its markup
      // (text and attribute values are escaped, so every "<" left starts one of our tags)
      html = html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
      break;
    }
  }
  return { html, css: [...styles, ...inline].filter(Boolean).join("\n") };
}
