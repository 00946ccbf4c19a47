#!/usr/bin/env bash
# How search does on phrasings it never saw: ranks each development set with that set left out
# of what codegen counts (`codegen --leave-out`), then regenerates the catalog as it was.
#
#   native-transport/search/leave-one-set-out.sh [devN ...]
#
# The default sets are dev13 to dev31 but dev24 (twelve phrasings of one action: left out, that
# action would have no phrasing at all). Prints each set's recall@1 and recall@3 and their
# total; the held-out halves are never ranked. About five minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/../.."

restore() { cargo run -q -p bevy_mcp_codegen >/dev/null; }
trap restore EXIT

sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
  for number in $(seq 13 31); do
    [ "$number" = 24 ] || sets+=("dev$number")
  done
fi

results=""
for set in "${sets[@]}"; do
  cargo run -q -p bevy_mcp_codegen -- --leave-out "search-phrasings-$set.json" >/dev/null
  # A set may hold phrases about either world; each run ranks those of one.
  for world in sandbox breakout; do
    line=$(SEARCH_WORLD=$world SEARCH_SET=$set SEARCH_TOP=3 cargo test -q \
      -p bevy_mcp_contract_tests --test contract world_search::print_tuning_scores \
      -- --ignored --nocapture 2>&1 >/dev/null | grep '^RECALL' || true)
    if [ -z "$line" ]; then
      echo "$set ($world): no recall line; is $set a development set?" >&2
      exit 1
    fi
    # RECALL <n> phrases: @1 <r1> @3 <r3>
    read -r _ phrases _ _ first _ third <<<"$line"
    if [ "$phrases" != 0 ]; then
      echo "$set ($world): $phrases phrases, recall@1 $first, recall@3 $third"
      results+="$phrases $first $third"$'\n'
    fi
  done
done

awk 'NF == 3 { n += $1; one += $1 * $2; three += $1 * $3 }
     END { printf "all: %d phrases, recall@1 %.4f, recall@3 %.4f\n", n, one / n, three / n }' \
  <<<"$results"
