import { ArgumentsHost, Catch, ExceptionFilter, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';

/**
 * A failed check keeps terminus's body ({ status, info, error, details }), which probes and
 * dashboards read, rather than the API's error envelope. Only on the health routes.
 */
@Catch(ServiceUnavailableException)
export class HealthCheckFailedFilter implements ExceptionFilter {
  catch(exception: ServiceUnavailableException, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(503).json(exception.getResponse());
  }
}
