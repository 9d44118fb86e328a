# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers of bench/agent-overhead.sh (sourced after tests/integration/lib/common.sh).
AGENT_PID=
AGENT_SOCK=
AGENT_DIR=
AGENT_CONF_EXTRA=

agent_unavailable() {
  [ -x "$AGENT" ] || { echo "'${AGENT#"$TOP"/}' not built (the agent has not landed)"; return 0; }
  [ -x "$FIXTURE" ] || { echo "'${FIXTURE#"$TOP"/}' not built (make $B/bench/iob-agent-fixture)"; return 0; }
  [ "${REAL:-0}" = 0 ] || [ -x "$REALCTR" ] ||
    { echo "'${REALCTR#"$TOP"/}' not built (make $B/bench/iob-real-ctr)"; return 0; }
  return 1
}

admission_unavailable() {
  agent_unavailable && return 0
  [ -x "$SHIM" ] || { echo "'${SHIM#"$TOP"/}' not built"; return 0; }
  if ! grep -qs 'client_admit(' "$TOP"/shim/*.c; then
    echo "the shim does not ask the agent yet (shim/admission.c admits at once)"
    return 0
  fi
  return 1
}

# The tree measured: HEAD, which the results page compares with the last
# change to the code the result measures (bench/results-code.txt).
agent_describe() {
  [ -x "$AGENT" ] || { echo "none"; return; }
  echo "iobatchd at commit $(git -C "$TOP" log -1 --format=%h 2>/dev/null)"
}

# fixture_tree ROOT N PID: a cgroup-v2-like tree with N leaf cgroups, each
# with io.stat, io.pressure and cgroup.procs (PID).
fixture_tree() {
  local root=$1 n=$2 pid=$3 k d
  mkdir -p "$root/iobench"
  echo "cpu io memory pids" >"$root/cgroup.controllers"
  echo "io" >"$root/cgroup.subtree_control"
  for k in $(seq 1 "$n"); do
    d=$root/iobench/fix-$k
    mkdir -p "$d"
    echo "$pid" >"$d/cgroup.procs"
    echo "259:0 rbytes=$((k * 4096000)) wbytes=0 rios=$((k * 1000)) wios=0 dbytes=0 dios=0" >"$d/io.stat"
    printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' >"$d/io.pressure"
    echo "default 100" >"$d/io.weight"
  done
}

# ---- real containers (bench/agent/realctr.c) --------------------------------
# A real container here: a cgroup of its own in every hierarchy the agent
# reads, holding one process (forked by build/bench/iob-real-ctr, no exec)
# that reads 4 KiB with O_DIRECT every REAL_IO_S seconds from a file under
# REAL_DIR (unlinked once open), so that the block layer charges its cgroup
# and the agent's BPF map has a real entry for it.  The helper removes its
# processes and the cgroups it made when it ends: on SIGTERM from
# real_stop, on Ctrl-C (the terminal's SIGINT reaches it too), and when
# the bench dies (PR_SET_PDEATHSIG), even by kill -9.

# real_mounts: REAL_CG2 (the cgroup2 mount) and REAL_BLKIO (the v1 blkio
# hierarchy, empty on a pure v2 host), what the sampler reads: the v2
# cgroup's cgroup.procs and io.stat or io.pressure, the v1 blkio cgroup's
# statistics, and the BPF program keys a request by its blkcg (the v1
# blkio cgroup on a hybrid host, the v2 one on a v2 host).
real_mounts() {
  REAL_CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  [ -n "$REAL_CG2" ] || { echo "real containers need a cgroup2 mount" >&2; return 1; }
  REAL_BLKIO=$(awk '$8 == "cgroup" && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
  # the reads must reach a disk the block layer charges (tmpfs has O_DIRECT)
  [ "$(stat -f -c %T "$REAL_DIR")" != tmpfs ] || {
    echo "REAL_DIR='$REAL_DIR' is tmpfs: its reads reach no disk" >&2
    return 1
  }
}

# real_parent DIR: make a cgroup to hold containers; on cgroup v2 with
# the io controller it is enabled for the children (the io controller
# charges a request to the nearest cgroup that has it), and pids and
# memory where offered, as a runtime's parent would have them.
real_parent() {
  local d=$1 c
  mkdir -p "$d"
  [ -f "$d/cgroup.subtree_control" ] || return 0
  for c in io memory pids; do
    if grep -qw "$c" "$d/cgroup.controllers"; then echo "+$c" >"$d/cgroup.subtree_control"; fi
  done
}

# real_start LIST: one container per line of LIST (its cgroup directories,
# space-separated: made by the helper, their parents must exist); waits
# until every one runs and has read once.  Sets REAL_HELPER (its pid); the
# containers' pids, in LIST's order, one a line, go to LIST.pids.
# Each start gets a real_stop at exit.
REAL_HELPER=
real_start() {
  local list=$1
  : >"$list.out" # made here: the helper's own redirection may come after the first grep
  "$REALCTR" -i "$((REAL_IO_S * 1000))" "$REAL_DIR" <"$list" >"$list.out" 2>"$list.err" &
  REAL_HELPER=$!
  at_exit "real_stop $REAL_HELPER"
  # no time limit of our own: the helper gives each container 30 s to
  # start or fails (1000 take 6 s on the host, minutes under emulation)
  while ! grep -qx ready "$list.out"; do
    kill -0 "$REAL_HELPER" 2>/dev/null || break
    sleep 0.2
  done
  if ! grep -qx ready "$list.out"; then
    echo "real containers did not start:" >&2
    tail -5 "$list.err" >&2
    return 1
  fi
  grep -vx ready "$list.out" >"$list.pids"
}

# real_stop PID: end the helper PID (it removes its processes and cgroups).
real_stop() {
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# real_left LIST: what the containers of LIST left behind once stopped:
# "<processes alive> <cgroup directories>" (pids checked with their name,
# so a reused pid is not counted).
real_left() {
  local list=$1 procs=0 dirs=0 pid d comm line
  while read -r pid; do
    comm=
    { read -r comm <"/proc/$pid/comm"; } 2>/dev/null || true # builtins: a fork each would take seconds
    [ "$comm" != iob-real-ctr ] || procs=$((procs + 1))
  done <"$list.pids"
  while read -r line; do
    for d in $line; do [ ! -d "$d" ] || dirs=$((dirs + 1)); done
  done <"$list"
  echo "$procs $dirs"
}

# real_tree N: N containers for agent-overhead, "iob-bench-<pid>/real-N-K"
# under the cgroup2 mount and the v1 blkio one where there is one.  Sets
# REAL_LIST (the helper's list; LIST.reg has the registrations, "ID PID
# CGROUP", CGROUP relative to the cgroup2 mount, for
# `iob-agent-fixture register-real`).
real_tree() {
  local n=$1 k pid rel top=/iob-bench-$$
  REAL_LIST=$IOB_T/real-$n.list
  real_parent "$REAL_CG2$top"
  at_exit "rmdir '$REAL_CG2$top'"
  if [ -n "$REAL_BLKIO" ]; then
    mkdir -p "$REAL_BLKIO$top"
    at_exit "rmdir '$REAL_BLKIO$top'"
  fi
  : >"$REAL_LIST"
  for k in $(seq 1 "$n"); do
    rel=$top/real-$n-$k
    echo "$REAL_CG2$rel${REAL_BLKIO:+ $REAL_BLKIO$rel}" >>"$REAL_LIST"
  done
  real_start "$REAL_LIST"
  k=0
  while read -r pid; do
    k=$((k + 1))
    echo "real-$k $pid $top/real-$n-$k"
  done <"$REAL_LIST.pids" >"$REAL_LIST.reg"
}

# real_lat_map: the id of the running agent's BPF `lat` map (its fds'
# fdinfo name the maps it holds), or nothing.
real_lat_map() {
  local id
  command -v bpftool >/dev/null || return 0
  # one awk over all its fds, not a process per fd: it may hold many
  for id in $(awk '$1 == "map_id:" { print $2 }' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null); do
    if bpftool map show id "$id" -j 2>/dev/null | jq -e '.name == "lat"' >/dev/null; then
      echo "$id"
      return 0
    fi
  done
}

# real_lat_entries: "<entries> <entries with I/O counted>" of the running
# agent's BPF map (one per container it samples, made zeroed by the agent;
# counted: the program saw requests of that cgroup), or "null null".
real_lat_entries() {
  local id
  id=$(real_lat_map)
  [ -n "$id" ] || { echo "null null"; return 0; }
  bpftool map dump id "$id" -j | jq -r '[length, ([.[] | (.formatted.value // {}) |
    select((.rios // 0) + (.wios // 0) > 0)] | length)] | "\(.[0]) \(.[1])"'
}

# agent_start DIR "extra config lines": iobatchd on a private socket and
# state dir; sets AGENT_PID and AGENT_SOCK.
agent_start() {
  AGENT_DIR=$1 AGENT_CONF_EXTRA=$2
  # The socket's directory: 0700, as the agent wants it (agent/serve/server.c).
  install -d -m 0700 "$AGENT_DIR" "$AGENT_DIR/state"
  AGENT_SOCK=$AGENT_DIR/agent.sock
  # The host's own kubelet tree (if any) is not part of what is measured:
  # kubepods = off unless the caller sets a kubepods key (a key given twice
  # is an error).
  local kp="kubepods = off"
  case $AGENT_CONF_EXTRA in *kubepods*) kp= ;; esac
  printf 'socket = %s\nstate_dir = %s\n%s\n%s\n' "$AGENT_SOCK" "$AGENT_DIR/state" \
    "$kp" "$AGENT_CONF_EXTRA" >"$AGENT_DIR/iobatchd.conf"
  # setpriv execs the agent with a parent-death signal: a bench killed
  # with -9 (no EXIT trap) does not leave it running
  local pds=()
  if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then pds=(setpriv --pdeathsig TERM --); fi
  "${pds[@]}" "$AGENT" --config "$AGENT_DIR/iobatchd.conf" >>"$AGENT_DIR/agent.log" 2>&1 &
  AGENT_PID=$!
  at_exit "agent_stop"
  for _ in $(seq 1 100); do
    [ -S "$AGENT_SOCK" ] && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "agent-overhead: iobatchd did not start; log:" >&2
  tail -20 "$AGENT_DIR/agent.log" >&2
  return 1
}

agent_stop() {
  [ -n "$AGENT_PID" ] || return 0
  kill "$AGENT_PID" 2>/dev/null || true
  wait "$AGENT_PID" 2>/dev/null || true
  AGENT_PID=
}

# For the no-agent case: stop it (the shim then fails open); resume restarts
# it with the same config.
agent_pause_unreachable() { agent_stop; }
agent_resume() {
  [ -z "$AGENT_PID" ] || return 0
  agent_start "$AGENT_DIR" "$AGENT_CONF_EXTRA"
}

proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
