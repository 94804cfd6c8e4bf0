import { type DynamicModule, Global, Module } from '@nestjs/common';
import { Environment, validateEnvironment } from './environment';

// What the admin tool's help runs on when the environment has no valid configuration: printing the
// commands needs no database and no secret, and nothing connects before a command runs.
const HELP_ONLY_ENVIRONMENT = {
  DATABASE_URL: 'postgresql://help-only.invalid/none',
  API_KEY_SECRET: 'help-only: no key is ever hashed with this value',
};

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
export class ConfigModule {
  /** The environment when it is valid, otherwise one that serves only to print help. */
  static forHelp(): DynamicModule {
    const environment = () => {
      try {
        return validateEnvironment(process.env);
      } catch {
        return validateEnvironment(HELP_ONLY_ENVIRONMENT);
      }
    };
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: Environment, useFactory: environment }],
      exports: [Environment],
    };
  }
}
