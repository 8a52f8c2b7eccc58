# ACMS context service on the embedded default backends (SQLite, in-process vectors, Oxigraph).
#
#   docker build -t acms .
#   docker run -p 50051:50051 -v acms-data:/data \
#     -v "$PWD/keys.json:/run/acms/keys.json:ro" -e ACMS_KEYS_FILE=/run/acms/keys.json acms
#
# The container listens on 0.0.0.0, so it REQUIRES keys (ACMS_KEYS_FILE or ACMS_KEYS): without them the
# server refuses to start with one line, by design (see docs/operating.md, "API keys").

FROM node:20-bookworm-slim AS deps
WORKDIR /app
# Toolchain for native modules (better-sqlite3, usearch) when no prebuilt binary matches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# onnxruntime-node's install script would download CUDA libraries (unreachable here): npm_config_onnxruntime_node_install=skip
# on each npm ci skips it (the CPU binaries ship in the package); an env variable, so npx calls print no warning.
COPY package.json package-lock.json ./
# The root package's postinstall compiles the embedded keyword search's SQLite extension (BM25 from a scope's
# own statistics) with the toolchain above into native/build, which the runtime stage copies.
COPY scripts/build-native.mjs ./scripts/build-native.mjs
COPY native/acms-fts5 ./native/acms-fts5
RUN npm_config_onnxruntime_node_install=skip npm ci --omit=dev --no-audit --no-fund

# The compiled runtime: esbuild (a dev dependency) bundles src/ and gen/ into dist/; only dist/ ships
# (test/cli/dockerfile.test.ts checks this stage copies every source scripts/build.mjs reads).
FROM deps AS build
RUN npm_config_onnxruntime_node_install=skip npm ci --no-audit --no-fund
COPY scripts ./scripts
COPY gen ./gen
COPY src ./src
# The server re-exports the TypeScript client package from its sources.
COPY clients/typescript/src ./clients/typescript/src
# The operator's console (Vite, a dev dependency, builds it into dist/console; /console serves it).
COPY console ./console
RUN node scripts/build.mjs --force

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    ACMS_HOST=0.0.0.0 \
    ACMS_PORT=50051 \
    ACMS_DATA_DIR=/data
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/native/build ./native/build
COPY package.json package-lock.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
# GET /openapi.json serves it (ACMS_OPENAPI_FILE, default openapi/acms.openapi.json under the working directory).
COPY openapi/acms.openapi.json ./openapi/acms.openapi.json
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 50051
# Health needs no key; Connect's JSON form over HTTP/1.1 needs nothing but node.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.ACMS_PORT||50051)+'/grpc.health.v1.Health/Check',{method:'POST',headers:{'content-type':'application/json'},body:'{}'}).then(r=>r.json()).then(j=>process.exit(j.status==='SERVING'?0:1),()=>process.exit(1))"
# Node runs as PID 1 and handles SIGTERM itself: `docker stop` drains in-flight calls and exits 0.
ENTRYPOINT ["node", "bin/acms.js"]
CMD ["serve"]
