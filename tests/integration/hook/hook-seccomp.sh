#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch-hook runs under a seccomp allow-list: a syscall off the list
# (the hidden --selftest-seccomp makes one after the filter is in) kills it
# with SIGSYS; the normal path still works under the same filter; hostile
# input gets a one-line error and a non-zero exit; our own failures (no
# agent, a pid we cannot resolve, input over our limits) one line and exit
# 0 (fail open), or 1 with --fail-closed.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 19
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "no $HOOK (build first)"

# (the braces catch bash's own "Bad system call" report)
{ (exec "$HOOK" --selftest-seccomp 2>"$IOB_T/err"); rc=$?; } 2>/dev/null
is "$rc" "$((128 + 31))" "forbidden syscall after the filter: killed by SIGSYS (exit $rc)"
is "$(cat "$IOB_T/err")" "" "killed before it could print anything"
{ (exec "$HOOK" --selftest-socket 2>"$IOB_T/err"); rc=$?; } 2>/dev/null
is "$rc" "$((128 + 31))" "an AF_INET socket after the filter: killed by SIGSYS (exit $rc)"
# capabilities after confinement: CAP_DAC_READ_SEARCH and
# CAP_SYS_PTRACE (runtime-hook/hook.h HOOK_CAPS_KEPT_HEX), in the effective,
# permitted and bounding sets alike; this shell has them all
caps=$("$HOOK" --selftest-caps 2>&1)
kept=0000000000080004 # HOOK_CAPS_KEPT_HEX (runtime-hook/hook.h; the VM has no source tree)
is "$(awk '$1 == "CapEff:" { print $2 }' <<<"$caps")" "$kept" "effective capabilities: the two it needs ($kept)"
is "$(awk '$1 == "CapPrm:" || $1 == "CapBnd:" { print $2 }' <<<"$caps" | sort -u)" "$kept" \
  "permitted and bounding sets: the same, nothing to regain"

# the real work under the filter: this shell's own process as the container
mkdir -p "$IOB_T/rec" "$IOB_T/bundle"
echo '{"process":{"args":["sh","-c","true"]}}' >"$IOB_T/bundle/config.json"
state() { printf '{"ociVersion":"1.0.2","id":"%s","pid":%s,"bundle":"%s"%s}' "$1" "$2" "$IOB_T/bundle" "${3:-}"; }
state ok1 $$ | "$HOOK" --record-dir "$IOB_T/rec" --socket "$IOB_T/none.sock" >"$IOB_T/out" 2>"$IOB_T/err"
is "$?" 0 "hook succeeds under its own filter (no agent: fail open)"
is "$(cat "$IOB_T/out")" "" "nothing on stdout"
like "$(cat "$IOB_T/err")" "^iobatch-hook: container 'ok1': no agent at '$IOB_T/none.sock'; the container goes on without iobatch \(fail open\)$" \
  "one line on stderr: no agent, fail open"
like "$(cat "$IOB_T/rec/ok1.json" 2>/dev/null)" '"workload":"sh -c true"' "record written, workload key from process.args"

# hostile input: one line on stderr, exit 1, no record
hostile() { # name input want-regex
  printf '%s' "$2" | "$HOOK" --record-dir "$IOB_T/rec" --socket "$IOB_T/none.sock" >/dev/null 2>"$IOB_T/err"
  local rc=$? lines
  lines=$(wc -l <"$IOB_T/err")
  if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && grep -qE "$3" "$IOB_T/err"; then _tap_report 0 "$1"
  else diag "rc=$rc lines=$lines: $(cat "$IOB_T/err")"; _tap_report 1 "$1"; fi
}
hostile "truncated JSON" '{"ociVersion":"1.0.2","id":"x","pid":' '^iobatch-hook: invalid state JSON'
hostile "pid of the wrong type" "$(state x '"12"')" "'pid' must be an integer"
# ours, not the runtime's: fail open (exit 0, one line), or closed
opened() { # name input want-regex [hook flags]
  printf '%s' "$2" | "$HOOK" --record-dir "$IOB_T/rec" --socket "$IOB_T/none.sock" ${4:-} >/dev/null 2>"$IOB_T/err"
  local rc=$? lines want=0
  [ -n "${4:-}" ] && want=1
  lines=$(wc -l <"$IOB_T/err")
  if [ "$rc" -eq $want ] && [ "$lines" -eq 1 ] && grep -qE "$3" "$IOB_T/err"; then _tap_report 0 "$1"
  else diag "rc=$rc lines=$lines: $(cat "$IOB_T/err")"; _tap_report 1 "$1"; fi
}
opened "pid that does not exist: fail open" "$(state x 2147483646)" "cannot resolve the cgroup of pid 2147483646.*\(fail open\)$"
opened "the same with --fail-closed: exit 1" "$(state x 2147483646)" "cannot resolve the cgroup of pid 2147483646.*\(fail closed\)$" --fail-closed
hostile "bundle with .." '{"ociVersion":"1.0.2","id":"x","pid":1,"bundle":"/tmp/../etc"}' "without '\.\.'"
hostile "declared class unknown" "$(state x $$ ',"annotations":{"io.iobatch.class":"turbo"}')" "invalid annotation 'io.iobatch.class'"
hostile "latency target without a unit" "$(state x $$ ',"annotations":{"io.iobatch.latency-target":"5"}')" "invalid annotation 'io.iobatch.latency-target'"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$IOB_T/big"
"$HOOK" <"$IOB_T/big" 2>"$IOB_T/err" >/dev/null
rc=$?
like "$rc:$(cat "$IOB_T/err")" '^0:iobatch-hook: invalid state: larger than 1048576 bytes.*\(fail open\)$' "2 MB of input: over our limit, not read, fail open"
is "$(ls "$IOB_T/rec")" "ok1.json" "no record for any refused input"

# the agent seam (live and stale sockets are in tests/unit/test_hook_state.c)
state ag3 $$ | "$HOOK" --socket "/$(printf 'x%.0s' $(seq 1 200))" >/dev/null 2>"$IOB_T/err"
like "$?:$(cat "$IOB_T/err")" "^2:iobatch-hook: invalid agent socket" "socket path too long for a unix address: a usage error"
tap_done
