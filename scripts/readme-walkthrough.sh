#!/usr/bin/env bash
# The README as a new user meets it: builds the service, starts it on a fresh embedded
# database, and runs every ```sh block of README.md in order, in one shell (variables set by one
# block are used by the next), then stops the service.
#
#   scripts/readme-walkthrough.sh [README.md]       # WALKTHROUGH_PORT (default 3917) picks the port
#
# A block preceded by `<!-- walkthrough: skip (why) -->` is not run (starting the service, the
# test suite, docker). A command that fails stops the walkthrough. Every curl call must answer
# 2xx, unless its command carries a comment with the expected status (`# 405, Allow: GET, HEAD`).
# Not part of `npm test`: it takes a few minutes and runs the CLI and the service for real.
set -euo pipefail
cd "$(dirname "$0")/.."
README=${1:-README.md}
PORT=${WALKTHROUGH_PORT:-3917}
WORK=$(mktemp -d)
chmod 755 "$WORK" # as root, the embedded PostgreSQL runs as the "postgres" user, which must reach its folder
API_LOG=$WORK/api.log
export PORT API_LOG DATA_DIR=$WORK/data LOG_LEVEL=info
unset DATABASE_URL SMTP_URL NODE_ENV
# The webhooks block registers a local receiver URL, as in "Local development" there.
export WEBHOOKS_ALLOW_PRIVATE_URLS=true

# ---- the blocks: one file each, named by their section
mkdir -p "$WORK/blocks"
node - "$README" "$WORK/blocks" <<'EOF'
const fs = require('fs');
const [readme, out] = process.argv.slice(2);
const lines = fs.readFileSync(readme, 'utf8').split('\n');
let section = '', skip = null, block = null, n = 0;
const index = [];
lines.forEach((line, i) => {
  if (block) {
    if (line.startsWith('```')) {
      const name = String(++n).padStart(2, '0');
      fs.writeFileSync(`${out}/${name}.sh`, block.join('\n') + '\n');
      index.push([name, block.start, skip ?? '', section].join('|'));
      block = null; skip = null;
    } else block.push(line);
    return;
  }
  const heading = /^#{2,4} (.*)/.exec(line);
  if (heading) section = heading[1];
  const marker = /^<!-- walkthrough: skip \(?(.*?)\)? ?-->/.exec(line);
  if (marker) skip = marker[1] || 'skipped';
  else if (/^```(sh|bash)\s*$/.test(line)) { block = []; block.start = i + 2; }
  else if (line.trim() !== '') skip = null;
});
fs.writeFileSync(`${out}/index.tsv`, index.join('\n') + '\n');
EOF

# ---- the service
ss -ltn | grep -q ":$PORT " && { echo "port $PORT is in use: set WALKTHROUGH_PORT" >&2; exit 1; }
echo "== build"
npm run build --silent
echo "== start: PORT=$PORT DATA_DIR=$DATA_DIR (log: $API_LOG)"
node dist/src/main.js >"$API_LOG" 2>&1 &
SERVICE=$!
stop_service() {
  if kill -0 "$SERVICE" 2>/dev/null; then
    kill -TERM "$SERVICE"
    wait "$SERVICE" || true
  fi
  # The embedded PostgreSQL of this data folder must be gone with the service.
  local left
  left=$(pgrep -f -- "-D $DATA_DIR" || true)
  if [ -n "$left" ]; then
    echo "!! PostgreSQL of $DATA_DIR still running (pid $left) after the service stopped: stopping it" >&2
    kill -TERM $left || true
  fi
}
trap stop_service EXIT
for _ in $(seq 120); do
  grep -q 'Seller Payments API ready' "$API_LOG" && break
  kill -0 "$SERVICE" 2>/dev/null || { cat "$API_LOG" >&2; exit 1; }
  sleep 1
done
grep -q 'Seller Payments API ready' "$API_LOG" || { echo 'the service did not start within 120 s' >&2; exit 1; }

# ---- curl as the blocks call it, plus a check of each answer's status
BLOCK_FILE=
curl() {
  local status_file rc=0 status expected
  status_file=$(mktemp -p "$WORK")
  command curl -w '%{stderr}\n@@status %{http_code}\n' "$@" 2>"$status_file" || rc=$?
  grep -v '^@@status \|^$' "$status_file" >&2 || true
  status=$(sed -n 's/^@@status //p' "$status_file" | tail -1)
  rm -f "$status_file"
  if [ "$rc" -ne 0 ]; then
    echo "!! curl failed (exit $rc): curl $*" >&2
    return "$rc"
  fi
  # The expected status: a "# NNN" comment in the command (its backslash-continued lines).
  expected=$(node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
    const at = Number(process.argv[2]) - 1;
    let first = at, last = at;
    while (first > 0 && lines[first - 1].endsWith("\\")) first--;
    while (last < lines.length - 1 && lines[last].endsWith("\\")) last++;
    const m = /#\s*(\d{3})\b/.exec(lines.slice(first, last + 1).join("\n"));
    console.log(m ? m[1] : "2xx");' "$BLOCK_FILE" "${BASH_LINENO[0]}")
  if [[ "$expected" == 2xx && "$status" == 2?? ]] || [ "$status" = "$expected" ]; then
    echo "$status" >>"$WORK/statuses"
    return 0
  fi
  echo >&2; echo "!! HTTP $status, expected $expected: curl $*" >&2
  return 22
}

# ---- the blocks, in order
declare -a RESULTS=()
FAILED=
RAN=0
while IFS='|' read -r -u 3 name line skip section; do
  [ -n "$name" ] || continue
  label="$name  line $line  [$section]"
  if [ -n "$FAILED" ]; then
    RESULTS+=("NOT RUN  $label")
    continue
  fi
  if [ -n "$skip" ]; then
    RESULTS+=("SKIP     $label: $skip")
    continue
  fi
  echo
  echo "== block $label"
  BLOCK_FILE=$WORK/blocks/$name.sh
  : >"$WORK/statuses"
  set +e
  (
    set -eE
    trap 'echo "!! block $name failed at README line $((line + LINENO - 1))" >&2' ERR
    # shellcheck disable=SC1090
    source "$BLOCK_FILE" </dev/null
    # The block ran in a subshell (so a failure stops it, not the walkthrough): hand its variables on.
    for v in $(compgen -v | grep '^[A-Z][A-Z0-9_]*$' | grep -v '^BASH\|^FUNCNAME$\|^LINENO$\|^RANDOM$\|^SRANDOM$\|^SECONDS$\|^PIPESTATUS$\|^SHELLOPTS$\|^EUID$\|^UID$\|^PPID$\|^GROUPS$\|^EPOCH\|^HIST\|^OPT\|^DIRSTACK$\|^COMP\|^IFS$\|^PS[0-9]$\|^RESULTS$\|^FAILED$\|^RAN$'); do
      declare -p "$v"
    done >"$WORK/vars"
  )
  rc=$?
  set -e
  RAN=$((RAN + 1))
  if [ "$rc" -eq 0 ]; then
    # shellcheck disable=SC1091
    source "$WORK/vars"
    RESULTS+=("PASS     $label: $(sort "$WORK/statuses" | uniq -c | awk '{printf "%s%s×%s", sep ? sep : "HTTP ", $2, $1; sep=" "} END {if (!NR) print "no HTTP calls"}')")
  else
    FAILED=1
    RESULTS+=("FAIL     $label")
  fi
done 3<"$WORK/blocks/index.tsv"

echo
echo "== stop"
trap - EXIT
stop_service
echo
echo "== README walkthrough ($README)"
printf '%s\n' "${RESULTS[@]}"
if [ -n "$FAILED" ] || [ "$RAN" -eq 0 ]; then
  echo "FAILED (service log: $API_LOG)"
  exit 1
fi
rm -rf "$WORK"
echo "PASSED"
