#!/usr/bin/env bash
# Distilled prompts on a small model (issue 35): the paper's prompt against a prompt distilled
# from the model's own runs, Gemma 3 270M on a llama.cpp server, 100 HotpotQA distractor
# questions over a ZIM of their paragraphs; see bench/README.md. Resumable: run it again and
# each eval goes on where it stopped (the cache answers what was asked before).
#
#   bash bench/distill_gemma.sh [PORT] [OUT]     # server: ../shared/tools/llama-server PORT &
set -eu
port=${1:-8765}
out=${2:-/tmp/react-cli-distill-bench}
data=${DISTILL_DATA:-$(dirname "$0")/../../shared/data/hotpotqa/hotpot_dev_distractor_first100.json}
mkdir -p "$out"
export REACT_CLI_HOME="$out/home"
until curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; do sleep 10; done
[ -f "$out/hotpot100.zim" ] || react-cli wiki build-zim "$data" "$out/hotpot100.zim"
run=(-m gemma-3-270m --base-url "http://127.0.0.1:$port/v1" --api completions
     --wiki "zim:$out/hotpot100.zim" --concurrency 1 --cache)
evaluate() {  # FOLDER ARGS...: a new eval, or the one in FOLDER resumed
  local folder=$1; shift
  if [ -f "$folder/summary.json" ]; then
    react-cli eval --resume "$folder" "${run[@]}" || true
  else
    react-cli eval "$data" --out "$folder" "${run[@]}" "$@" || true
  fi
}
evaluate "$out/paper-train" --limit 50
react-cli distill "$out/paper-train" --explain --out "$out/distilled.txt" 2> "$out/explain.txt"
# the two test-half evals side by side, so that whenever they stop they cover the same questions;
# unstreamed: llama-cpp-python's server ends a running stream when another request arrives
run+=(--no-stream)
evaluate "$out/paper-test" --offset 50 &
evaluate "$out/distilled-test" --offset 50 --prompt "$out/distilled.txt" &
wait
react-cli eval compare "$out/paper-test" "$out/distilled-test"
