#!/bin/sh
# report_readonly.sh FUSEBOX WORKDIR: `fusebox report` only reads. A 0-byte file is refused with
# its name and left as it was; a read-only session in a read-only folder is reported, and no file
# appears next to it (as root, the report runs as "nobody" so that the permissions apply).
set -u
fusebox=$1 work=$2
rm -rf "$work" && mkdir -p "$work/ro" || exit 1
: > "$work/empty.fbs"
if "$fusebox" report "$work/empty.fbs" -o "$work/empty.html" 2> "$work/err.txt"; then echo "empty file accepted" >&2; exit 1; fi
cat "$work/err.txt"
grep -q "empty.fbs: not a Fusebox session file (the file is empty)" "$work/err.txt" || exit 1
[ ! -s "$work/empty.fbs" ] && [ ! -e "$work/empty.fbs-wal" ] && [ ! -e "$work/empty.fbs-journal" ] || { echo "empty file changed" >&2; exit 1; }
"$fusebox" compile mlp --until schedule --session "$work/ro/s.fbs" > /dev/null || exit 1
chmod 0444 "$work/ro/s.fbs" && chmod 0555 "$work/ro" && chmod 0777 "$work"
before=$(ls -A "$work/ro")
as=""
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then as="setpriv --reuid=65534 --regid=65534 --clear-groups"; fi
$as "$fusebox" report "$work/ro/s.fbs" -o "$work/report.html" || { chmod 0755 "$work/ro"; exit 1; }
after=$(ls -A "$work/ro")
chmod 0755 "$work/ro"
[ "$before" = "$after" ] || { echo "files appeared beside the session: $after" >&2; exit 1; }
echo "read-only session reported, nothing left behind"
