// How wide a TrueType font sets a line of text (its cmap and hmtx tables; kerning left out, so a little generous):
// the share image (./og-image.ts) wraps a waitlist's name with it before resvg draws it.

/** A font's advance widths, in ems. */
export interface FontWidths {
  /** The width of `text` set at `size` px. */
  width(text: string, size: number): number;
}

export function fontWidths(font: Uint8Array): FontWidths {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  const tables = new Map<string, number>();
  for (let i = 0, n = view.getUint16(4); i < n; i++) {
    const at = 12 + i * 16;
    tables.set(String.fromCharCode(...font.subarray(at, at + 4)), view.getUint32(at + 8));
  }
  const table = (tag: string) => {
    const at = tables.get(tag);
    if (at === undefined) throw new Error(`the font has no ${tag} table`);
    return at;
  };
  const unitsPerEm = view.getUint16(table("head") + 18);
  const metrics = view.getUint16(table("hhea") + 34);
  const hmtx = table("hmtx");
  const glyphOf = cmapLookup(view, table("cmap"));
  // glyphs past numberOfHMetrics share the last advance (OpenType hmtx)
  const advance = (glyph: number) => view.getUint16(hmtx + 4 * Math.min(glyph, metrics - 1)) / unitsPerEm;
  const ems = new Map<number, number>();
  return {
    width(text, size) {
      let total = 0;
      for (const ch of text) {
        const code = ch.codePointAt(0)!;
        let w = ems.get(code);
        if (w === undefined) ems.set(code, (w = advance(glyphOf(code))));
        total += w;
      }
      return total * size;
    },
  };
}

/** Character to glyph through the font's Unicode cmap (format 12 if it has one, else format 4); 0 (.notdef) if absent. */
function cmapLookup(view: DataView, cmap: number): (code: number) => number {
  const subtables = new Map<string, number>();
  for (let i = 0, n = view.getUint16(cmap + 2); i < n; i++) {
    const rec = cmap + 4 + i * 8;
    subtables.set(`${view.getUint16(rec)}/${view.getUint16(rec + 2)}`, cmap + view.getUint32(rec + 4));
  }
  const full = subtables.get("3/10") ?? subtables.get("0/4");
  if (full !== undefined && view.getUint16(full) === 12) {
    const groups = view.getUint32(full + 12);
    return (code) => {
      for (let g = 0; g < groups; g++) {
        const at = full + 16 + g * 12;
        if (code >= view.getUint32(at) && code <= view.getUint32(at + 4)) return view.getUint32(at + 8) + code - view.getUint32(at);
      }
      return 0;
    };
  }
  const bmp = subtables.get("3/1") ?? subtables.get("0/3");
  if (bmp === undefined || view.getUint16(bmp) !== 4) throw new Error("the font has no Unicode cmap of format 4 or 12");
  const segments = view.getUint16(bmp + 6) / 2;
  const ends = bmp + 14;
  const starts = ends + 2 * segments + 2;
  const deltas = starts + 2 * segments;
  const offsets = deltas + 2 * segments;
  return (code) => {
    if (code > 0xffff) return 0;
    for (let s = 0; s < segments; s++) {
      if (code > view.getUint16(ends + 2 * s)) continue;
      const start = view.getUint16(starts + 2 * s);
      if (code < start) return 0;
      const delta = view.getUint16(deltas + 2 * s);
      const offset = view.getUint16(offsets + 2 * s);
      if (offset === 0) return (code + delta) & 0xffff;
      const glyph = view.getUint16(offsets + 2 * s + offset + 2 * (code - start));
      return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
    }
    return 0;
  };
}
