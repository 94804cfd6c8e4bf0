// A refusal's turn comes with this many others: about 2 ms of the event loop (a refusal through
// the framework costs 150 to 300 µs of CPU here).
const REFUSALS_PER_TURN = 8;

/**
 * The refusals of a burst take their turns a few at a time, each batch on a later turn of the
 * event loop, so that the work of the requests being served (their database answers, their
 * responses) runs between the batches instead of after all of them.
 *
 * Why: a wave of 300 requests of one workspace arrives in one read of the sockets, and its 280
 * refusals, answered there and then, held the one event loop for 100 ms and more; the quiet
 * workspace's key check and page waited behind them. Measured with the noisy-neighbour workload
 * (docs/benchmarks.md, "Fair share", smoke runs of 8 s): the quiet workspace's p99 during the burst
 * was 160 to 184 ms with every refusal answered at once, 98 to 120 ms in turns of 8. A refused
 * client waits a few milliseconds more for its 429.
 */
export class RefusalTurns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Resolves when it is this refusal's turn. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // An immediate queued from one runs on the next turn, after the sockets have been read.
    setImmediate(() => {
      this.scheduled = false;
      for (const resolve of this.waiting.splice(0, REFUSALS_PER_TURN)) resolve();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}
