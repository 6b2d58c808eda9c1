# One image per deployable, so each team builds and ships its own:
#   docker build --target assets -t linepack/assets .     (gateway, auth, assets, measurements, analytics, compliance)
# Each image holds its bundle (scripts/build-package.mjs: the service and the @linepack packages it uses),
# the production dependencies of that one workspace, and the SDL files.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npm run build

# Production dependencies of one workspace only (e.g. no MongoDB driver in the gateway image).
FROM node:24-bookworm-slim AS runtime
WORKDIR /app
# METRICS_HOST: Prometheus reaches /metrics (port 9464) inside the compose network or the cluster, never published.
ENV NODE_ENV=production APOLLO_TELEMETRY_DISABLED=true LINEPACK_SCHEMA_DIR=/app/schema METRICS_HOST=0.0.0.0
COPY --from=build /app/schema/*.graphql ./schema/
# Prometheus metrics (METRICS_PORT, /metrics) of every service; never published with the service port.
EXPOSE 9464
# The image's `node` user, by number: Kubernetes can then verify runAsNonRoot without a runAsUser of its own.
USER 1000:1000
# Tracing (OTEL_EXPORTER_OTLP_ENDPOINT) is initialised inside main; nothing to preload.
CMD ["node", "dist/main.js"]

FROM build AS deps-gateway
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/gateway
FROM runtime AS gateway
EXPOSE 4000
COPY --from=deps-gateway /app/node_modules ./node_modules
COPY --from=build /app/gateway/dist ./dist
# The web console the gateway serves at / (static files; CONSOLE_DIR defaults to /app/console/dist).
COPY --from=build /app/console/dist ./console/dist

FROM build AS deps-auth
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-auth
FROM runtime AS auth
EXPOSE 4005
COPY --from=deps-auth /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/auth/dist ./dist

FROM build AS deps-assets
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-assets
FROM runtime AS assets
EXPOSE 4001
COPY --from=deps-assets /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/assets/dist ./dist

FROM build AS deps-measurements
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-measurements
FROM runtime AS measurements
EXPOSE 4002
COPY --from=deps-measurements /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/measurements/dist ./dist

FROM build AS deps-analytics
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-analytics
FROM runtime AS analytics
EXPOSE 4003
COPY --from=deps-analytics /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/analytics/dist ./dist

FROM build AS deps-compliance
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-compliance
FROM runtime AS compliance
EXPOSE 4004
COPY --from=deps-compliance /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/compliance/dist ./dist
