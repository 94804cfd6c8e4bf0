import { Global, Module } from '@nestjs/common';
import { Environment, validateEnvironment } from './environment';

/**
 * The validated environment as an injectable `Environment`. Validated when the application is
 * created (not when this file is imported), so that a bad variable stops the start with a clear
 * message, and tests can set the environment per application.
 */
@Global()
@Module({
  providers: [{ provide: Environment, useFactory: () => validateEnvironment(process.env) }],
  exports: [Environment],
})
export class ConfigModule {}
