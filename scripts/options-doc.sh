#!/usr/bin/env bash
# Writes docs/options.md from the single command's option table (app/options/option_rows.cpp) and
# the table of WSClean's options in docs/imaging.md (app/wsclean/, between its markers). The tests
# OptionsDoc.TheCommittedDocIsTheTablesRendering and WscleanTable.TheDocsTableIsTheTables fail
# until the regenerated files are committed.
#   scripts/options-doc.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target gpuclean-options-doc >/dev/null
"$build/app/gpuclean-options-doc" > docs/options.md
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$build/app/gpuclean-options-doc" --wsclean > "$table"
python3 - "$table" <<'PY'
import sys
begin, end = "<!-- wsclean-options: begin -->\n", "<!-- wsclean-options: end -->"
doc = open("docs/imaging.md").read()
a, b = doc.index(begin) + len(begin), doc.index(end)
open("docs/imaging.md", "w").write(doc[:a] + open(sys.argv[1]).read() + doc[b:])
PY
echo "wrote docs/options.md and docs/imaging.md's WSClean table"
