#!/bin/sh
# A printed report's tables across pages (views/pdf_report.cpp drawHtmlPages): every page a table
# continues on repeats its header row, and no row is drawn twice (the row above a cut used to be
# drawn again, clipped: invisible, but found twice by search and copy). gpt2_block's training
# session has decision and kernel tables several pages long.
#   pdf_table_pages.sh FUSEBOX WORKDIR
set -eu
FUSEBOX=$1 DIR=$2
command -v pdftotext >/dev/null || { echo "pdftotext (poppler-utils) is not installed"; exit 1; }
rm -rf "$DIR" && mkdir -p "$DIR"
"$FUSEBOX" compile gpt2_block --train --session "$DIR/s.fbs" >/dev/null
QT_QPA_PLATFORM=offscreen "$FUSEBOX" report "$DIR/s.fbs" -o "$DIR/r.pdf" >/dev/null 2>&1
pdftotext -layout "$DIR/r.pdf" "$DIR/r.txt"
# The decision table's header names its last column "score (bytes)"; its rows are "graph nA + nB".
headers=$(grep -c "score (bytes)" "$DIR/r.txt")
rows=$(grep -cE "^ *(forward|backward) +n[0-9]+ \+ n[0-9]+" "$DIR/r.txt")
distinct=$(grep -E "^ *(forward|backward) +n[0-9]+ \+ n[0-9]+" "$DIR/r.txt" | sed 's/^ *//' | sort -u | wc -l)
# Pages holding decision rows, and how many of them lack the header row.
read -r pages bare <<EOT
$(awk 'BEGIN { RS = "\f" } /(forward|backward) +n[0-9]+ \+ n[0-9]+/ { n++; if ($0 !~ /score \(bytes\)/) b++ } END { print n + 0, b + 0 }' "$DIR/r.txt")
EOT
echo "decision rows $rows ($distinct distinct) on $pages pages, $bare of them without the header row ($headers header rows)"
[ "$pages" -ge 2 ] || { echo "FAIL: expected a decision table longer than a page"; exit 1; }
[ "$bare" -eq 0 ] || { echo "FAIL: a continued table page lacks its header row"; exit 1; }
[ "$rows" -eq "$distinct" ] || { echo "FAIL: rows drawn twice"; exit 1; }
echo "ok"
