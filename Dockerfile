# syntax=docker/dockerfile:1

# Build: all dependencies, the Prisma client generated offline, the TypeScript compiled.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json prisma.config.ts ./
COPY prisma ./prisma
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Run: production dependencies, the build and the migrations only, as the unprivileged `node` user.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
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
# Migrations first (advisory-locked, so several replicas may start at once), then the server.
# The server's flags are those of `npm run start:prod` (package.json, where they are explained).
CMD ["sh", "-c", "node dist/database/migrate.js && exec node --max-old-space-size=128 --v8-pool-size=1 dist/main.js"]
