# One image for every Linepack service; SERVICE picks which one runs
# (gateway, auth, assets, measurements, analytics, compliance).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production APOLLO_TELEMETRY_DISABLED=true
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema ./schema
ARG SERVICE=gateway
ENV SERVICE=${SERVICE}
USER node
CMD ["sh", "-c", "if [ \"$SERVICE\" = gateway ]; then exec node dist/gateway/src/main.js; else exec node dist/subgraphs/$SERVICE/src/main.js; fi"]
