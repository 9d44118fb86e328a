#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Agent overhead (issue 7, section 4):
#  1. CPU of iobatchd sampling N registered cgroups at 1 Hz (N = 0, 100,
#     1000): fixture cgroup directories under a temp root (agent option
#     `cgroup_root`), registered as running containers; utime+stime of the
#     agent over WINDOW seconds, and its RSS; once per SAMPLER/LATENCY in
#     SAMPLERS (agent options `sampler`: auto = what the host offers, io.stat
#     forced reads the fixtures' io.stat even on a host without the io
#     controller, bpf = bytes and requests from the BPF latency program's
#     map, no file read; and `latency_source`: off, bpf = the program's
#     map read once per window, batched, on top of the files, pressure).
#     The fixtures are directories, not cgroups the block layer charges:
#     the agent makes each one's zeroed map entry (one per fixture where
#     the program keys them by the fixture's directory; on a hybrid host
#     all share the stand-in's blkio cgroup, so one) and the window's
#     batched read copies them all, as it would real ones.
#     REAL=1: real cgroups instead of the fixtures: each container a
#     cgroup in every hierarchy the sampler reads (the cgroup2 mount, and
#     the v1 blkio one where there is one) holding a process of its own
#     that writes 4 KiB with O_DIRECT every REAL_IO_S seconds (to a file
#     under REAL_DIR, which must take O_DIRECT: not tmpfs) so that the
#     block layer charges it; registered by pid and cgroup, running, and
#     no `cgroup_root`.  Its rows say "real": true.
#     PROFILE=callgrind: also an instruction profile of the agent over
#     PROFILE_WINDOWS samples of PROFILE_COUNT fixtures, for each of
#     SAMPLERS (valgrind; user space only: a system call counts as one
#     instruction, so the table's CPU is the measure), top entries in
#     OUT_DIR/agent-overhead-profile.txt.
#  2. Added latency of an uncontended admission: `ctr run --rm ... /bin/true`
#     with our shim and an idle agent (default config, and batch_window = 0)
#     vs our shim with no agent (it fails open) vs the runc shim, REPS
#     interleaved runs, medians.
# Writes bench/results/agent-overhead.json and agent-overhead.md; a part that
# cannot run is reported as "not run: <reason>".
# Usage: bench/agent-overhead.sh   (env: COUNTS="0 100 1000" WINDOW=60 REPS=20
#                                   SAMPLERS="auto/off io.stat/off auto/bpf bpf/bpf"
#                                   REAL=1 REAL_DIR=/var/tmp REAL_IO_S=1
#                                   B=build
#                                   OUT_DIR=bench/results
#                                   PROFILE=callgrind PROFILE_COUNT=200
#                                   PROFILE_WINDOWS=10)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
COUNTS=${COUNTS:-"0 100 1000"}
WINDOW=${WINDOW:-60}
REPS=${REPS:-20}
SAMPLERS=${SAMPLERS:-"auto/off io.stat/off auto/bpf bpf/bpf"}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
PROFILE=${PROFILE:-}
PROFILE_COUNT=${PROFILE_COUNT:-200}
PROFILE_WINDOWS=${PROFILE_WINDOWS:-10}
REAL=${REAL:-0}
REAL_DIR=${REAL_DIR:-/var/tmp}
REAL_IO_S=${REAL_IO_S:-1}
CMDLINE=$(for v in COUNTS WINDOW REPS SAMPLERS REAL; do
  [ -z "${!v:-}" ] || printf '%s="%s" ' "$v" "${!v}"
done)"bench/agent-overhead.sh $*"
AGENT=$TOP/$B/bin/iobatchd
FIXTURE=$TOP/$B/bench/iob-agent-fixture
SHIM=$TOP/$B/bin/containerd-shim-iobatch-v2
CTL=$TOP/$B/bin/iobatchctl
[ "$(id -u)" = 0 ] || { echo "agent-overhead: must run as root" >&2; exit 1; }
command -v jq >/dev/null || { echo "agent-overhead: 'jq' not found" >&2; exit 1; }
source tests/integration/lib/common.sh # EXIT trap runs every at_exit in reverse
trap 'exit 130' INT TERM
source bench/agent/lib.sh
START=$(date -u +%FT%TZ)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$OUT_DIR"
HZ=$(getconf CLK_TCK)

# ---- 1. sampling CPU --------------------------------------------------------
sampling_json='{"status": "not run"}'
if why=$(agent_unavailable); then
  sampling_json=$(jq -nc --arg s "not run: $why" '{status: $s}')
  echo "agent-overhead: sampling not run: $why"
else
  # One sleeping process stands in for each container's pid: the procfs
  # sampler (auto on a hybrid host) reads /proc/PID/io of the pids in
  # cgroup.procs; the io.stat one the fixture's io.stat.
  sleep 100000 &
  SLEEPER=$!
  at_exit "kill $SLEEPER"
  # On a host whose io controller is v1 blkio the agent keys a container's
  # latency by its pid's blkio cgroup (agent/sampler.c, lat_key_dir): give
  # the stand-in its own, where no I/O is charged, not the root's (which
  # the host's own writeback keeps busy: every fixture would look like a
  # container doing I/O).
  BLKIO=$(awk '$8 == "cgroup" && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
  if [ -n "$BLKIO" ]; then
    mkdir -p "$BLKIO/iob-bench-$$"
    echo "$SLEEPER" >"$BLKIO/iob-bench-$$/cgroup.procs"
    at_exit "kill $SLEEPER 2>/dev/null; wait $SLEEPER 2>/dev/null; rmdir '$BLKIO/iob-bench-$$'"
  fi
  rows=()
  for n in $COUNTS; do
   for cfg in $SAMPLERS; do
    smp=${cfg%%/*} lat=off
    [ "$cfg" = "$smp" ] || lat=${cfg#*/}
    if [ "$REAL" = 1 ]; then
      [ -n "${REAL_PIDS[$n]:-}" ] || real_tree "$n"
      agent_start "$IOB_T/agent-$n-$smp-$lat" "sample_period = 1s
sampler = $smp
latency_source = $lat"
      real_register "$AGENT_SOCK" "$n"
    else
      root=$IOB_T/cg-$n
      [ -d "$root" ] || fixture_tree "$root" "$n" "$SLEEPER"
      agent_start "$IOB_T/agent-$n-$smp-$lat" "sample_period = 1s
sampler = $smp
latency_source = $lat
cgroup_root = $root"
      if [ "$n" -gt 0 ]; then "$FIXTURE" register "$AGENT_SOCK" "$n" "$SLEEPER"; fi
    fi
    read -r known sampler < <("$FIXTURE" status "$AGENT_SOCK")
    latency=$("$CTL" --socket "$AGENT_SOCK" status --json | jq -r .latency_source)
    sleep 3 # first samples, baselines
    t0=$(proc_ticks "$AGENT_PID")
    sleep "$WINDOW"
    t1=$(proc_ticks "$AGENT_PID")
    read -r known_end _ < <("$FIXTURE" status "$AGENT_SOCK")
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$AGENT_PID/status")
    # with REAL=1: how many wrote in the last window, as the agent saw it
    with_io=$("$CTL" --socket "$AGENT_SOCK" status --json | jq '[.containers[] | select(.write_bps > 0)] | length')
    agent_stop
    cpu_ms=$(((t1 - t0) * 1000 / HZ))
    rows+=("$(jq -nc --argjson n "$n" --argjson known "$known" --argjson known_end "$known_end" \
      --arg sampler "$sampler" --argjson cpu_ms "$cpu_ms" --argjson window "$WINDOW" \
      --argjson rss "$rss" --argjson hz "$HZ" --arg pref "$smp" --arg lat "$lat" \
      --arg latency "$latency" --argjson real "$([ "$REAL" = 1 ] && echo true || echo false)" \
      --argjson with_io "$with_io" \
      '{cgroups: $n, real: $real, writing_in_last_window: $with_io, registered: $known, registered_at_end: $known_end, sampler: $sampler,
        sampler_option: $pref, latency_source_option: $lat, latency_source: $latency,
        window_s: $window, cpu_ms: $cpu_ms, cpu_percent: ($cpu_ms / $window / 10),
        cpu_us_per_cgroup_sample: (if $n > 0 then $cpu_ms * 1000 / $window / $n else null end),
        rss_kib: $rss, tick_ms: (1000 / $hz)}')")
    echo "agent-overhead: $n $([ "$REAL" = 1 ] && echo real || echo fixture) cgroups ($known registered, $known_end at the end, $sampler, latency $latency): ${cpu_ms} ms CPU in ${WINDOW} s, RSS ${rss} KiB"
   done
  done
  sampling_json=$(printf '%s\n' "${rows[@]}" | jq -sc '{status: "run", runs: .}')
fi

# ---- 1b. instruction profile (PROFILE=callgrind) -----------------------------
# Registering is slow under valgrind (a thousand time out): PROFILE_COUNT.
# Counting starts after the registrations and the first samples
# (callgrind_control -z), and covers PROFILE_WINDOWS samples.
if [ "$PROFILE" = callgrind ] && [ -n "${SLEEPER:-}" ]; then
  command -v valgrind >/dev/null || { echo "agent-overhead: PROFILE=callgrind needs valgrind" >&2; exit 1; }
  prof_out=$OUT_DIR/agent-overhead-profile.txt
  : >"$prof_out"
  root=$IOB_T/cg-prof
  fixture_tree "$root" "$PROFILE_COUNT" "$SLEEPER"
  for cfg in $SAMPLERS; do
    smp=${cfg%%/*} lat=off
    [ "$cfg" = "$smp" ] || lat=${cfg#*/}
    pd=$IOB_T/prof-$smp-$lat
    install -d -m 0700 "$pd" "$pd/state"
    printf 'socket = %s\nstate_dir = %s\nsample_period = 1s\nsampler = %s\nlatency_source = %s\ncgroup_root = %s\n' \
      "$pd/agent.sock" "$pd/state" "$smp" "$lat" "$root" >"$pd/iobatchd.conf"
    valgrind --tool=callgrind --callgrind-out-file="$pd/callgrind.out" \
      "$AGENT" --config "$pd/iobatchd.conf" >"$pd/agent.log" 2>&1 &
    AGENT_PID=$!
    at_exit "agent_stop"
    for i in $(seq 1 600); do [ -S "$pd/agent.sock" ] && break; sleep 0.1; done
    "$FIXTURE" register "$pd/agent.sock" "$PROFILE_COUNT" "$SLEEPER"
    sleep 4
    callgrind_control -z "$AGENT_PID" >/dev/null
    sleep "$PROFILE_WINDOWS"
    # a dump now (callgrind.out.1): the windows without the shutdown
    callgrind_control -d "$AGENT_PID" >/dev/null
    for i in $(seq 1 100); do [ -s "$pd/callgrind.out.1" ] && break; sleep 0.1; done
    agent_stop
    total=$(callgrind_annotate "$pd/callgrind.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ { gsub(",", "", $1); print $1 }')
    {
      echo "== sampler = $smp, latency_source = $lat: $PROFILE_COUNT fixture cgroups, $PROFILE_WINDOWS windows," \
        "$total instructions ($((total / PROFILE_WINDOWS / PROFILE_COUNT)) per cgroup sample), inclusive:"
      callgrind_annotate --inclusive=yes "$pd/callgrind.out.1" 2>/dev/null |
        grep -E '^ *[0-9,]+ \( *[0-9.]+%\) +[^ ]' | grep -v 'PROGRAM TOTALS' |
        grep -vE 'libc-start|libc_start_call_main|below main|ld-linux|agent/main.c:main|iob_loop_run|agent_daemon_run' |
        grep -vE '\) +/' | sed -n 1,25p | cut -c1-150
      echo
    } >>"$prof_out"
    echo "agent-overhead: profile of $smp/$lat: $total instructions"
  done
fi

# ---- 2. admission latency -----------------------------------------------------
admit_json='{"status": "not run"}'
if why=$(admission_unavailable); then
  admit_json=$(jq -nc --arg s "not run: $why" '{status: $s}')
  echo "agent-overhead: admission latency not run: $why"
else
  # the shim inherits containerd's environment (shim/admission.c)
  export IOBATCH_AGENT_SOCKET=$IOB_T/agent-admit/agent.sock
  iob_containerd_start
  ROOTFS=$IOB_T/rootfs
  iob_rootfs_busybox "$ROOTFS"
  declare -A T=()
  life() { # KEY RUNTIME ID [ctr options]: one ctr run --rm, in microseconds
    local key=$1 rt=$2 id=$3 t0 t1
    shift 3
    t0=$(date +%s%N)
    $CTR run --rm --null-io --runtime "$rt" "$@" --rootfs "$ROOTFS" "$id" /bin/true
    t1=$(date +%s%N)
    T[$key]+="$(((t1 - t0) / 1000)) "
  }
  # The agent is (re)started outside the timed part; the same socket path
  # serves both configurations.  batch_window = 0 separates the cost of
  # asking from the window the agent deliberately waits to gather arrivals.
  ann=(--annotation io.iobatch.class=seq-read --annotation io.iobatch.workload=bench-true)
  for r in $(seq 1 "$REPS"); do
    life runc io.containerd.runc.v2 "lr-$r"
    life noagent io.containerd.iobatch.v2 "ln-$r" "${ann[@]}"
    agent_start "$IOB_T/agent-admit" "sample_period = 1s"
    life agent io.containerd.iobatch.v2 "la-$r" "${ann[@]}"
    agent_stop
    agent_start "$IOB_T/agent-admit" "sample_period = 1s
batch_window = 0ms"
    life agent0 io.containerd.iobatch.v2 "l0-$r" "${ann[@]}"
    agent_stop
  done
  med() { printf '%s\n' ${T[$1]} | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'; }
  admit_json=$(jq -nc --argjson reps "$REPS" --argjson runc "$(med runc)" \
    --argjson agent "$(med agent)" --argjson agent0 "$(med agent0)" --argjson noagent "$(med noagent)" \
    '{status: "run", reps: $reps, median_ms: {runc_shim: $runc, iobatch_no_agent: $noagent,
      iobatch_with_agent: $agent, iobatch_with_agent_no_batch_window: $agent0},
      added_by_agent_ms: ($agent - $noagent), added_by_agent_no_window_ms: ($agent0 - $noagent),
      iobatch_vs_runc_ms: ($agent - $runc)}')
fi

# ---- results -----------------------------------------------------------------
jq -n --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" \
  --arg kernel "$(uname -r)" --arg agent "$(agent_describe)" \
  --arg load "start $LOAD_START, end $(cut -d' ' -f1-3 /proc/loadavg)" \
  --argjson sampling "$sampling_json" --argjson admission "$admit_json" \
  '{benchmark: "agent-overhead", command: $cmd, date: $date, host: $host, kernel: $kernel,
    loadavg: $load, agent: $agent, sampling: $sampling, admission: $admission}' >"$OUT_DIR/agent-overhead.json"
jq -r -f bench/agent/report-md.jq "$OUT_DIR/agent-overhead.json" >"$OUT_DIR/agent-overhead.md"
echo "agent-overhead: wrote $OUT_DIR/agent-overhead.json, agent-overhead.md"
