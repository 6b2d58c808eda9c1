# One image per deployable, so each team builds and ships its own:
#   docker build --target assets -t linepack/assets .     (gateway, auth, assets, measurements, analytics, compliance)
# Each image holds its bundle (scripts/build-package.mjs: the service and the @linepack packages it uses),
# the production dependencies that bundle loads (deploy/tools/prune-node-modules.mjs), and the SDL files it reads
# (schema/: shared.graphql and the supergraph; a subgraph's own SDL at subgraphs/<name>/schema.graphql, as in the repository).

# The base image, pinned by digest: a rebuild gets the same Node and Debian until the digest is changed on purpose
# (a tag alone moves with every upstream rebuild). The tag is informative; Docker pulls by the digest. To refresh it:
#   docker buildx imagetools inspect node:24-bookworm-slim --format '{{json .Manifest.Digest}}'
# (or `docker pull node:24-bookworm-slim && docker inspect --format '{{index .RepoDigests 0}}' node:24-bookworm-slim`),
# then replace the digest below, rebuild and run the tests. A registry mirror: --build-arg NODE_IMAGE=<mirror>/node@sha256:...
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && npm run build

FROM ${NODE_IMAGE} AS runtime
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

# deps-<service>: the workspace's production dependencies, then only the packages its bundle requires (with what
# they declare), without type declarations, source maps and ES-module copies: npm's workspace install also brings
# @linepack/lib's whole tree (the MongoDB driver and exceljs into the gateway) and other workspaces' @opentelemetry
# packages. Gateway node_modules 273 MB -> 84 MB, each subgraph's 145 MB -> 50-85 MB (README "Images").
FROM build AS deps-gateway
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/gateway \
  && node deploy/tools/prune-node-modules.mjs gateway/dist/main.js node_modules
FROM runtime AS gateway
EXPOSE 4000
COPY --from=deps-gateway /app/node_modules ./node_modules
COPY --from=build /app/gateway/dist ./dist
# The web console the gateway serves at / (static files; CONSOLE_DIR defaults to /app/console/dist).
COPY --from=build /app/console/dist ./console/dist

FROM build AS deps-auth
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-auth \
  && node deploy/tools/prune-node-modules.mjs subgraphs/auth/dist/main.js node_modules
FROM runtime AS auth
EXPOSE 4005
COPY --from=deps-auth /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/auth/dist ./dist
COPY --from=build /app/subgraphs/auth/schema.graphql ./subgraphs/auth/schema.graphql

FROM build AS deps-assets
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-assets \
  && node deploy/tools/prune-node-modules.mjs subgraphs/assets/dist/main.js node_modules
FROM runtime AS assets
EXPOSE 4001
COPY --from=deps-assets /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/assets/dist ./dist
COPY --from=build /app/subgraphs/assets/schema.graphql ./subgraphs/assets/schema.graphql

FROM build AS deps-measurements
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-measurements \
  && node deploy/tools/prune-node-modules.mjs subgraphs/measurements/dist/main.js node_modules
FROM runtime AS measurements
EXPOSE 4002
COPY --from=deps-measurements /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/measurements/dist ./dist
COPY --from=build /app/subgraphs/measurements/schema.graphql ./subgraphs/measurements/schema.graphql

FROM build AS deps-analytics
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-analytics \
  && node deploy/tools/prune-node-modules.mjs subgraphs/analytics/dist/main.js node_modules
FROM runtime AS analytics
EXPOSE 4003
COPY --from=deps-analytics /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/analytics/dist ./dist
COPY --from=build /app/subgraphs/analytics/schema.graphql ./subgraphs/analytics/schema.graphql

FROM build AS deps-compliance
RUN npm ci --omit=dev --no-audit --no-fund -w @linepack/subgraph-compliance \
  && node deploy/tools/prune-node-modules.mjs subgraphs/compliance/dist/main.js node_modules
FROM runtime AS compliance
EXPOSE 4004
COPY --from=deps-compliance /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/compliance/dist ./dist
COPY --from=build /app/subgraphs/compliance/schema.graphql ./subgraphs/compliance/schema.graphql
