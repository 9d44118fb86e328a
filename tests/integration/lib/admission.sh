# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers of the end-to-end tests through containerd, sourced by
# iob_stack_ctr (lib/agent.sh) once IOB_SOCK, NS, IOB_T and CTR are set.

# Shim daemons of this containerd (their argv[0] may be /proc/self/exe).
our_shims() { pgrep -f -- "-address $IOB_SOCK( |\$)" | wc -l; }

# no_leftovers ID...: no shim socket, bundle or runc state for any of them,
# and no mount under this test's directory.
no_leftovers() {
  local bad=0 id h
  for id in "$@"; do
    h=$(printf '%s' "$IOB_SOCK/$NS/$id" | sha256sum | cut -d' ' -f1)
    [ -e "/run/containerd/s/$h" ] && { diag "socket left for $id"; bad=1; }
    [ -d "$IOB_T/state/io.containerd.runtime.v2.task/$NS/$id" ] && { diag "bundle left for $id"; bad=1; }
    [ -e "/run/containerd/runc/$NS/$id" ] && { diag "runc state left for $id"; bad=1; }
  done
  grep -q "$IOB_T" /proc/self/mountinfo && { diag "mounts left: $(grep -c "$IOB_T" /proc/self/mountinfo)"; bad=1; }
  return $bad
}

# state ID: the task's status in `ctr task ls` (CREATED, RUNNING, ...).
state() { $CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'; }

# cleanup_ctr ID: kill, delete the task and the container, and its data file.
cleanup_ctr() {
  $CTR task kill -s KILL "$1" >/dev/null 2>&1
  wait_for 10 '[ "$(state '"$1"')" != RUNNING ]'
  $CTR task delete "$1" >/dev/null 2>&1
  $CTR container delete "$1" >/dev/null 2>&1
  rm -f "$R/data/$1"
}
