// What a database URL names, and how it is shown to an operator.

/** The file of an embedded database URL (`file:./data/w.db` -> `./data/w.db`), or null for a server. */
export function databasePath(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = url.slice("file:".length).replace(/^\/\/(localhost)?(?=\/)/, "").replace(/\?.*$/, "");
  return path && path !== ":memory:" ? path : null;
}

/** Whether a database URL names a PostgreSQL server (the rest: libSQL). */
export const isPgUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url);

/** A URL fit for a message: no user, password or query (which may carry a token). */
export const displayUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//").replace(/\?.*$/, "");
