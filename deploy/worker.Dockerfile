# A queue worker: `mcpbench worker --queue redis://...` (README: "Running across machines"). Build it from the
# repository root (test/deploy.test.ts builds and runs it with podman):
#   docker build -f deploy/worker.Dockerfile -t mcpbench-worker .
#   podman build -f deploy/worker.Dockerfile --ignorefile deploy/worker.Dockerfile.dockerignore -t mcpbench-worker .
# Behind a TLS-intercepting proxy, give npm its CA: --secret id=ca,src=/path/to/ca-bundle.pem
# Workers and the coordinator must run the same mcpbench version: build this image from the same commit.
FROM node:20-bookworm-slim AS build
WORKDIR /opt/mcpbench
COPY . .
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --no-audit --no-fund && npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# git: the git namespace works on real repositories.
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/mcpbench
COPY --from=build /opt/mcpbench/package.json ./
COPY --from=build /opt/mcpbench/dist ./dist
COPY --from=build /opt/mcpbench/schemas ./schemas
COPY --from=build /opt/mcpbench/node_modules ./node_modules
USER node
# The servers run as plain processes: the container is their boundary (bubblewrap would need user namespaces).
# Agent keys (OPENAI_API_KEY ...) and MCPBENCH_SET_KEY come from the container's environment, never from Redis.
ENTRYPOINT ["node", "dist/cli.js", "worker", "--sandbox", "process"]
CMD ["--queue", "redis://redis:6379", "--concurrency", "2"]
