import { executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps one of Node's tick objects alive for the life of the process.
 *
 * `process.nextTick` (about ten calls a request in Node's own HTTP and stream code) builds each tick
 * from an object literal with computed symbol keys. V8 keeps the hidden classes that literal moves
 * through only while some object has them, and tick objects live for microseconds: a full collection
 * that lands while none is queued (an idle replica, V8's memory reducer, a start-up's collections)
 * frees them. The next ticks get new classes, the literal's inline caches go megamorphic for good, and
 * every tick after that is built through V8's runtime instead of the optimized code, which made each
 * cached read measurably dearer (docs/PERFORMANCE.md). One live tick object keeps the classes alive.
 *
 * Inside a tick's callback the tick object is the current async resource. Read that way rather than
 * through an async hook: enabling any hook, even for a moment, installs V8 promise hooks, which leaves
 * every promise and `await` in the process dearer for good.
 */
let kept: object | undefined;

process.nextTick(() => {
  kept = executionAsyncResource();
});

/** The tick object kept alive, once the first ticks have run (tests look at it). */
export function keptTickObject(): object | undefined {
  return kept;
}
