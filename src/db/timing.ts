// How long database calls take, for /metrics: each engine times its own calls and tells the hook a caller set on
// the Db (`onTiming`). With no hook set a call costs one property read more.

export type TimedOp = "execute" | "batch" | "transaction";
export type TimingHook = (op: TimedOp, seconds: number) => void;

/** The hook slot an engine's calls read. */
export interface Timing {
  hook: TimingHook | null;
}

/** `call`, timed as `op` while a hook is set; the caller gets the call's own promise. */
export function timed<A extends unknown[], R>(timing: Timing, op: TimedOp, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return (...args) => {
    const hook = timing.hook;
    if (!hook) return call(...args);
    const at = performance.now();
    const p = call(...args);
    const done = () => hook(op, (performance.now() - at) / 1000);
    p.then(done, done);
    return p;
  };
}
