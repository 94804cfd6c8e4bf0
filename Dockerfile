# syntax=docker/dockerfile:1

# Node 24, the active LTS (Node 20 reached its end of life in April 2026). package.json's engines
# say which versions the code supports; CI runs the test suite on 20 and 24 (.ci/run).

# Build: all dependencies, the Prisma client generated offline, the TypeScript compiled.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json prisma.config.ts ./
COPY prisma ./prisma
COPY src ./src
# The quick start (src/dev: the embedded PostgreSQL and `npm run demo`) runs from a checkout with
# the dev dependencies, never here: its build is left out (nothing else imports it,
# src/import-graph.spec.ts). The demo data stay: the admin tool's `seed --demo` is the contract's.
RUN npm run build && rm -rf dist/dev

# The production dependencies, installed on their own rather than pruned from the build's tree:
# `npm prune --omit=dev` keeps the Prisma CLI (about 190 MB with its tree), an optional peer of
# @prisma/client, which --omit=optional and --omit=peer leave out (peer alone also drops two type
# packages, peers of nest-commander). Nothing at run time needs the CLI: the migrations run with
# src/database/migrator.ts. No install script runs (--ignore-scripts): the client is generated in
# the build stage. Of the Prisma query compilers (65 MB, one per database and build), only the one
# the generated client loads stays: PostgreSQL's, the default "fast" build. Also left out, 15 MB
# that nothing loads: nest-commander's Fig completion (@fig/complete-commander and the prettier it
# formats with, 11.5 MB), required only by a CLI that enables `fig` completion, which the admin
# tool does not; and type declarations (@types, dependencies of @types/pg). Nor do the packages'
# own source maps and declaration files load, nor zod's TypeScript sources (zod/src): left out
# too, since the MCP SDK and zod brought about 21 MB of which these are about 9. Nor do the ES
# module builds of OpenTelemetry's packages (build/esm and build/esnext, and the .mjs of its
# semantic conventions): Node loads their CommonJS builds (`main`, or the `default` of `exports`),
# which the tracing loads (src/tracing); each package ships its code three times.
FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --omit=peer --ignore-scripts --no-audit --no-fund \
  && find node_modules/@prisma/client/runtime -name 'query_compiler_*' \
    ! -name 'query_compiler_fast_bg.postgresql.*' -delete \
  && rm -rf node_modules/nest-commander/node_modules/@fig node_modules/prettier node_modules/@types \
    node_modules/zod/src \
  && find node_modules \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \) \
    -type f -delete \
  && find node_modules/@opentelemetry -type d \( -path '*/build/esm' -o -path '*/build/esnext' \) \
    -prune -exec rm -rf {} + \
  && find node_modules/@opentelemetry/semantic-conventions/dist -name '*.mjs' -type f -delete

# Run: production dependencies, the build and the migrations only, as the unprivileged `node` user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma/migrations ./prisma/migrations
USER node
EXPOSE 3000
# Liveness, not readiness: Docker's health status is what gets a container restarted or replaced,
# and an outage of the database or Redis is not cured by a restart (the process recovers by itself
# once they are back). /health/ready is for whatever routes traffic. The start period covers the
# migrations, which instances run one after the other.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# One node process, PID 1 (exec form, no shell): the migrations (advisory-locked, so several
# replicas may start at once), then the server (src/server/entrypoint.ts). It exits 0 on SIGTERM
# at any moment, draining the requests in flight once it serves. The node flags are package.json's
# config.serverNodeFlags, which the npm scripts read (a Dockerfile cannot:
# test/repo/node-flags.spec.ts keeps the two the same), chosen by measurement for a 384 MiB
# container (docs/benchmarks.md, "Node flags").
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=8", "dist/server/entrypoint.js"]
