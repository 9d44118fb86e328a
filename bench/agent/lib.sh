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

agent_describe() {
  [ -x "$AGENT" ] || { echo "none"; return; }
  echo "iobatchd at commit $(git -C "$TOP" log -1 --format=%h -- agent batcher 2>/dev/null)"
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

# real_tree N: N real cgroups for REAL=1, "iob-bench-<pid>/real-N-K" in
# the cgroup2 hierarchy and in the v1 blkio one where there is one (what
# the sampler reads on a hybrid host), each holding a shell of its own
# that writes 4 KiB with O_DIRECT to a file under REAL_DIR every REAL_IO_S
# seconds (its dd children stay in its cgroups: the block layer charges
# them there).  Their pids go to REAL_PIDS[N] and their cgroup2 paths
# (relative to the mount) to REAL_CGS[N]; all is killed and removed at
# exit.
declare -A REAL_PIDS=() REAL_CGS=()
real_tree() {
  local n=$1 cg2 blkio top k rel d pid pids="" cgs="" dirs=()
  cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  [ -n "$cg2" ] || { echo "agent-overhead: REAL=1 needs a cgroup2 mount" >&2; exit 1; }
  blkio=$(awk '$8 == "cgroup" && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
  top=iob-bench-$$
  mkdir -p "$REAL_DIR/$top"
  at_exit "rm -rf '$REAL_DIR/$top'"
  # (the EXIT trap runs these in reverse: the parents go after their children)
  at_exit "rmdir '$cg2/$top' ${blkio:+'$blkio/$top'}"
  for k in $(seq 1 "$n"); do
    rel=/$top/real-$n-$k
    dirs=("$cg2$rel")
    [ -z "$blkio" ] || dirs+=("$blkio$rel")
    mkdir -p "${dirs[@]}"
    # shellcheck disable=SC2016 # expanded by the inner shell
    sh -c 'f=$1 s=$2; shift 2
      for d in "$@"; do echo $$ >"$d/cgroup.procs" || exit 1; done
      while :; do
        dd if=/dev/zero of="$f" bs=4k count=1 oflag=direct conv=notrunc status=none
        sleep "$s"
      done' sh "$REAL_DIR/$top/f-$n-$k" "$REAL_IO_S" "${dirs[@]}" >/dev/null 2>&1 &
    pid=$!
    at_exit "real_remove $pid ${dirs[*]}"
    pids+="$pid " cgs+="$rel "
  done
  REAL_PIDS[$n]=${pids:- }
  REAL_CGS[$n]=$cgs
}

# real_remove PID DIR...: kill a real cgroup's process (and its dd), wait
# until its cgroups are empty, remove them.
real_remove() {
  local pid=$1 d
  shift
  kill "$pid" 2>/dev/null || true
  for d in "$@"; do
    for _ in $(seq 1 100); do
      [ -n "$(cat "$d/cgroup.procs" 2>/dev/null)" ] || break # cgroupfs files have no size
      xargs -r kill -9 <"$d/cgroup.procs" 2>/dev/null || true
      sleep 0.05
    done
    rmdir "$d" 2>/dev/null || true
  done
}

# real_register SOCK N: register the real cgroups of real_tree N with the
# agent as running containers (by pid and cgroup, as the shim does).
real_register() {
  local sock=$1 n=$2 k=0 pid cg
  local -a pids cgs
  read -ra pids <<<"${REAL_PIDS[$n]}"
  read -ra cgs <<<"${REAL_CGS[$n]:-}"
  for pid in "${pids[@]}"; do
    cg=${cgs[$k]}
    k=$((k + 1))
    "$CTL" --socket "$sock" register "real-$k" --ns iobench --class seq-read --cgroup "$cg" \
      --pid "$pid" --running --key bench-real >/dev/null
  done
}

# agent_start DIR "extra config lines": iobatchd on a private socket and
# state dir; sets AGENT_PID and AGENT_SOCK.
agent_start() {
  AGENT_DIR=$1 AGENT_CONF_EXTRA=$2
  # The socket's directory: 0700, as the agent wants it (agent/server.c).
  install -d -m 0700 "$AGENT_DIR" "$AGENT_DIR/state"
  AGENT_SOCK=$AGENT_DIR/agent.sock
  # The host's own kubelet tree (if any) is not part of what is measured:
  # kubepods = off unless the caller sets a kubepods key (a key given twice
  # is an error).
  local kp="kubepods = off"
  case $AGENT_CONF_EXTRA in *kubepods*) kp= ;; esac
  printf 'socket = %s\nstate_dir = %s\n%s\n%s\n' "$AGENT_SOCK" "$AGENT_DIR/state" \
    "$kp" "$AGENT_CONF_EXTRA" >"$AGENT_DIR/iobatchd.conf"
  "$AGENT" --config "$AGENT_DIR/iobatchd.conf" >>"$AGENT_DIR/agent.log" 2>&1 &
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
