import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Long loops give the event loop a turn every SLICE_MS, so other requests are answered meanwhile. */
const SLICE_MS = 10;

/** Times a long loop: one Slicer per task, shared by all of its loops. */
export class Slicer {
  private started = performance.now();
  private steps = 0;

  /** Call once per step: true when the loop should `await slicer.pause()`. */
  due(): boolean {
    this.steps += 1;
    return (this.steps & 127) === 0 && performance.now() - this.started >= SLICE_MS;
  }

  async pause(): Promise<void> {
    await yieldToEventLoop();
    this.started = performance.now();
  }
}
