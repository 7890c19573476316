# The image the container sandbox backends (`--sandbox podman|docker`) run MCP servers and command agents in:
# Node 20 (the servers' runtime is mounted from the host read-only, so only Node itself comes from here) and
# git (the git namespace's server runs it). Build it once per machine, from any folder:
#   podman build -f deploy/sandbox.Dockerfile -t mcpbench-sandbox deploy     # or docker build ...
# Another image: MCPBENCH_SANDBOX_IMAGE (it needs `node` on its PATH; `git` for the git namespace).
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
CMD ["node"]
