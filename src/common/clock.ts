import { Global, Injectable, Module } from '@nestjs/common';

/** The time, injectable so that tests move it instead of sleeping. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}

@Global()
@Module({
  providers: [Clock],
  exports: [Clock],
})
export class ClockModule {}
