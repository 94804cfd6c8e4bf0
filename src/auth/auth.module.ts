import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ApiKeysService } from './api-keys.service';
import { KeyedRoutes } from './keyed-routes';
import { KeyLookups } from './key-lookups';
import { KeyUses } from './key-uses';
import { RecentKeys } from './recent-keys';

/**
 * Keys on the serving side: checking a request's key (the guard, see AppModule), the keys seen
 * lately, their uses recorded, and which routes need one (read off the controllers).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [ApiKeysService, RecentKeys, KeyLookups, KeyUses, KeyedRoutes],
  exports: [ApiKeysService, RecentKeys, KeyLookups, KeyedRoutes],
})
export class AuthModule {}
