# The iobatch modes of bench/sched.sh (sourced): availability, containerd
# config, the agent's lifecycle.  Filled in against the agent's real
# interface; until the shim and the agent exist the modes are reported as
# "not run" with the reason (never with made-up numbers).
IOB_SHIM=$TOP/$B/bin/containerd-shim-iobatch-v2
IOB_AGENT=$TOP/$B/bin/iobatchd
IOB_HOOK=$TOP/$B/bin/iobatch-hook
IOB_AGENT_PID=

# Extra containerd config (none needed: ctr --runtime io.containerd.iobatch.v2
# finds containerd-shim-iobatch-v2 on PATH, which lib.sh sets to $B/bin).
iobatch_containerd_toml() { :; }

# iobatch_unavailable MODE: prints why MODE cannot run and returns 0, or
# returns 1 when it can.
iobatch_unavailable() {
  local f
  for f in "$IOB_SHIM" "$IOB_AGENT" "$IOB_HOOK"; do
    if [ ! -x "$f" ]; then
      echo "'${f#"$TOP"/}' not built (the shim, hook and agent have not landed)"
      return 0
    fi
  done
  return 1
}

iobatch_describe() {
  [ -x "$IOB_AGENT" ] || { echo "none"; return; }
  echo "iobatchd at commit $(git -C "$TOP" log -1 --format=%h -- agent batcher shim 2>/dev/null)"
}

iobatch_agent_start() {
  echo "sched: iobatch_agent_start: not wired to the agent yet" >&2
  return 1
}

iobatch_agent_stop() { :; }
