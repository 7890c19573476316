#!/usr/bin/env bash
# Makes a working container engine on a machine like the development and CI machines (root, cgroups
# v1/hybrid, no image registry reachable, Debian's archive reachable), and the images mcpbench's container
# backends use:
#   1. Debian's podman with the runc runtime, with container limits that fit the host's;
#   2. node:<major>-bookworm-slim, made locally as the registry's image is (Debian bookworm's minimal
#      system from Debian's archive, with this machine's Node and npm in /usr/local), unless one is there;
#   3. mcpbench-sandbox, the sandbox image (deploy/sandbox.Dockerfile: Node and git), built from (2).
# About a minute and a half the first time (debootstrap ~45 s, apt in the build ~20 s); a few seconds after.
# Idempotent; exits non-zero with the step that failed. CI (.ci/run) calls it.
#
#   scripts/container-engine.sh
#   podman run --rm --network none mcpbench-sandbox git --version
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "container-engine: $*" >&2; }
need=()
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  step "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; }
fi
# crun refuses cgroups in hybrid mode, and the default ulimits exceed what a nested container may set.
nproc_h=$(ulimit -Hu); nofile_h=$(ulimit -Hn)
lim() { local v=$1 cap=$2; [ "$v" = unlimited ] && echo "$cap" || { [ "$v" -lt "$cap" ] && echo "$v" || echo "$cap"; }; }
mkdir -p /etc/containers
cat > /etc/containers/containers.conf <<CONF
[containers]
default_ulimits = ["nproc=$(lim "$nproc_h" 4096):$(lim "$nproc_h" 4096)", "nofile=$(lim "$nofile_h" 4096):$(lim "$nofile_h" 4096)"]
[engine]
runtime = "runc"
CONF

major=$(node -p 'process.versions.node.split(".")[0]')
base=node:$major-bookworm-slim
# An image of that name without apt (an earlier, smaller stand-in) is made again.
if ! podman image exists "$base" || ! podman run --rm --network none --pull never "$base" sh -c 'command -v apt-get' >/dev/null 2>&1; then
  step "making $base: Debian bookworm (minbase) with this machine's Node $(node --version)"
  root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
  node_bin=$(command -v node)
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  cp "$node_bin" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  chroot "$root" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node' >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$(node -p process.versions.node)" --change 'CMD ["node"]' - "$base" >/dev/null
  rm -rf "$root"; trap - EXIT
fi
step "building mcpbench-sandbox (deploy/sandbox.Dockerfile)"
podman build --quiet -f deploy/sandbox.Dockerfile -t mcpbench-sandbox deploy >/dev/null
out=$(podman run --rm --network none --pull never mcpbench-sandbox sh -c 'echo "node $(node --version), $(git --version)"' 2>&1) || { step "podman run failed: $out"; exit 1; }
step "ok: $out in mcpbench-sandbox (runtime runc)"
