import {
  Global,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  RequestMethod,
} from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { InFlightLimiter } from './in-flight-limiter';
import { InFlightOnArrival } from './in-flight-on-arrival';
import { RateLimitRefund } from './rate-limit-refund';

/**
 * The one count of requests in progress per workspace (the guard's, read by the metrics too), and
 * the count from arrival of the requests of keys accepted lately (a burst's refusals without a
 * statement).
 */
@Global()
@Module({
  imports: [AuthModule],
  // RateLimitRefund: a 304's hit of the per-minute budget given back, wherever it is answered.
  providers: [InFlightLimiter, InFlightOnArrival, RateLimitRefund],
  exports: [InFlightLimiter, RateLimitRefund],
})
export class InFlightModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // After the request log's middleware (LoggingModule comes first): a refusal has its line.
    consumer.apply(InFlightOnArrival).forRoutes({ path: 'v1/{*path}', method: RequestMethod.GET });
  }
}
