// Issue 47: work this process does in the background (an upload's staging, an import's batches, the deletion of its
// staged rows: paced in http/foreground.ts): known while under way (the memory budget forces no collection then), and
// held for a moment by the database's own upkeep. A WAL checkpoint can only let the WAL
// start over once it has copied every frame; an import that writes without a pause keeps it from ever catching up,
// and the writers would have to be stopped (sign-ups with them) for it to. Held while a checkpoint runs, the import
// leaves it only the requests' few writes to catch up with.

let held = 0;
let released: Promise<void> | null = null;
let release: (() => void) | null = null;

/** Runs `fn` with background work held: steps under way finish, none starts until it has settled. */
export async function holdBackground<T>(fn: () => Promise<T>): Promise<T> {
  if (held++ === 0) released = new Promise<void>((resolve) => (release = resolve));
  try {
    return await fn();
  } finally {
    if (--held === 0) {
      release!();
      released = release = null;
    }
  }
}

/** While background work is held: a promise of its release; else null. */
export const backgroundHeld = (): Promise<void> | null => released;

/** Background work under way in this process. */
let running = 0;
export const backgroundWork = (): boolean => running > 0;

/** Runs `fn` as background work (`backgroundWork` answers true meanwhile). */
export async function inBackground<T>(fn: () => Promise<T>): Promise<T> {
  running++;
  try {
    return await fn();
  } finally {
    running--;
  }
}
