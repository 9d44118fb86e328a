#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# metrics_group (issue 23 item 12): the agent's metrics on a unix socket
# in a directory of its own, readable by one group, as the DaemonSet's
# non-root metrics proxy reads it.  A private agent with its API socket in
# D/api and its metrics in D/metrics (D searchable by all, as a pod's
# hostPath mounts make them): the metrics socket is 0660 and the directory
# 0750, both of the group (the directory made so from a kubelet's 0755
# root:root); a non-root uid in the group scrapes, one outside it cannot
# connect; neither can open the API socket; the metrics directory may not
# be the API socket's; SIGHUP takes the group away (0600, root only).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 13

iob_need curl setpriv socat
[ "$(id -u)" = 0 ] || bail "needs root (other uids connect)"
GID=4264 # the metrics group; no user of this host has it
PROXY_UID=65532
D=$(mktemp -d /tmp/iobmg.XXXXXX)
at_exit "rm -rf '$D'"
chmod 0711 "$D"
AGENT_SOCK=$D/api/iobatchd.sock
printf '#!/bin/sh\nexec "%s" --socket "%s" "$@"\n' "$IOB_B/bin/iobatchctl" "$AGENT_SOCK" \
  >"$IOB_T/ctl-bin/iobatchctl"
MDIR=$D/metrics
MSOCK=$MDIR/metrics.sock
mkdir -m 0755 "$MDIR" # what the kubelet's hostPath DirectoryOrCreate makes

# as UID GID CMD...: run CMD as a non-root uid whose only group is GID
as() {
  local u=$1 g=$2
  shift 2
  setpriv --reuid "$u" --regid "$g" --clear-groups "$@"
}
# connect_as UID GID PATH: "ok" or the errno name of connect(2) to PATH
connect_as() {
  as "$1" "$2" /usr/bin/python3 -c 'import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$3"
}
scrape_as() { as "$1" "$2" curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics; }

agent_start "metrics = unix:$MSOCK
metrics_group = $GID" || bail "iobatchd did not start"
is "$(stat -c '%a %U %g' "$MSOCK")" "660 root $GID" "the metrics socket: 0660, root's, of group metrics_group"
is "$(stat -c '%a %U %g' "$MDIR")" "750 root $GID" "its directory: made 0750 and of the group (the kubelet made it 0755 root:root)"
is "$(stat -c '%a %U' "$D/api")" "700 root" "the API socket's directory: 0700, root only"
like "$(scrape_as $PROXY_UID $GID)" "iobatch_build_info" "a non-root uid in the group scrapes the metrics"
# A client that half-closes after its request (socat does, at the end of
# its input): sent while the agent is stopped, so that the request and the
# end of input are read in one go.
kill -STOP "$AGENT_PID"
as $PROXY_UID $GID /usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
s.shutdown(socket.SHUT_WR)
print("sent", flush=True)
s.settimeout(20)
print(s.makefile("rb").readline().decode().strip(), flush=True)' "$MSOCK" >"$IOB_T/half" 2>&1 &
half=$!
wait_for 10 'grep -q sent "$IOB_T/half"'
kill -CONT "$AGENT_PID"
wait $half
is "$(sed -n 2p "$IOB_T/half")" "HTTP/1.1 200 OK" \
  "a client that half-closes after its request (socat, which the DaemonSet's proxy is) is answered"
is "$(connect_as $PROXY_UID $GID "$AGENT_SOCK")" "EACCES" "that uid cannot connect to the API socket"
is "$(as $PROXY_UID $GID "$IOB_B/bin/iobatchctl" --socket "$AGENT_SOCK" status >/dev/null 2>&1; echo $?)" "1" \
  "nor can iobatchctl as that uid reach the agent"
is "$(connect_as $PROXY_UID $((GID + 1)) "$MSOCK")" "EACCES" "a non-root uid outside the group cannot connect to the metrics socket"

# SIGHUP without the group: back to root only.
sed -i "/^metrics_group/d" "$IOB_T/agent.conf"
kill -HUP "$AGENT_PID"
wait_for 10 '[ "$(stat -c %a "$MSOCK" 2>/dev/null)" = 600 ]'
is "$(stat -c '%a %g' "$MSOCK")" "600 0" "SIGHUP without metrics_group: the socket is 0600 again"
is "$(connect_as $PROXY_UID $GID "$MSOCK")" "EACCES" "and the group's uid is refused"
agent_stop

# The metrics socket beside the API socket, with a group: refused at start.
cat >"$IOB_T/same.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
metrics = unix:$D/api/metrics.sock
metrics_group = $GID
CONF
out=$(timeout 30 iobatchd -c "$IOB_T/same.conf" 2>&1)
rc=$?
is "$rc" "1" "metrics_group with the metrics socket in the API socket's directory: no start"
like "$out" "needs a directory of its own, not the API socket's" "and the message says why"
ok "the API socket's directory stayed 0700" test "$(stat -c %a "$D/api")" = 700
tap_done
