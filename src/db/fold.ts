// What "the same name" means (issue 44): one rule, computed in code, so that both engines give the same answers.
// SQLite's lower() folds ASCII only and PostgreSQL's follows the server's locale; neither is asked. A waitlist's and a
// tag's name are unique by their key (`name_key`), and search compares keys. Emails are not folded: an address is
// stored lowercased (subscribers/email.ts normalizeEmail) and compared as stored, which is already one rule.

/**
 * A name's key: compatibility-normalized (NFKC: "ﬁ" is "fi", full-width "Ｅ" is "E"), then case-folded by
 * upper-casing and lower-casing, which folds what lower-casing alone misses ("straße" and "STRASSE" are both
 * "strasse"). JavaScript's case mappings are Unicode's own, the same on every machine and locale.
 */
export const foldName = (name: string): string => name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");

/** The rule as the API document states it. */
export const SAME_NAME = 'compared case-insensitively by Unicode case folding after NFKC normalization ("Été" is "été", "Straße" is "STRASSE"; accents count: "Élodie" is not "Elodie")';

/** A name's key, or null for no name. */
export const foldNameOrNull = (name: string | null): string | null => (name === null ? null : foldName(name));
