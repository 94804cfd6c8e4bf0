import { Module } from '@nestjs/common';
import { ApiKeysService } from './api-keys.service';

/** Keys: issuing and revoking (admin tool) and checking them (the guard, see AppModule). */
@Module({
  providers: [ApiKeysService],
  exports: [ApiKeysService],
})
export class AuthModule {}
