import { Global, Module } from '@nestjs/common';
import { InFlightLimiter } from './in-flight-limiter';

/** The one count of requests in progress per workspace: the guard's, read by the metrics too. */
@Global()
@Module({ providers: [InFlightLimiter], exports: [InFlightLimiter] })
export class InFlightModule {}
