#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Agent overhead (issue 7, section 4; issue #35):
#  1. CPU of iobatchd sampling N containers at 1 Hz (N = 0, 100, 1000):
#     utime+stime of the agent over WINDOW seconds, and its RSS; once per
#     SAMPLER/LATENCY in SAMPLERS (agent options `sampler`: auto = what
#     the host offers, io.stat, procfs = /proc/PID/io of cgroup.procs,
#     bpf = bytes and requests from the BPF latency program's map, no
#     file read; and `latency_source`: off, bpf = the program's map read
#     once per window, batched, on top of the files, pressure).
#     Real containers by default: each a cgroup in every hierarchy the
#     sampler reads (the cgroup2 mount, and the v1 blkio one where there
#     is one: hybrid host) holding one process of its own
#     (build/bench/iob-real-ctr, bench/agent/realctr.c) that reads 4 KiB
#     with O_DIRECT every REAL_IO_S seconds from a file under REAL_DIR
#     (not tmpfs: the reads must reach the disk), so that the block layer
#     charges its cgroup and the BPF map holds a real entry per container;
#     registered by pid and cgroup as running, as the shim does, and no
#     `cgroup_root`.  After each window the rows count the map's entries
#     and those with requests counted (bpftool; latency_source = bpf), and
#     after each N the processes and cgroups its containers left (must be
#     0 0).  Rows say "real": true.
#     REAL=0 (or FIXTURES=1): fixture cgroup directories under a temp root
#     (agent option `cgroup_root`) instead, with io.stat, io.pressure and
#     cgroup.procs holding one sleeping pid, registered by
#     build/bench/iob-agent-fixture; they are not cgroups the block layer
#     charges: the agent makes each one's zeroed map entry (one per
#     fixture; on a hybrid host all share the stand-in's blkio cgroup, so
#     one) and the window's batched read copies them all.  Rows say
#     "real": false.
#     SAMPLERS default: on a host whose cgroup2 has the io controller
#     "auto/off io.stat/bpf bpf/bpf procfs/off"; elsewhere (hybrid) "auto/off
#     procfs/off auto/bpf bpf/bpf" for real containers (io.stat does not
#     exist there) and "auto/off io.stat/off auto/bpf bpf/bpf" for fixtures.
#     PROFILE=callgrind: also an instruction profile of the agent over
#     PROFILE_WINDOWS samples of PROFILE_COUNT containers (real, or fixtures
#     with REAL=0), for each of SAMPLERS (valgrind; user space only: a
#     system call counts as one instruction, so the table's CPU is the
#     measure), top entries in OUT_DIR/agent-overhead-profile.txt.
#  2. Added latency of an uncontended admission: `ctr run --rm ... /bin/true`
#     with our shim and an idle agent (default config, and batch_window = 0)
#     vs our shim with no agent (it fails open) vs the runc shim: one block
#     per configuration (the agent started once and settled), REPS runs of
#     ours and of runc's shim alternating in it, each after a PAUSE_S pause;
#     medians, and each configuration's ratio to runc's shim in its own
#     block (ADMISSION=0 skips it).
# Writes OUT_DIR/agent-overhead.json and agent-overhead.md; a part that
# cannot run is reported as "not run: <reason>".  OUT_DIR defaults to
# bench/results: a run on a busy machine goes to a scratch OUT_DIR.
# Usage: bench/agent-overhead.sh   (env: COUNTS="0 100 1000" WINDOW=60 REPS=20
#                                   SAMPLERS="..." REAL=1 REAL_DIR=/var/tmp
#                                   REAL_IO_S=2 FIXTURES=0 B=build
#                                   OUT_DIR=bench/results ADMISSION=1 PAUSE_S=0.5
#                                   PROFILE=callgrind PROFILE_COUNT=200
#                                   PROFILE_WINDOWS=10)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
COUNTS=${COUNTS:-"0 100 1000"}
WINDOW=${WINDOW:-60}
REPS=${REPS:-20}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
PROFILE=${PROFILE:-}
PROFILE_COUNT=${PROFILE_COUNT:-200}
PROFILE_WINDOWS=${PROFILE_WINDOWS:-10}
FIXTURES=${FIXTURES:-0}
REAL=${REAL:-1}
[ "$FIXTURES" != 1 ] || REAL=0
REAL_DIR=${REAL_DIR:-/var/tmp}
REAL_IO_S=${REAL_IO_S:-2}
ADMISSION=${ADMISSION:-1}
PAUSE_S=${PAUSE_S:-0.5}
if [ -z "${SAMPLERS:-}" ]; then
  if grep -qsw io "$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)/cgroup.controllers"; then
    SAMPLERS="auto/off io.stat/bpf bpf/bpf procfs/off"
  elif [ "$REAL" = 1 ]; then
    SAMPLERS="auto/off procfs/off auto/bpf bpf/bpf"
  else
    SAMPLERS="auto/off io.stat/off auto/bpf bpf/bpf"
  fi
fi
CMDLINE=$(for v in COUNTS WINDOW REPS SAMPLERS REAL REAL_IO_S ADMISSION PAUSE_S PROFILE; do
  [ -z "${!v:-}" ] || printf '%s="%s" ' "$v" "${!v}"
done)"bench/agent-overhead.sh $*"
AGENT=$TOP/$B/bin/iobatchd
FIXTURE=$TOP/$B/bench/iob-agent-fixture
REALCTR=$TOP/$B/bench/iob-real-ctr
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
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100) # no getconf in the VM: Linux x86 is 100

# ---- 1. sampling CPU --------------------------------------------------------
sampling_json='{"status": "not run"}'
# fixtures: one sleeping process stands in for each container's pid (the
# procfs sampler reads /proc/PID/io of the pids in cgroup.procs; the
# io.stat one the fixture's io.stat)
fixture_sleeper() {
  [ -z "${SLEEPER:-}" ] || return 0
  sleep 100000 &
  SLEEPER=$!
  at_exit "kill $SLEEPER"
  # On a host whose io controller is v1 blkio the agent keys a container's
  # latency by its pid's blkio cgroup (agent/sample/sampler.c, lat_key_dir): give
  # the stand-in its own, where no I/O is charged, not the root's (which
  # the host's own writeback keeps busy: every fixture would look like a
  # container doing I/O).
  BLKIO=$(awk '$8 == "cgroup" && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
  if [ -n "$BLKIO" ]; then
    mkdir -p "$BLKIO/iob-bench-$$"
    echo "$SLEEPER" >"$BLKIO/iob-bench-$$/cgroup.procs"
    at_exit "kill $SLEEPER 2>/dev/null; wait $SLEEPER 2>/dev/null; rmdir '$BLKIO/iob-bench-$$'"
  fi
}
# containers N: N containers for the runs (real or fixtures), once per N
containers() {
  local n=$1
  if [ "$REAL" = 1 ]; then
    [ "$n" -eq 0 ] || real_tree "$n"
  else
    fixture_sleeper
    [ -d "$IOB_T/cg-$n" ] || fixture_tree "$IOB_T/cg-$n" "$n" "$SLEEPER"
  fi
}
# register SOCK N: the containers of N with the agent at SOCK
register() {
  if [ "$2" -eq 0 ]; then return 0; fi
  if [ "$REAL" = 1 ]; then
    "$FIXTURE" register-real "$1" "$REAL_LIST.reg"
  else
    "$FIXTURE" register "$1" "$2" "$SLEEPER"
  fi
}
# config N SAMPLER LATENCY: the agent's config lines for a run
config() {
  printf 'sample_period = 1s\nsampler = %s\nlatency_source = %s\n' "$2" "$3"
  [ "$REAL" = 1 ] || printf 'cgroup_root = %s\n' "$IOB_T/cg-$1"
}
leaks='null'
if why=$(agent_unavailable); then
  sampling_json=$(jq -nc --arg s "not run: $why" '{status: $s}')
  echo "agent-overhead: sampling not run: $why"
else
  [ "$REAL" = 0 ] || real_mounts
  rows=() left=()
  for n in $COUNTS; do
   containers "$n"
   for cfg in $SAMPLERS; do
    smp=${cfg%%/*} lat=off
    [ "$cfg" = "$smp" ] || lat=${cfg#*/}
    agent_start "$IOB_T/agent-$n-$smp-$lat" "$(config "$n" "$smp" "$lat")"
    register "$AGENT_SOCK" "$n"
    read -r known sampler < <("$FIXTURE" status "$AGENT_SOCK")
    latency=$("$CTL" --socket "$AGENT_SOCK" status --json | jq -r .latency_source)
    sleep 3 # first samples, baselines
    t0=$(proc_ticks "$AGENT_PID")
    sleep "$WINDOW"
    t1=$(proc_ticks "$AGENT_PID")
    read -r known_end _ < <("$FIXTURE" status "$AGENT_SOCK")
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$AGENT_PID/status")
    # outside the window: what the agent saw (containers with I/O in its
    # last window: about 1 in REAL_IO_S of the real ones), and its BPF map
    with_io=$("$CTL" --socket "$AGENT_SOCK" status --json |
      jq '[.containers[] | select(.write_bps > 0 or .read_bps > 0)] | length')
    read -r map_entries map_with_io < <(real_lat_entries)
    agent_stop
    cpu_ms=$(((t1 - t0) * 1000 / HZ))
    rows+=("$(jq -nc --argjson n "$n" --argjson known "$known" --argjson known_end "$known_end" \
      --arg sampler "$sampler" --argjson cpu_ms "$cpu_ms" --argjson window "$WINDOW" \
      --argjson rss "$rss" --argjson hz "$HZ" --arg pref "$smp" --arg lat "$lat" \
      --arg latency "$latency" --argjson real "$([ "$REAL" = 1 ] && echo true || echo false)" \
      --argjson with_io "$with_io" --argjson io_s "$([ "$REAL" = 1 ] && echo "$REAL_IO_S" || echo null)" \
      --argjson map_entries "$map_entries" --argjson map_with_io "$map_with_io" \
      '{cgroups: $n, real: $real, real_io_every_s: $io_s, writing_in_last_window: $with_io,
        bpf_map_entries: $map_entries, bpf_map_entries_with_io: $map_with_io,
        registered: $known, registered_at_end: $known_end, sampler: $sampler,
        sampler_option: $pref, latency_source_option: $lat, latency_source: $latency,
        window_s: $window, cpu_ms: $cpu_ms, cpu_percent: ($cpu_ms / $window / 10),
        cpu_us_per_cgroup_sample: (if $n > 0 then $cpu_ms * 1000 / $window / $n else null end),
        rss_kib: $rss, tick_ms: (1000 / $hz)}')")
    echo "agent-overhead: $n $([ "$REAL" = 1 ] && echo real || echo fixture) cgroups ($known registered, $known_end at the end, $sampler, latency $latency): ${cpu_ms} ms CPU in ${WINDOW} s, RSS ${rss} KiB; I/O in the last window: $with_io; BPF map: $map_entries entries, $map_with_io with I/O"
   done
   if [ "$REAL" = 1 ] && [ "$n" -gt 0 ]; then
     # the next N's containers replace these: none of them does I/O the
     # agent does not sample, and every one must go
     real_stop "$REAL_HELPER"
     read -r lp ld < <(real_left "$REAL_LIST")
     left+=("$(jq -nc --argjson n "$n" --argjson p "$lp" --argjson d "$ld" '{cgroups: $n, processes_left: $p, cgroup_dirs_left: $d}')")
     echo "agent-overhead: $n real containers stopped: $lp processes and $ld cgroup directories left"
   fi
  done
  [ ${#left[@]} -eq 0 ] || leaks=$(printf '%s\n' "${left[@]}" | jq -sc .)
  sampling_json=$(printf '%s\n' "${rows[@]}" | jq -sc --argjson leaks "$leaks" '{status: "run", runs: ., teardown: $leaks}')
fi

# ---- 1b. instruction profile (PROFILE=callgrind) -----------------------------
# Registering is slow under valgrind (a thousand time out): PROFILE_COUNT.
# Counting starts after the registrations and the first samples
# (callgrind_control -z), and covers PROFILE_WINDOWS samples.
if [ "$PROFILE" = callgrind ] && [ -z "${why:-}" ]; then
  command -v valgrind >/dev/null || { echo "agent-overhead: PROFILE=callgrind needs valgrind" >&2; exit 1; }
  prof_out=$OUT_DIR/agent-overhead-profile.txt
  : >"$prof_out"
  containers "$PROFILE_COUNT"
  what="$([ "$REAL" = 1 ] && echo real || echo fixture) cgroups"
  for cfg in $SAMPLERS; do
    smp=${cfg%%/*} lat=off
    [ "$cfg" = "$smp" ] || lat=${cfg#*/}
    pd=$IOB_T/prof-$smp-$lat
    install -d -m 0700 "$pd" "$pd/state"
    { printf 'socket = %s\nstate_dir = %s\nkubepods = off\n' "$pd/agent.sock" "$pd/state"
      config "$PROFILE_COUNT" "$smp" "$lat"; } >"$pd/iobatchd.conf"
    valgrind --tool=callgrind --callgrind-out-file="$pd/callgrind.out" \
      "$AGENT" --config "$pd/iobatchd.conf" >"$pd/agent.log" 2>&1 &
    AGENT_PID=$!
    at_exit "agent_stop"
    for i in $(seq 1 600); do [ -S "$pd/agent.sock" ] && break; sleep 0.1; done
    register "$pd/agent.sock" "$PROFILE_COUNT"
    sleep 4
    callgrind_control -z "$AGENT_PID" >/dev/null
    sleep "$PROFILE_WINDOWS"
    # a dump now (callgrind.out.1): the windows without the shutdown
    callgrind_control -d "$AGENT_PID" >/dev/null
    for i in $(seq 1 100); do [ -s "$pd/callgrind.out.1" ] && break; sleep 0.1; done
    agent_stop
    total=$(callgrind_annotate "$pd/callgrind.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ { gsub(",", "", $1); print $1 }')
    {
      echo "== sampler = $smp, latency_source = $lat: $PROFILE_COUNT $what, $PROFILE_WINDOWS windows," \
        "$total instructions ($((total / PROFILE_WINDOWS / PROFILE_COUNT)) per cgroup sample), inclusive:"
      callgrind_annotate --inclusive=yes "$pd/callgrind.out.1" 2>/dev/null |
        grep -E '^ *[0-9,]+ \( *[0-9.]+%\) +[^ ]' | grep -v 'PROGRAM TOTALS' |
        grep -vE 'libc-start|libc_start_call_main|below main|ld-linux|agent/main.c:main|iob_loop_run|agent_daemon_run' |
        grep -vE '\) +/' | sed -n 1,25p | cut -c1-150
      echo
    } >>"$prof_out"
    echo "agent-overhead: profile of $smp/$lat: $total instructions"
  done
  [ "$REAL" = 0 ] || real_stop "$REAL_HELPER"
fi

# ---- 2. admission latency -----------------------------------------------------
admit_json='{"status": "not run"}'
if [ "$ADMISSION" = 0 ]; then
  admit_json='{"status": "not run: ADMISSION=0"}'
elif why=$(admission_unavailable); then
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
    sleep "$PAUSE_S" # each run starts on a quiet node: the last one's shim has exited
    t0=$(date +%s%N)
    $CTR run --rm --null-io --runtime "$rt" "$@" --rootfs "$ROOTFS" "$id" /bin/true
    t1=$(date +%s%N)
    T[$key]+="$(((t1 - t0) / 1000)) "
  }
  # block KEY: REPS runs of ours (KEY) and of runc's shim (runc-KEY),
  # alternating which goes first, so neither always pays for the exit of
  # the other's shim.
  block() {
    local key=$1 r
    for r in $(seq 1 "$REPS"); do
      if [ $((r % 2)) = 1 ]; then
        life "runc-$key" io.containerd.runc.v2 "lr-$key-$r"
        life "$key" io.containerd.iobatch.v2 "l-$key-$r" "${ann[@]}"
      else
        life "$key" io.containerd.iobatch.v2 "l-$key-$r" "${ann[@]}"
        life "runc-$key" io.containerd.runc.v2 "lr-$key-$r"
      fi
    done
  }
  # One block per configuration.  The agent is a daemon: it is started
  # once per block and settles (its first windows) before the first timed
  # run, as on a node where it has been up for days; batch_window = 0
  # separates the cost of asking from the window the agent deliberately
  # waits to gather arrivals.
  ann=(--annotation io.iobatch.class=seq-read --annotation io.iobatch.workload=bench-true)
  block noagent
  agent_start "$IOB_T/agent-admit" "sample_period = 1s"
  sleep 3
  block agent
  agent_stop
  agent_start "$IOB_T/agent-admit" "sample_period = 1s
batch_window = 0ms"
  sleep 3
  block agent0
  agent_stop
  med() { printf '%s\n' ${T[$1]} | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'; }
  T[runc]="${T[runc-noagent]}${T[runc-agent]}${T[runc-agent0]}"
  ratio() { awk -v a="$(med "$1")" -v b="$(med "runc-$1")" 'BEGIN { printf "%.3f", a / b }'; }
  admit_json=$(jq -nc --argjson reps "$REPS" --argjson pause "$PAUSE_S" \
    --argjson runc "$(med runc)" \
    --argjson agent "$(med agent)" --argjson agent0 "$(med agent0)" --argjson noagent "$(med noagent)" \
    --argjson r_agent "$(ratio agent)" --argjson r_agent0 "$(ratio agent0)" --argjson r_noagent "$(ratio noagent)" \
    '{status: "run", reps: $reps, pause_s: $pause, median_ms: {runc_shim: $runc, iobatch_no_agent: $noagent,
      iobatch_with_agent: $agent, iobatch_with_agent_no_batch_window: $agent0},
      vs_runc_shim_same_block: {iobatch_no_agent: $r_noagent, iobatch_with_agent: $r_agent,
      iobatch_with_agent_no_batch_window: $r_agent0},
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
