#!/bin/sh
# tests/hil/view/npm_setup.sh DIR: installs the view tests' npm packages (ws, Foxglove's
# @foxglove/ws-protocol client) into DIR, once. Never fails the run: without a registry the tests
# that need the packages skip and say why.
dir=$1
if [ -f "$dir/node_modules/ws/package.json" ] && [ -f "$dir/node_modules/@foxglove/ws-protocol/package.json" ]; then
  echo "npm packages present in $dir"
  exit 0
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"name":"achilles-view-tests","private":true}' > "$dir/package.json"
if npm install --prefix "$dir" --no-audit --no-fund --loglevel=error ws@8 @foxglove/ws-protocol@0.8; then
  echo "npm packages installed in $dir"
else
  echo "WARNING: npm install failed: the view's protocol and browser tests will skip"
fi
exit 0
