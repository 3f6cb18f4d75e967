/**
 * Catch-ups of an in-memory copy (the agent catalogue, a search index), run one at a time so each
 * starts from the previous one's result. startingNow() answers a catch-up that starts no earlier than
 * the call, so it sees every write committed before it; callers arriving while one runs share the
 * single one queued after it.
 */
export class SerialCatchUp<T> {
  private running: Promise<T> | undefined;
  private queued: Promise<T> | undefined;

  constructor(private readonly catchUp: () => Promise<T>) {}

  /** The catch-up running now, if any. */
  get current(): Promise<T> | undefined {
    return this.running;
  }

  /**
   * What `fresh()` answers (the held copy, when it is current enough), else the same once the running
   * catch-up ends, else a catch-up starting now.
   */
  async freshest(fresh: () => T | undefined): Promise<T> {
    const held = fresh();
    if (held !== undefined) return held;
    if (this.running) {
      await this.running.catch(() => undefined);
      const after = fresh();
      if (after !== undefined) return after;
    }
    return this.startingNow();
  }

  startingNow(): Promise<T> {
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    const queued = this.running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        this.queued = undefined;
        return this.start();
      });
    this.queued = queued;
    return queued;
  }

  private start(): Promise<T> {
    const running = this.catchUp().finally(() => {
      if (this.running === running) this.running = undefined;
    });
    this.running = running;
    return running;
  }
}
