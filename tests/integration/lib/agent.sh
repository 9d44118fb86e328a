# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # AGENT_RC, RT are read by the suites that source this file
# Helpers for the agent's integration tests (source after lib/common.sh).
#   agent_start [extra config lines]   iobatchd on $IOB_T/agent.sock, state in $IOB_T/state
#                                      (sampling every $AGENT_SAMPLE_PERIOD, 250ms unless set;
#                                      kubepods = off unless the lines set it or
#                                      AGENT_KUBEPODS=default)
#   agent_stop                         SIGTERM, wait; sets AGENT_RC
#   ctl ARGS...                        iobatchctl against that agent
#   agent_field ID FIELD               one field of one container from status --json
#   iob_stack_up AGENT_CONF            iobatchd, a private containerd, NS/CTR/RT, rootfs R with fio
#   iob_stack_ctr [BINARY...]          the containerd half of it, for a test that starts the agent
#   cg_remove DIR                      empty a cgroup (kill -9) and remove it
AGENT_SOCK=$IOB_T/agent.sock
AGENT_STATE=$IOB_T/agentstate
AGENT_LOG=$IOB_T/agent.log
AGENT_PID=
# iobatchctl asks this agent (--socket), not through IOBATCH_AGENT_SOCKET,
# which shims of a containerd the test starts would read too: they find the
# agent only where the test says so (ctl.sh tests the variable).  A later
# --socket on the command line wins.
# (A wrapper first on PATH, which execs: a test may background and kill it.)
mkdir -p "$IOB_T/ctl-bin"
printf '#!/bin/sh\nexec "%s" --socket "%s" "$@"\n' "$IOB_B/bin/iobatchctl" "$AGENT_SOCK" \
  >"$IOB_T/ctl-bin/iobatchctl"
chmod 755 "$IOB_T/ctl-bin/iobatchctl"
PATH=$IOB_T/ctl-bin:$PATH

agent_start() {
  # Not the host's own kubelet tree (issue #25): containers other tests
  # start there (CRI pods) would be sampled and capped beside this test's.
  # A test that sets kubepods or kubepods_root itself, or AGENT_KUBEPODS=default
  # (the agent's default, auto), gets what it asks for.
  local kp="kubepods = off"
  case "${1:-}" in *kubepods*) kp="" ;; esac
  [ "${AGENT_KUBEPODS:-}" = default ] && kp=""
  cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
sample_period = ${AGENT_SAMPLE_PERIOD:-250ms}
batch_window = 100ms
$kp
${1:-}
CONF
  iobatchd -c "$IOB_T/agent.conf" -d >>"$AGENT_LOG" 2>&1 &
  AGENT_PID=$!
  at_exit "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null"
  for _ in $(seq 1 100); do
    [ -S "$AGENT_SOCK" ] && iobatchctl status >/dev/null 2>&1 && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "# iobatchd did not start; log:"; sed 's/^/# /' "$AGENT_LOG" | tail -20
  return 1
}

agent_stop() {
  kill -TERM "$AGENT_PID" 2>/dev/null
  wait "$AGENT_PID" 2>/dev/null
  AGENT_RC=$?
}

ctl() { iobatchctl "$@"; }

agent_field() {
  iobatchctl status --json | jq -r --arg id "$1" ".containers[] | select(.id == \$id) | .$2"
}

# agent_wbytes SOCK ID: the bytes container ID wrote, as the agent's
# metrics (served on unix socket SOCK) count them
agent_wbytes() {
  curl -sS --max-time 10 --unix-socket "$1" http://x/metrics |
    awk -v id="id=\"$2\"" '$1 ~ /^iobatch_container_io_bytes_total\{/ && index($1, id) && $1 ~ /op="write"/ { print $2 }'
}

# counts_64m ID SOCK FILE DIR... -- WHAT: register and admit container ID
# on the cgroup of the last DIR's name, dd 64 MiB into FILE in the cgroup
# directories DIR..., buffered and with no fsync, sync from outside them,
# and check that the agent's metrics (on unix socket SOCK) count 64 MiB
# written, once (256 KiB of slack), for ID: TAP line "WHAT (N bytes)"
counts_64m() {
  local id=$1 sock=$2 f=$3 what=${*: -1} got
  local -a dirs=("${@:4:$#-5}")
  ctl register "$id" --cgroup "/$(basename "${dirs[-1]}")" >/dev/null
  ctl admit "$id" >/dev/null
  sh -c 'f=$1; shift; for d in "$@"; do echo $$ >"$d/cgroup.procs" || exit 1; done
    exec dd if=/dev/zero of="$f" bs=1M count=64' sh "$f" "${dirs[@]}" >/dev/null 2>&1
  sync
  wait_for 30 '[ "$(agent_wbytes "$sock" "$id")" -ge 67108864 ] 2>/dev/null'
  got=$(agent_wbytes "$sock" "$id")
  ok "$what ($got bytes)" test "${got:-0}" -ge 67108864 -a "${got:-0}" -le $((67108864 + 262144))
  rm -f "$f"
}

# now_ms: a monotonic clock in ms (busybox date has no %N; the VM uses it)
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# wait_for SECONDS 'SHELL CONDITION': poll (eval) until it holds.  Timed by
# the clock, not by a count of tries: under emulation (the VM) one try can
# take longer than the sleep between them.
wait_for() {
  local end=$(($(now_ms) + $1 * 1000))
  while :; do
    eval "$2" && return 0
    [ "$(now_ms)" -lt "$end" ] || return 1
    sleep 0.05
  done
}

# iob_stack_ctr [BINARY...]: the containerd half of an end-to-end test, once
# the agent runs and the environment the shims inherit is set: a private
# containerd; a namespace of the test's own in NS and CTR (runc's state,
# /run/containerd/runc/NS, is shared by every containerd on the machine);
# the runtime in RT; a busybox rootfs in R with each BINARY and its
# libraries; the helpers of lib/admission.sh.
iob_stack_ctr() {
  local b p
  iob_containerd_start || bail "containerd did not start"
  NS=iob${IOB_T##*.}
  CTR=$(iob_ctr "$NS")
  RT=io.containerd.iobatch.v2
  R=$IOB_T/rootfs
  iob_rootfs_busybox "$R"
  for b in "$@"; do
    p=$(command -v "$b") || bail "$b is not installed (scripts/install-deps.sh)"
    iob_rootfs_add_binary "$R" "$p"
  done
  . "$IOB_TOP/tests/integration/lib/admission.sh"
}

# iob_stack_up AGENT_CONF: the stack of most end-to-end tests: iobatchd
# (agent_start AGENT_CONF) named to the shims by IOBATCH_AGENT_SOCKET in
# containerd's environment, then iob_stack_ctr with fio in the rootfs.
# Bails out naming what did not start; the EXIT trap stops all of it.
iob_stack_up() {
  agent_start "$1" || bail "iobatchd did not start"
  export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
  iob_stack_ctr fio
}

# cg_empty DIR: kill what is in a cgroup and wait until it is empty (5 s
# at most); 0 when it is (or is gone)
cg_empty() {
  for _ in $(seq 1 100); do
    [ -d "$1" ] || return 0
    [ -z "$(cat "$1/cgroup.procs" 2>/dev/null)" ] && return 0
    xargs -r kill -9 <"$1/cgroup.procs" 2>/dev/null
    sleep 0.05
  done
  return 1
}

# cg_remove DIR: kill what is left in a cgroup, wait until it is empty,
# remove it.
cg_remove() {
  cg_empty "$1" && [ -d "$1" ] && rmdir "$1"
  return 0
}

# cg_make DIR: a fresh cgroup, removed at exit (call it in this shell, not
# in a $(...) subshell, so that the at_exit registration sticks)
cg_make() {
  mkdir -p "$1"
  at_exit "cg_remove '$1'"
}

# cg_run DIR CMD...: start CMD in the cgroup DIR (that hierarchy's only),
# echo its pid
cg_run() {
  local cg=$1
  shift
  sh -c "echo \$\$ > '$cg/cgroup.procs' && exec \"\$@\"" sh "$@" >/dev/null 2>&1 &
  echo $!
}
