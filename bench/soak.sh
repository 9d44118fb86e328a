#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak (issue #14): LIFECYCLES container lifecycles through a private
# containerd, the iobatch runtime (io.containerd.iobatch.v2, with the hook
# it injects) and a private iobatchd, several at a time, then what was left
# behind.
#
# The lifecycles, by i % 10:
#   0-2  run --rm on an imported one-layer image (the shim mounts and
#        unmounts the overlay rootfs): create/start/exit/delete
#   3    run --rm of a small writer declaring io.iobatch.class=seq-write
#   4-5  run -d, exec (its output checked), kill (SIGKILL), delete
#   6    a pod: a sandbox (io.kubernetes.cri.container-type=sandbox) and two
#        containers of it (io.kubernetes.cri.sandbox-id) in one shim: one
#        runs to its end, one is exec'd into and killed; all deleted
#   7    a container of the long-lived pod (its shim lives for the whole
#        soak): run --rm, or every other time an exec in the pod's main
#        container
#   8    a failed create (/no/such/binary): ctr must fail, the container
#        must then be deletable
#   9    run -d, a detached exec still running when init is killed, delete
# A lifecycle fails when a step that should succeed did not (or the failed
# create succeeded); every ctr call runs under a watchdog, so a hang is a
# failure, not a stuck soak.
#
# The soak runs in ten phases of LIFECYCLES/10.  Between phases the agent
# is restarted (SIGTERM and kill -9 in turn), and once, after the first
# phase (so that a soak cut short by DEADLINE has it too), containerd
# is killed (-9) and restarted; the long-lived pod runs across all of them
# and must still answer (exec) afterwards ("checks").
#
# At the end, with every container deleted:
#   leaked_shims          shim processes of this containerd still running
#   leaked_mounts         mounts under the soak's directory beyond those
#                         before the first lifecycle
#   leaked_cgroups        cgroups left under the namespace's parents, v1
#                         hierarchies and the cgroup2 mount
#   leaked_agent_entries  containers the agent still lists (iobatchctl status)
#   agent_rss_kb_per_phase, agent_profiles_per_phase  the agent's RSS and
#                         the profiles saved in its state dir after each
#                         phase (a restarted agent loads them)
#   leaked_fds            fd growth of the long-lived shim (first phase ->
#                         end) plus, for each agent incarnation, its growth
#                         from after its start to before its restart, both
#                         measured with no lifecycle in flight
#   leaked_snapshots      snapshots beyond the image's
#   leaked_fifos          FIFOs ctr made and did not remove (below)
#   failed_lifecycles     (and failed_checks: the long-lived pod after
#                         restarts)
#
# FIFOs.  ctr, not the shim, makes a process's stdio FIFOs (a directory of
# <id>-stdin/-stdout/-stderr) and removes them itself, after its Delete of
# the process succeeded (process.Delete of containerd's client library:
# DeleteProcess, then the IO's Close, which removes the directory); the
# shim only opens them.
# A detached exec (`ctr task exec -d`) is never deleted by ctr, so its
# FIFOs stay, with any runtime (issue #14: the e1-std* sets of kind 9, the
# same with io.containerd.runc.v2).  Every `ctr run` and `ctr task exec`
# of the soak goes through c(), which gives it a --fifo-dir under the
# soak's own directory (ctr's default is the host-wide
# /run/containerd/fifo), removed with it: one per lifecycle, its detached
# exec's apart.  At the end:
#   leaked_fifos          FIFOs left by anything but a detached exec: ctr
#                         could not delete the process (the shim refused
#                         or lost it) or ctr was killed by the watchdog
#   client_fifos          FIFOs left by detached execs: ctr's own
#                         behaviour, three per kind-9 lifecycle
#   fifos_by_kind         both, per lifecycle kind
#
# Writes $OUT_DIR/soak/summary.json and failures.log (the log lines before each failed lifecycle or check).
# Usage: bench/soak.sh
#   env: LIFECYCLES=10000 CONCURRENCY=3 OUT_DIR=bench/results B=build
#        DEADLINE=EPOCH_SECONDS: start no lifecycle after it; the summary
#        then says how many ran (lifecycles_done) and stopped_early
#        RUNTIME=io.containerd.iobatch.v2: the runtime of every container;
#        io.containerd.runc.v2 runs the same soak on containerd's runc shim,
#        a baseline for the same machine and containerd (the agent still
#        runs, and sees nothing: no shim or hook registers)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
LIFECYCLES=${LIFECYCLES:-10000}
DEADLINE=${DEADLINE:-0}
CONCURRENCY=${CONCURRENCY:-3}
OUT_DIR=${OUT_DIR:-bench/results}
B=${B:-build}
RT=${RUNTIME:-io.containerd.iobatch.v2}
CMDLINE="LIFECYCLES=$LIFECYCLES CONCURRENCY=$CONCURRENCY${RUNTIME:+ RUNTIME=$RUNTIME} bench/soak.sh"
case $OUT_DIR in /*) ;; *) OUT_DIR=$TOP/$OUT_DIR ;; esac
for t in containerd ctr runc jq; do
  command -v "$t" >/dev/null || { echo "soak: '$t' not found" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "soak: must run as root (containerd, runc)" >&2; exit 1; }
[ "$LIFECYCLES" -ge 10 ] || { echo "soak: LIFECYCLES must be at least 10" >&2; exit 2; }
case $B in /*) BIN=$B/bin ;; *) BIN=$TOP/$B/bin ;; esac
for f in containerd-shim-iobatch-v2 iobatchd iobatchctl iobatch-hook; do
  [ -x "$BIN/$f" ] || { echo "soak: build first: '$BIN/$f' missing" >&2; exit 1; }
done

source tests/integration/lib/common.sh # EXIT trap runs every at_exit in reverse
trap 'exit 130' INT TERM
NS=soak${IOB_T##*.}
AGENT_SOCK=$IOB_T/agent.sock
AGENT_LOG=$IOB_T/agent.log
AGENT_PID=
# The shims find the agent through containerd's environment.
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
CTL="iobatchctl --socket $AGENT_SOCK"
OUT=$OUT_DIR/soak
mkdir -p "$OUT"
log() { echo "soak: $*"; }

# ---- the agent --------------------------------------------------------
agent_start() {
  cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $IOB_T/agentstate
sample_period = 1s
CONF
  iobatchd -c "$IOB_T/agent.conf" >>"$AGENT_LOG" 2>&1 &
  AGENT_PID=$!
  local i
  for i in $(seq 1 200); do
    $CTL status >/dev/null 2>&1 && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  log "iobatchd did not start; log:" >&2
  tail -20 "$AGENT_LOG" >&2
  return 1
}
agent_stop() { # SIGNAL
  [ -n "$AGENT_PID" ] || return 0
  kill -"${1:-TERM}" "$AGENT_PID" 2>/dev/null
  wait "$AGENT_PID" 2>/dev/null
  AGENT_PID=
}
at_exit 'agent_stop TERM'
agent_entries() { $CTL status --json 2>/dev/null | jq '.containers | length'; }
fds_of() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_of() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# the learned profiles in the agent's saved state (every namespace's)
agent_profiles() {
  iobatchctl profiles --state-dir "$IOB_T/agentstate" -o json 2>/dev/null |
    jq '[(.profiles // {}), ((.namespaces // {})[])] | map(length) | add // 0' 2>/dev/null || echo 0
}

# ---- containerd, image, rootfs ------------------------------------------
# Registered first so that it runs last: the namespace's cgroup parents.
at_exit 'for d in /sys/fs/cgroup/*/$NS /sys/fs/cgroup/$NS /run/containerd/runc/$NS; do [ -d "$d" ] && rmdir "$d"; done'
agent_start || exit 1
iob_containerd_start || { log "containerd did not start" >&2; exit 1; }
CTR="ctr --address $IOB_SOCK --namespace $NS"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

# build_oci_tar OUT: a busybox image as a one-layer OCI layout tarball (as
# tests/integration/shim/shim-overlay.sh).
build_oci_tar() {
  local w=$IOB_T/oci rootfs=$IOB_T/oci-rootfs
  mkdir -p "$w/blobs/sha256"
  iob_rootfs_busybox "$rootfs"
  tar -C "$rootfs" -cf "$IOB_T/layer.tar" .
  local diffid layer lsize cfg csize man msize
  diffid=$(sha256sum "$IOB_T/layer.tar" | cut -d' ' -f1)
  gzip -n -c "$IOB_T/layer.tar" >"$IOB_T/layer.tgz"
  layer=$(sha256sum "$IOB_T/layer.tgz" | cut -d' ' -f1)
  lsize=$(stat -c %s "$IOB_T/layer.tgz")
  mv "$IOB_T/layer.tgz" "$w/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{"Cmd":["/bin/sh"],"Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diffid" >"$IOB_T/config.json"
  cfg=$(sha256sum "$IOB_T/config.json" | cut -d' ' -f1)
  csize=$(stat -c %s "$IOB_T/config.json")
  mv "$IOB_T/config.json" "$w/blobs/sha256/$cfg"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' "$cfg" "$csize" "$layer" "$lsize" >"$IOB_T/manifest.json"
  man=$(sha256sum "$IOB_T/manifest.json" | cut -d' ' -f1)
  msize=$(stat -c %s "$IOB_T/manifest.json")
  mv "$IOB_T/manifest.json" "$w/blobs/sha256/$man"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"latest"},"platform":{"architecture":"amd64","os":"linux"}}]}' "$man" "$msize" >"$w/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$w/oci-layout"
  tar -C "$w" -cf "$1" oci-layout index.json blobs
}
build_oci_tar "$IOB_T/bb.tar"
$CTR image import --base-name iobatch.local/soak --digests "$IOB_T/bb.tar" >/dev/null ||
  { log "cannot import the image" >&2; exit 1; }
IMG=$($CTR image ls -q | grep '^iobatch.local/soak' | head -1)

# ---- the lifecycles ---------------------------------------------------
W=120 # watchdog of one ctr call, seconds: catches a hang, times nothing
# FIFO directories (see the header): FDIR is the one of the ctr call at
# hand: a lifecycle sets its own, and its detached exec another.
FIFOS=$IOB_T/fifo
FDIR=$FIFOS/other
c() {
  case $1 in
  run) set -- run --fifo-dir "$FDIR" "${@:2}" ;;
  task) [ "${2:-}" != exec ] || set -- task exec --fifo-dir "$FDIR" "${@:3}" ;;
  esac
  timeout -k 5 $W $CTR "$@"
}
SB=soakpod
SBA="--annotation io.kubernetes.cri.sandbox-id=$SB"
# gone ID: delete the task (-f: SIGKILL first, waits for the exit) and the
# container
gone() {
  local e
  c task delete -f "$1" >/dev/null 2>&1
  e=$(c container delete "$1" 2>&1) || ! $CTR container info "$1" >/dev/null 2>&1 ||
    { echo "cannot delete container '$1': $e"; return 1; }
}
# exec_ok ID EXECID: an exec whose output is what it printed
exec_ok() {
  local out
  out=$(c task exec --exec-id "$2" "$1" /bin/echo "exec-$2" 2>&1)
  [ "$out" = "exec-$2" ] || { echo "exec '$2' in '$1': got '$out', want 'exec-$2'"; return 1; }
}

# lifecycle I: runs one, returns 0 when everything that should work did
lifecycle() {
  local i=$1 id=s$1 k=$(($1 % 10)) FDIR=$FIFOS/l/$1
  case $k in
  0 | 1 | 2)
    [ "$(c run --rm --runtime $RT "$IMG" "$id" /bin/echo "ran-$i" 2>&1)" = "ran-$i" ] ;;
  3)
    c run --rm --null-io --runtime $RT --annotation io.iobatch.class=seq-write \
      --annotation io.iobatch.workload=soak-writer --rootfs "$R" "$id" \
      /bin/dd if=/dev/zero of=/tmp/x bs=64k count=16 ;;
  4 | 5)
    local r=0
    c run -d --null-io --runtime $RT --rootfs "$R" "$id" /bin/sleep 600 >/dev/null || r=1
    [ $r = 0 ] && { exec_ok "$id" e1 || r=1; }
    [ $r = 0 ] && { c task kill -s KILL "$id" || r=1; }
    gone "$id" || r=1
    return $r ;;
  6)
    local r=0 sb=p${i}sb a
    a="--annotation io.kubernetes.cri.sandbox-id=$sb"
    c run -d --null-io --runtime $RT --annotation io.kubernetes.cri.container-type=sandbox $a \
      --rootfs "$R" "$sb" /bin/sleep 600 >/dev/null || r=1
    [ $r = 0 ] && { c run --rm --null-io --runtime $RT $a --rootfs "$R" "${id}a" /bin/true || r=1; }
    [ $r = 0 ] && { c run -d --null-io --runtime $RT $a --rootfs "$R" "${id}b" /bin/sleep 600 >/dev/null || r=1; }
    [ $r = 0 ] && { exec_ok "${id}b" e1 || r=1; }
    gone "${id}b" || r=1
    gone "$sb" || r=1
    return $r ;;
  7)
    if [ $((i / 10 % 2)) = 0 ]; then
      c run --rm --null-io --runtime $RT $SBA --rootfs "$R" "$id" /bin/true
    else
      exec_ok "$SB-main" "e$i"
    fi ;;
  8)
    local r=0
    c run --rm --null-io --runtime $RT --rootfs "$R" "$id" /no/such/binary >/dev/null 2>&1 && r=1
    gone "$id" || r=1
    return $r ;;
  9)
    local r=0
    c run -d --null-io --runtime $RT --rootfs "$R" "$id" /bin/sleep 600 >/dev/null || r=1
    [ $r = 0 ] && { FDIR=$FIFOS/detached/$i c task exec -d --exec-id e1 "$id" /bin/sleep 600 >/dev/null 2>&1 || r=1; }
    [ $r = 0 ] && { c task kill -s KILL "$id" || r=1; }
    gone "$id" || r=1
    return $r ;;
  esac
}

# worker W FROM TO: lifecycles FROM+W, FROM+W+CONCURRENCY, ... below TO;
# "I KIND RC MS" per lifecycle in $RES/wW, what it printed in $RES/logW
RES=$IOB_T/res
mkdir -p "$RES"
worker() {
  local w=$1 i rc t0
  for ((i = $2 + w; i < $3; i += CONCURRENCY)); do
    [ "$DEADLINE" = 0 ] || [ "$(date +%s)" -lt "$DEADLINE" ] || break
    t0=$(date +%s%N)
    lifecycle "$i" >>"$RES/log$w" 2>&1
    rc=$?
    echo "$i $((i % 10)) $rc $((($(date +%s%N) - t0) / 1000000))" >>"$RES/w$w"
    [ $rc = 0 ] || echo "lifecycle $i (kind $((i % 10))) failed" >>"$RES/log$w"
  done
}
done_count() { cat "$RES"/w[0-9]* 2>/dev/null | wc -l; }
failed_count() { cat "$RES"/w[0-9]* 2>/dev/null | awk '$3 != 0' | wc -l; }

# ---- the long-lived pod -----------------------------------------------
FAILED_CHECKS=0
check() { # NAME CMD...
  "$@" && return 0
  FAILED_CHECKS=$((FAILED_CHECKS + 1))
  log "check failed: $*"
  echo "check failed: $*" >>"$RES/checks.out"
}
c run -d --null-io --runtime $RT --annotation io.kubernetes.cri.container-type=sandbox $SBA \
  --rootfs "$R" "$SB" /bin/sleep 1000000 >/dev/null || { log "cannot start the pod" >&2; exit 1; }
c run -d --null-io --runtime $RT $SBA --rootfs "$R" "$SB-main" /bin/sleep 1000000 >/dev/null ||
  { log "cannot start the pod's main container" >&2; exit 1; }
at_exit "$CTR task delete -f $SB-main; $CTR task delete -f $SB; $CTR container delete $SB-main $SB"
pod_shim() { # the shim of the pod: the parent of its main container's init
  local p
  p=$($CTR task ls 2>/dev/null | awk -v id="$SB-main" '$1 == id { print $2 }')
  [ -n "$p" ] && awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null
}
check exec_ok "$SB-main" warmup
SHIM_PID=$(pod_shim)
[ -n "$SHIM_PID" ] || { log "cannot find the pod's shim" >&2; exit 1; }

# quiet: wait until the agent lists only the long-lived pod's containers
# (the sampler drops vanished cgroups within a period) and fds settle.
quiet() {
  local i
  for i in $(seq 1 100); do
    [ "$(agent_entries)" -le 2 ] && break
    sleep 0.1
  done
  sleep 1
}
MOUNTS0=$(grep -c "$IOB_T" /proc/self/mountinfo)
SNAPS0=$($CTR snapshots ls 2>/dev/null | tail -n +2 | wc -l)
quiet
SHIM_FDS0=$(fds_of "$SHIM_PID")
AGENT_FDS_START=$(fds_of "$AGENT_PID")
AGENT_RSS_START=$(rss_of "$AGENT_PID")
AGENT_FD_GROWTH=0
AGENT_FDS_LOG=()
AGENT_RSS_LOG=()
AGENT_PROFILES_LOG=()
log "namespace $NS, $LIFECYCLES lifecycles, $CONCURRENCY at a time; agent pid $AGENT_PID" \
  "($AGENT_FDS_START fds, $AGENT_RSS_START kB), pod shim pid $SHIM_PID ($SHIM_FDS0 fds)"

T0=$(date +%s)
PHASE=$((LIFECYCLES / 10))
CTRD_RESTARTED=0
STOPPED_EARLY=false
AGENT_RESTARTS=0
for ph in $(seq 0 9); do
  from=$((ph * PHASE))
  to=$((ph == 9 ? LIFECYCLES : from + PHASE))
  a_fds=$(fds_of "$AGENT_PID")
  pids=()
  for w in $(seq 0 $((CONCURRENCY - 1))); do
    worker "$w" "$from" "$to" &
    pids+=($!)
  done
  while :; do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 1 ] || break
    sleep 5
    n=$(done_count)
    el=$(($(date +%s) - T0))
    [ $((el % 30)) -lt 5 ] && log "$n/$LIFECYCLES lifecycles, $(failed_count) failed, ${el}s, $(awk -v n="$n" -v t="$el" 'BEGIN { printf "%.1f", t ? n / t : 0 }')/s"
  done
  wait "${pids[@]}" 2>/dev/null
  quiet
  # this agent incarnation's growth, with nothing in flight
  a_end=$(fds_of "$AGENT_PID")
  AGENT_FDS_LOG+=("$a_fds->$a_end")
  [ "$a_end" -le "$a_fds" ] || AGENT_FD_GROWTH=$((AGENT_FD_GROWTH + a_end - a_fds))
  a_rss=$(rss_of "$AGENT_PID")
  a_profs=$(agent_profiles)
  AGENT_RSS_LOG+=("${a_rss:-0}")
  AGENT_PROFILES_LOG+=("${a_profs:-0}")
  log "phase $((ph + 1))/10 done: $(done_count) lifecycles, $(failed_count) failed, agent fds $a_fds -> $a_end," \
    "rss $a_rss kB, $a_profs saved profiles, $(agent_entries) entries, pod shim fds $(fds_of "$SHIM_PID")"
  [ "$ph" = 9 ] && break
  if [ "$DEADLINE" != 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then
    log "deadline reached: stopping after $(done_count) lifecycles"
    STOPPED_EARLY=true
    break
  fi
  if [ "$ph" = 0 ]; then
    log "containerd: kill -9 and restart"
    kill -9 "$IOB_CONTAINERD_PID"; wait "$IOB_CONTAINERD_PID" 2>/dev/null
    iob_containerd_restart || { log "containerd did not restart" >&2; exit 1; }
    CTRD_RESTARTED=1
    check test "$(pod_shim)" = "$SHIM_PID"
    check exec_ok "$SB-main" after-containerd
  fi
  sig=TERM
  [ $((ph % 2)) = 1 ] && sig=KILL
  log "agent: $sig and restart"
  agent_stop $sig
  agent_start || { log "iobatchd did not restart" >&2; exit 1; }
  AGENT_RESTARTS=$((AGENT_RESTARTS + 1))
  check exec_ok "$SB-main" "after-agent-$ph"
  quiet
done
T1=$(date +%s)

# ---- what is left -----------------------------------------------------
AGENT_RSS_END=$(rss_of "$AGENT_PID")
SHIM_FDS1=$(fds_of "$SHIM_PID")
check exec_ok "$SB-main" final
gone "$SB-main"
gone "$SB"
for i in $(seq 1 100); do
  [ "$(pgrep -f -- "-address $IOB_SOCK( |\$)" | wc -l)" = 0 ] && break
  sleep 0.1
done
for i in $(seq 1 100); do
  [ "$(agent_entries)" = 0 ] && break
  sleep 0.1
done
left_ctrs=$($CTR container ls -q | wc -l)
LEAKED_SHIMS=$(pgrep -f -- "-address $IOB_SOCK( |\$)" | wc -l)
m=$(grep -c "$IOB_T" /proc/self/mountinfo)
LEAKED_MOUNTS=$((m > MOUNTS0 ? m - MOUNTS0 : 0))
LEAKED_CGROUPS=0
for d in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
  [ -d "$d" ] || continue
  n=$(find "$d" -mindepth 1 -type d | wc -l)
  [ "$n" = 0 ] || log "cgroups left under $d: $(find "$d" -mindepth 1 -maxdepth 1 -type d -printf '%f ' | head -c 300)"
  LEAKED_CGROUPS=$((LEAKED_CGROUPS + n))
done
LEAKED_ENTRIES=$(agent_entries)
[ "$LEAKED_ENTRIES" = 0 ] || log "agent entries left: $($CTL status --json | jq -c '[.containers[] | {id, state, source}]' | head -c 500)"
s=$($CTR snapshots ls 2>/dev/null | tail -n +2 | wc -l)
LEAKED_SNAPS=$((s > SNAPS0 ? s - SNAPS0 : 0))
# FIFOs (see the header): "KIND WHOSE" per FIFO left, by the directory it
# is in: l/I (lifecycle I), detached/I (its detached exec), other (checks)
fifos_left() {
  find "$FIFOS" -type p 2>/dev/null | awk -v n=$((${#FIFOS} + 2)) '{
    split(substr($0, n), a, "/")
    if (a[1] == "other") print "checks leaked"
    else print "kind_" (a[2] % 10), (a[1] == "detached" ? "client" : "leaked") }'
}
FIFOS_LEFT=$(fifos_left)
LEAKED_FIFOS=$(grep -c ' leaked$' <<<"$FIFOS_LEFT")
CLIENT_FIFOS=$(grep -c ' client$' <<<"$FIFOS_LEFT")
FIFOS_BY_KIND=$(jq -Rn 'reduce (inputs | select(length > 0) | split(" ")) as [$k, $w] ({}; .[$k][$w] += 1)' <<<"$FIFOS_LEFT")
[ "$LEAKED_FIFOS" = 0 ] || log "FIFOs left (not of a detached exec): $(find "$FIFOS" -path "$FIFOS/detached" -prune -o -type p -printf '%P ' | head -c 500)"
SHIM_GROWTH=$((SHIM_FDS1 > SHIM_FDS0 ? SHIM_FDS1 - SHIM_FDS0 : 0))
LEAKED_FDS=$((SHIM_GROWTH + AGENT_FD_GROWTH))
DONE=$(done_count)
FAILED=$(failed_count)
# a lifecycle that never reported counts as failed (unless the deadline
# stopped the soak: lifecycles_done says how many ran)
[ "$STOPPED_EARLY" = true ] || [ "$DONE" -ge "$LIFECYCLES" ] || FAILED=$((FAILED + LIFECYCLES - DONE))
{
  cat "$RES"/log* "$RES/checks.out" 2>/dev/null | grep -B20 -E '^(lifecycle .* failed|check failed)' | tail -200
  [ "$left_ctrs" = 0 ] || echo "containers left: $($CTR container ls -q | head -20 | tr '\n' ' ')"
  [ "$LEAKED_FIFOS" = 0 ] || echo "FIFOs left: $(find "$FIFOS" -path "$FIFOS/detached" -prune -o -type p -printf '%P ' | head -c 2000)"
} >"$OUT/failures.log"
kinds=$(cat "$RES"/w[0-9]* | jq -Rn '[inputs | split(" ") | {k: .[1], rc: .[2], ms: (.[3] | tonumber)}]
  | group_by(.k) | map({key: ("kind_" + .[0].k), value: {n: length, failed: (map(select(.rc != "0")) | length),
    median_ms: (map(.ms) | sort | .[length / 2 | floor])}}) | from_entries')
jq -n --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg cmd "$CMDLINE" \
  --arg commit "$(git -C "$TOP" log -1 --format=%h 2>/dev/null)" \
  --argjson lifecycles "$LIFECYCLES" --argjson "done" "$DONE" --argjson conc "$CONCURRENCY" \
  --argjson shims "$LEAKED_SHIMS" --argjson mounts "$LEAKED_MOUNTS" --argjson cgroups "$LEAKED_CGROUPS" \
  --argjson entries "$LEAKED_ENTRIES" --argjson fds "$LEAKED_FDS" --argjson snaps "$LEAKED_SNAPS" \
  --argjson failed "$FAILED" --argjson checks "$FAILED_CHECKS" --argjson ctrs "$left_ctrs" \
  --argjson rss0 "${AGENT_RSS_START:-0}" --argjson rss1 "${AGENT_RSS_END:-0}" \
  --argjson shimfd0 "$SHIM_FDS0" --argjson shimfd1 "$SHIM_FDS1" \
  --arg agentfds "${AGENT_FDS_LOG[*]}" --arg agentrss "${AGENT_RSS_LOG[*]}" --arg agentprofs "${AGENT_PROFILES_LOG[*]}" --argjson arest "$AGENT_RESTARTS" --argjson crest "$CTRD_RESTARTED" --argjson early "$STOPPED_EARLY" \
  --argjson secs "$((T1 - T0))" --argjson kinds "$kinds" --arg rt "$RT" \
  --argjson lfifos "$LEAKED_FIFOS" --argjson cfifos "$CLIENT_FIFOS" --argjson fifokinds "$FIFOS_BY_KIND" \
  '{date: $date, command: $cmd, commit: $commit, runtime: $rt, lifecycles: $lifecycles, lifecycles_done: $done,
    concurrency: $conc, seconds: $secs,
    leaked_shims: $shims, leaked_mounts: $mounts, leaked_cgroups: $cgroups,
    leaked_agent_entries: $entries, leaked_fds: $fds, leaked_fifos: $lfifos, client_fifos: $cfifos,
    fifos_by_kind: $fifokinds, failed_lifecycles: $failed,
    agent_rss_kb_start: $rss0, agent_rss_kb_end: $rss1,
    failed_checks: $checks, leaked_snapshots: $snaps, leaked_containers: $ctrs,
    pod_shim_fds: [$shimfd0, $shimfd1], agent_fds_per_incarnation: ($agentfds | split(" ")),
    agent_rss_kb_per_phase: ($agentrss | split(" ") | map(tonumber)),
    agent_profiles_per_phase: ($agentprofs | split(" ") | map(tonumber)),
    agent_restarts: $arest, containerd_restarts: $crest, stopped_early: $early, kinds: $kinds}' >"$OUT/summary.json"
cat "$OUT/summary.json"
log "$DONE lifecycles in $((T1 - T0)) s: $FAILED failed, leaked: $LEAKED_SHIMS shims, $LEAKED_MOUNTS mounts," \
  "$LEAKED_CGROUPS cgroups, $LEAKED_ENTRIES agent entries, $LEAKED_FDS fds, $LEAKED_FIFOS FIFOs" \
  "($CLIENT_FIFOS of detached execs, ctr's); results in ${OUT#"$TOP"/}"
