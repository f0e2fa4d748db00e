// CSS from a model, filtered to rules that can fetch nothing and hide nothing from this filter (issue 16 item 7):
// no url(), @import or other at-rules but @media, expression(), -moz-binding, behavior, escapes or markup characters.

/** A CSS value that could fetch something, run something, or hide from this filter. */
const FORBIDDEN_VALUE = /url\s*\(|@|expression\s*\(|image-set|image\s*\(|element\s*\(|paint\s*\(|javascript:|vbscript:|behavio(u)?r|binding|\\|<|>|\/\*/i;

/** `prop: value; ...` with each declaration checked; what fails is dropped, the rest kept. */
export function cleanDeclarations(block: string): string {
  return block
    .split(";")
    .map((d) => d.trim())
    .filter((d) => {
      const colon = d.indexOf(":");
      if (colon <= 0) return false;
      const prop = d.slice(0, colon).trim().toLowerCase();
      return /^-?[a-z][a-z-]*$/.test(prop) && !/binding|behavio/.test(prop) && !FORBIDDEN_VALUE.test(d.slice(colon + 1));
    })
    .join("; ");
}

const selectorOk = (sel: string) => sel.trim().length > 0 && !/[<>\\@{}]|\/\*/.test(sel);

function rules(body: string): string[] {
  const kept: string[] = [];
  for (const m of body.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const sel = m[1].trim();
    if (!selectorOk(sel)) continue;
    const decl = cleanDeclarations(m[2]);
    if (decl) kept.push(`${sel} { ${decl} }`);
  }
  return kept;
}

/** Rules of a <style> block: comments and every at-rule but @media dropped, each declaration filtered. */
export function cleanStylesheet(css: string): string {
  // an unterminated comment runs to the end of the sheet, as a browser reads it
  const text = css.replace(/\/\*[\s\S]*?(\*\/|$)/g, "");
  const out: string[] = [];
  // one level of @media is kept: its rules inside a rebuilt @media block
  const media = /@media([^{]+)\{((?:[^{}]*\{[^{}]*\})*)\s*\}/g;
  let rest = text;
  for (const m of text.matchAll(media)) {
    const query = m[1].trim();
    if (/^[\w\s():,.-]+$/.test(query)) {
      const inner = rules(m[2]);
      if (inner.length) out.push(`@media ${query} { ${inner.join(" ")} }`);
    }
    rest = rest.replace(m[0], "");
  }
  // every other at-rule (@import, @font-face, @namespace, @charset...) with its block or up to its ;
  rest = rest.replace(/@[a-z-]+[^{;]*(\{[^{}]*(\{[^{}]*\}[^{}]*)*\}|;|$)/gi, "");
  const sheet = [...rules(rest), ...out].join("\n");
  // belt and braces: what reaches a <style> element can never close it or fetch anything
  return /<|url\s*\(|@import|\\/i.test(sheet) ? "" : sheet;
}
