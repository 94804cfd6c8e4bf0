import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'isPublic';

/** A route outside the API's keys and rate limit (health checks): ApiKeyGuard lets it through. */
export const Public = () => SetMetadata(IS_PUBLIC, true);
