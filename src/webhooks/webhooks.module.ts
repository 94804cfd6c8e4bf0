import { Module } from '@nestjs/common';
import { WebhookEndpointsService } from './webhook-endpoints.service';

/** Webhook endpoints as the admin tool manages them; delivery runs in the worker (src/worker). */
@Module({
  providers: [WebhookEndpointsService],
  exports: [WebhookEndpointsService],
})
export class WebhooksModule {}
