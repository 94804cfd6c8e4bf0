import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { InFlightLimiter } from './in-flight-limiter';
import { InFlightOnArrival } from './in-flight-on-arrival';
import { RateLimitRefund } from './rate-limit-refund';

/**
 * The one count of requests in progress per workspace (the guard's, read by the metrics too), and
 * the count from arrival of the requests of keys accepted lately (a burst's refusals without a
 * statement, before the framework).
 */
@Global()
@Module({
  imports: [AuthModule],
  // RateLimitRefund: a 304's hit of the per-minute budget given back, wherever it is answered.
  providers: [InFlightLimiter, InFlightOnArrival, RateLimitRefund],
  // InFlightOnArrival: installed on the HTTP server by app.setup.ts, in front of Express.
  exports: [InFlightLimiter, InFlightOnArrival, RateLimitRefund],
})
export class InFlightModule {}
