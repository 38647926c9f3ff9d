#!/usr/bin/env bash
# Builds the .deb, unpacks it into a scratch root (dpkg -x, no install) and runs the packaged
# binary from there: it must list the models and run the demo on the CPU with checked numerics.
set -euo pipefail
build=$1
cmake --build "$build" --target package --parallel 2 > "$build/package_build.log" 2>&1 || { tail -30 "$build/package_build.log"; exit 1; }
deb=$(ls -t "$build"/fusebox_*_amd64.deb | head -1)
echo "package: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --field "$deb" Package Version Depends
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
for f in usr/bin/fusebox usr/share/applications/org.fusebox.Fusebox.desktop usr/share/metainfo/org.fusebox.Fusebox.metainfo.xml \
         usr/share/icons/hicolor/scalable/apps/org.fusebox.Fusebox.svg; do
  [ -e "$root/$f" ] || { echo "missing from the package: $f"; exit 1; }
done
if command -v desktop-file-validate > /dev/null; then desktop-file-validate "$root/usr/share/applications/org.fusebox.Fusebox.desktop"; fi
if command -v appstreamcli > /dev/null; then appstreamcli validate --no-net "$root/usr/share/metainfo/org.fusebox.Fusebox.metainfo.xml"; fi
"$root/usr/bin/fusebox" --version
"$root/usr/bin/fusebox" models
HOME="$root" "$root/usr/bin/fusebox" run mlp --target cpu --iters 3
echo "packaged fusebox runs"
