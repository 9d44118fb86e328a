# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # these are read by the scripts that source this file
# The iobatch modes of bench/sched.sh (sourced): availability, the agent's
# lifecycle.  Until the shim asks the agent, the modes are reported as
# "not run" with the reason (never with made-up numbers).
# B: the build directory, relative to the checkout or absolute
case $B in /*) IOB_BIN=$B/bin ;; *) IOB_BIN=$TOP/$B/bin ;; esac
IOB_SHIM=$IOB_BIN/containerd-shim-iobatch-v2
IOB_AGENT=$IOB_BIN/iobatchd
IOB_HOOK=$IOB_BIN/iobatch-hook
# A private agent socket; the shim finds it through IOBATCH_AGENT_SOCKET in
# its environment, which it inherits from our containerd (shim/admission.c).
IOB_AGENT_SOCK=${IOB_AGENT_SOCK:-$IOB_T/iobatchd.sock}
export IOBATCH_AGENT_SOCKET=$IOB_AGENT_SOCK
IOB_AGENT_PID=
IOB_AGENT_DIR=
# Mode `calibrated`: the default policy with this machine's measured matrix.
IOB_CAL_MATRIX=${IOB_CAL_MATRIX:-$TOP/bench/results/penalty-matrix.conf}

# Extra containerd config (none needed: ctr --runtime io.containerd.iobatch.v2
# finds containerd-shim-iobatch-v2 on PATH, which lib.sh sets to $B/bin).
iobatch_containerd_toml() { :; }

# iobatch_unavailable MODE: prints why MODE cannot run and returns 0, or
# returns 1 when it can.
iobatch_unavailable() {
  local f
  if [ "$1" = calibrated ] && [ ! -r "$IOB_CAL_MATRIX" ]; then
    echo "no calibrated matrix '$IOB_CAL_MATRIX' (run bench/calibrate.sh)"
    return 0
  fi
  for f in "$IOB_SHIM" "$IOB_AGENT"; do
    if [ ! -x "$f" ]; then
      echo "'${f#"$TOP"/}' not built (the shim and agent have not landed)"
      return 0
    fi
  done
  if ! grep -qs 'client_admit(' "$TOP"/shim/*.c; then
    echo "the shim does not ask the agent yet (shim/admission.c admits every container at once)"
    return 0
  fi
  if [ -S "$IOB_AGENT_SOCK" ] && "$IOB_BIN/iobatchctl" --socket "$IOB_AGENT_SOCK" status >/dev/null 2>&1; then
    echo "another iobatchd already serves '$IOB_AGENT_SOCK'"
    return 0
  fi
  return 1
}

iobatch_describe() {
  [ -x "$IOB_AGENT" ] || { echo "none"; return; }
  echo "iobatchd, shim and batcher at commit $(git -C "$TOP" log -1 --format=%h -- agent batcher shim 2>/dev/null)${IOB_AGENT_CONF:+ with \"$IOB_AGENT_CONF\"}"
}

# iobatch_agent_start MODE: iobatchd on the shim's socket with MODE's policy;
# one state dir per policy for the whole benchmark, so profiles learned in
# the warm-up and earlier runs carry over (as on a real node).
iobatch_agent_start() {
  local mode=$1 i
  IOB_AGENT_DIR=$IOB_T/agent-$mode
  mkdir -p "$IOB_AGENT_DIR/state" "$(dirname "$IOB_AGENT_SOCK")"
  {
    echo "socket = $IOB_AGENT_SOCK"
    echo "state_dir = $IOB_AGENT_DIR/state"
    echo "sample_period = 1s"
    [ "$mode" != paper ] || echo "policy = paper"
    if [ "$mode" = calibrated ]; then
      # The measured matrix has every sequential pair too (two writers
      # 2.0x, reader and writer 1.2x / 4.3x): use those rather than the
      # single seq_slowdown median (2.2x) that `iobatchctl calibrate`
      # writes beside them.
      # (iobatchctl calibrate writes `seq_pairs = matrix` itself since
      # 80e54e1; older matrix files get it added here.)
      { cat "$IOB_CAL_MATRIX"; grep -q '^seq_pairs' "$IOB_CAL_MATRIX" || printf '\nseq_pairs = matrix\n'; } \
        >"$IOB_AGENT_DIR/matrix.conf"
      echo "matrix = $IOB_AGENT_DIR/matrix.conf"
    elif [ -n "${IOB_MATRIX:-}" ]; then
      echo "matrix = $IOB_MATRIX"
    fi
    # IOB_AGENT_CONF="key = value; key = value": more iobatchd.conf lines
    [ -z "${IOB_AGENT_CONF:-}" ] || tr ';' '\n' <<<"$IOB_AGENT_CONF" | sed 's/^ *//'
  } >"$IOB_AGENT_DIR/iobatchd.conf"
  # IOB_AGENT_DEBUG=1: the agent's debug lines (what each co-run taught)
  "$IOB_AGENT" -c "$IOB_AGENT_DIR/iobatchd.conf" ${IOB_AGENT_DEBUG:+--debug} >>"$IOB_AGENT_DIR/agent.log" 2>&1 &
  IOB_AGENT_PID=$!
  at_exit "iobatch_agent_stop"
  for _ in $(seq 1 100); do
    [ -S "$IOB_AGENT_SOCK" ] && return 0
    kill -0 "$IOB_AGENT_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "sched: iobatchd did not start; log:" >&2
  tail -20 "$IOB_AGENT_DIR/agent.log" >&2
  return 1
}

iobatch_agent_stop() {
  [ -n "$IOB_AGENT_PID" ] || return 0
  kill "$IOB_AGENT_PID" 2>/dev/null || true
  wait "$IOB_AGENT_PID" 2>/dev/null || true
  IOB_AGENT_PID=
  # keep the agent's log next to the results of a failed run
  [ -z "${IOB_AGENT_DIR:-}" ] || cp "$IOB_AGENT_DIR/agent.log" "$IOB_T/out/agent-$(basename "$IOB_AGENT_DIR").log" 2>/dev/null || true
  # AGENT_LOG_DIR=DIR keeps every agent log of the run (they live in the
  # temp dir, which the EXIT trap removes)
  if [ -n "${AGENT_LOG_DIR:-}" ] && [ -n "${IOB_AGENT_DIR:-}" ]; then
    mkdir -p "$AGENT_LOG_DIR"
    cp "$IOB_AGENT_DIR/agent.log" "$AGENT_LOG_DIR/agent-$(basename "$IOB_AGENT_DIR").log" 2>/dev/null || true
  fi
}
