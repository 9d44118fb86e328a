#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's memory against the profiles it loads: iobatchd started on a
# state dir holding a profiles.json of N profiles (N = 0 .. the cap,
# AGENT_PROFILES_MAX = 4096), its RSS once it answers.  The soak's agent
# RSS follows its saved profiles (bench/results/soak); this says what it
# comes to at the cap, so that the growth is known to be bounded.
# The profiles are made up: keys like the shim's (an image digest and the
# command, about 90 bytes), one namespace.  No container runs.
# Writes bench/results/profiles-rss.json.
# Usage: bench/profiles-rss.sh   (env: COUNTS="0 1024 2048 4096" REPS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNTS=${COUNTS:-"0 1024 2048 4096"}
REPS=${REPS:-3}
B=${B:-build}
for f in iobatchd iobatchctl; do
  [ -x "$B/bin/$f" ] || { echo "profiles-rss: build first (make): $B/bin/$f" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "profiles-rss: jq is not installed (scripts/install-deps.sh)" >&2; exit 1; }
T=$(mktemp -d /tmp/iobprof.XXXXXX)
PID=
trap '[ -z "$PID" ] || kill "$PID" 2>/dev/null; rm -rf "$T"' EXIT
mkdir -m 700 "$T/run"
out=bench/results/profiles-rss.json

rows=()
for n in $COUNTS; do
  st=$T/state-$n
  mkdir -p "$st"
  jq -n --argjson n "$n" '{version: 1, profiles: {}, namespaces: {"default": ([range($n)] | map({
      key: ("sha256:\(. * 7919 | tostring | ("0" * (64 - length)) + .)/bin/sh -c run-job --id \(.)"),
      value: {class: "seq-write", confidence: 1, solo_s: 1.5, solo_bps: 1.2e8, runs: 1, updated: (1700000000 + .)}
    }) | from_entries)}}' >"$st/profiles.json"
  for r in $(seq 1 "$REPS"); do
    printf 'socket = %s\nstate_dir = %s\nsample_period = 1s\n' "$T/run/agent.sock" "$st" >"$T/agent.conf"
    "$B/bin/iobatchd" -c "$T/agent.conf" >"$T/agent.log" 2>&1 &
    PID=$!
    up=0
    for _ in $(seq 1 100); do
      "$B/bin/iobatchctl" --socket "$T/run/agent.sock" status >/dev/null 2>&1 && { up=1; break; }
      sleep 0.05
    done
    [ $up = 1 ] || { echo "profiles-rss: iobatchd did not start:" >&2; cat "$T/agent.log" >&2; exit 1; }
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status")
    kill "$PID"; wait "$PID" 2>/dev/null || true
    PID=
    grep -q "kept aside" "$T/agent.log" && { echo "profiles-rss: the agent refused $n profiles:" >&2; cat "$T/agent.log" >&2; exit 1; }
    rows+=("{\"profiles\": $n, \"rep\": $r, \"rss_kb\": $rss}")
    echo "profiles-rss: $n profiles, rep $r: $rss kB"
  done
done
printf '%s\n' "${rows[@]}" | jq -s --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --arg commit "$(git log -1 --format=%h 2>/dev/null)" '
  {date: $date, commit: $commit, command: "bench/profiles-rss.sh", runs: .,
   median_rss_kb: (group_by(.profiles) | map({key: (.[0].profiles | tostring),
     value: (map(.rss_kb) | sort | .[length / 2 | floor])}) | from_entries)}
  | .kb_per_profile = (if (.median_rss_kb | length) > 1 then
      ((.median_rss_kb | to_entries | max_by(.key | tonumber)) as $hi
       | (.median_rss_kb | to_entries | min_by(.key | tonumber)) as $lo
       | if ($hi.key | tonumber) > ($lo.key | tonumber) then
           (($hi.value - $lo.value) / (($hi.key | tonumber) - ($lo.key | tonumber)) * 100 | round / 100)
         else null end) else null end)' >"$out"
jq -c '{median_rss_kb, kb_per_profile}' "$out"
echo "profiles-rss: wrote $out"
