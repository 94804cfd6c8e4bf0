import { defineConfig } from 'prisma/config';

// Used by `prisma generate` (offline, see docs/architecture.md) and, where Prisma's native schema engine can be
// downloaded, by `prisma migrate deploy`, which is interchangeable with `npm run db:migrate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
});
