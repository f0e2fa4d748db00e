// Recognizing database errors the services turn into domain errors.

/** The text of a UNIQUE constraint failure (it names the index or columns), or null for any other error. */
export function uniqueViolation(err: unknown): string | null {
  const text = String((err as any)?.message ?? "") + String((err as any)?.cause?.message ?? "");
  return text.includes("UNIQUE constraint failed") ? text : null;
}

export const isUniqueViolation = (err: unknown): boolean => uniqueViolation(err) !== null;
