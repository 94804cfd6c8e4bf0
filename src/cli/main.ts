import { existsSync } from 'node:fs';
import { runAdmin } from './run-admin';

// As the server does: a local .env fills in what the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

void runAdmin(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
});
