# One image per deployable, so each team builds and ships its own:
#   docker build --target gateway -t linepack-gateway .
#   docker build --target subgraph --build-arg SUBGRAPH=assets -t linepack-assets .    (any subgraph of the registry)
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
# The root's postinstall (patch-package, a development dependency) cannot run in a production install: its scripts are
# skipped and the driver patch (patches/) is applied by the same tool fetched for the purpose; the runtime packages need
# no install script (protobufjs's only prints notes).
FROM build AS deps-gateway
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts -w @linepack/gateway \
  && npx --yes patch-package@8.0.1 --error-on-fail \
  && node deploy/tools/prune-node-modules.mjs gateway/dist/main.js node_modules
FROM runtime AS gateway
EXPOSE 4000
COPY --from=deps-gateway /app/node_modules ./node_modules
COPY --from=build /app/gateway/dist ./dist
# The web console the gateway serves at / (static files; CONSOLE_DIR defaults to /app/console/dist).
COPY --from=build /app/console/dist ./console/dist

# subgraph: any subgraph of the registry (schema/subgraphs.ts), named by a build argument; nothing here changes when one
# is added. A package that needs more (a system library) ships its own subgraphs/<name>/Dockerfile, which
# `npm run registry-files` then builds it with.
#   docker build --target subgraph --build-arg SUBGRAPH=assets -t linepack-assets .
FROM build AS deps-subgraph
ARG SUBGRAPH
RUN test -f "subgraphs/${SUBGRAPH}/package.json" || { echo "--build-arg SUBGRAPH=<name>: one of the registry's subgraphs (schema/subgraphs.ts)" >&2; exit 1; } \
  && npm ci --omit=dev --no-audit --no-fund --ignore-scripts -w "@linepack/subgraph-${SUBGRAPH}" \
  && npx --yes patch-package@8.0.1 --error-on-fail \
  && node deploy/tools/prune-node-modules.mjs "subgraphs/${SUBGRAPH}/dist/main.js" node_modules
FROM runtime AS subgraph
ARG SUBGRAPH
COPY --from=deps-subgraph /app/node_modules ./node_modules
COPY --from=build /app/subgraphs/${SUBGRAPH}/dist ./dist
# Its own SDL, where the bundle reads it (LINEPACK_SCHEMA_DIR/../subgraphs/<name>/schema.graphql); it listens on the
# registry's port unless PORT says otherwise.
COPY --from=build /app/subgraphs/${SUBGRAPH}/schema.graphql ./subgraphs/${SUBGRAPH}/schema.graphql
