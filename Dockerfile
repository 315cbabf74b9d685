# syntax=docker/dockerfile:1
# The billing engine's server and worker in one image:
#   docker build -t billing-engine .
#   docker run -e DATABASE_URL=postgres://... -p 3000:3000 billing-engine            # serve
#   docker run -e DATABASE_URL=postgres://... billing-engine worker --metrics-port 9464
# compose.yaml runs both over Postgres. Settings are environment variables (README, "Configuration").

ARG NODE_VERSION=20.19

# Build stage: every dependency (dev ones too) to compile the TypeScript with tsup.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches the platform.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build
# The packages the server needs at run time that `npm ci --omit=dev` leaves out (the storage
# drivers are optional peers of the library; logging and metrics are dev dependencies of it), with
# everything they depend on, as the lock file places them, built here for the runtime stage.
RUN mkdir -p /runtime-packages \
  && node docker/runtime-packages.mjs pg kysely better-sqlite3 pino pino-pretty prom-client hono @hono/node-server commander \
    | tar -cf - -T - | tar -xf - -C /runtime-packages

# Runtime stage: production dependencies from the lock file, the build, no compilers, not root.
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /runtime-packages/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# SQLite files, when DATABASE_URL is a path, go under /app/data (a volume), owned by the app user.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
# In a container the server listens on every address; JSON logs for the log collector.
ENV BILLING_HOST=0.0.0.0 \
  PORT=3000 \
  LOG_FORMAT=json
EXPOSE 3000
# Liveness of the server (PORT) or of a worker started with BILLING_METRICS_PORT.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.BILLING_METRICS_PORT || process.env.PORT || 3000}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and handles SIGTERM itself (the CLI installs handlers), so `docker stop`
# shuts down gracefully: in-flight requests and the current batch finish, then the storage closes.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/bin/billing-engine.js"]
CMD ["serve"]
