import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service';
import { RecentKeys } from './recent-keys';

/** Keys: issuing and revoking (admin tool) and checking them (the guard, see AppModule). */
@Module({
  providers: [ApiKeysService, RecentKeys],
  exports: [ApiKeysService, RecentKeys],
})
export class AuthModule {}
