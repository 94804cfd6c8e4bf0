import { Global, Injectable, Module } from '@nestjs/common';

/**
 * Whether the process is shutting down: set once, at the start of the graceful shutdown
 * (server/graceful-shutdown.ts), so that long responses (the change streams) end by themselves
 * within the drain instead of being cut at its end.
 */
@Injectable()
export class Draining {
  private readonly controller = new AbortController();

  /** Aborted once the shutdown has started. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  begin(): void {
    this.controller.abort();
  }
}

@Global()
@Module({
  providers: [Draining],
  exports: [Draining],
})
export class DrainingModule {}
