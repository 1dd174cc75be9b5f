#!/usr/bin/env bash
# Installs what rastra's tests and benchmark need on a fresh Debian machine:
# lavapipe (Mesa's CPU Vulkan driver, the reference renderer), the Vulkan loader,
# the reference assets (assimp test models, glmark2 models), and an X server with no
# screen (Xvfb) plus libxcb for the window-presentation test.
set -euo pipefail
pkgs=(mesa-vulkan-drivers libvulkan1 assimp-testmodels glmark2-data xvfb libxcb1)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
