#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatchd's Prometheus endpoint (config key `metrics`) end to end: on a
# unix socket and on a loopback port, the numbers move as containers are
# registered, admitted, held, cancelled (the oldest pending one's wait,
# the batcher's run times, the build); 404/405/HEAD; a silent client
# stalls neither the API nor other scrapes; SIGHUP moves the endpoint (and
# keeps it on a bad value); a non-loopback address is refused at start;
# SIGTERM removes the socket and closes the port.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 52

iob_need curl
MSOCK=$IOB_T/metrics.sock
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# scrape: the body over the unix socket (or $1 = URL over TCP)
scrape() {
  if [ $# -gt 0 ]; then curl -sS --max-time 10 "$1"; else
    curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics; fi
}
# metric 'NAME{LABELS}' [URL]: its value in a fresh scrape
metric() {
  local m=$1; shift
  scrape "$@" | awk -v m="$m" '$1 == m { print $2 }'
}

agent_start "policy = paper
alpha = 0.6
metrics = unix:$MSOCK" || bail "iobatchd did not start"
is "$(stat -c %a "$MSOCK")" "600" "metrics socket is 0600 like the API socket"
hdr=$(curl -sS --max-time 10 -D - -o "$IOB_T/body" --unix-socket "$MSOCK" http://x/metrics | tr -d '\r')
like "$hdr" "^HTTP/1.1 200 OK" "GET /metrics answers 200"
like "$hdr" "Content-Type: text/plain; version=0.0.4; charset=utf-8" "with the 0.0.4 content type"
len=$(grep -i '^Content-Length:' <<<"$hdr" | awk '{ print $2 }')
is "$len" "$(stat -c %s "$IOB_T/body")" "Content-Length matches the body"
is "$(grep -c '^iobatch_containers{' "$IOB_T/body")" "14" "every state x class gauge is there"
is "$(metric 'iobatch_containers{state="pending",class="rand-write"}')" "0" "zero series are present"
like "$(grep '^iobatch_info' "$IOB_T/body")" 'policy="paper",matrix="defaults",sampler="[^"]+"} 1' "info names policy, matrix, sampler"
read -r _ ver rev < <(iobatchd --version | tr -d '()' | sed 's/ git / /')
is "$(grep '^iobatch_build_info' "$IOB_T/body")" "iobatch_build_info{version=\"$ver\",revision=\"$rev\"} 1" \
  "build_info carries what iobatchd --version says"
is "$(metric iobatch_pending_oldest_seconds)" "0.000" "nothing pending: the oldest pending wait is 0"
is "$(grep -c '^iobatch_admissions_total{how=' "$IOB_T/body")" "0" "the admission label is reason, not how"

# A lone seq-write is admitted at once: nothing running.
ctl register sw --class seq-write --key wk-seq >/dev/null
ctl admit sw >/dev/null
is "$(metric iobatch_registrations_total)" "1" "a registration is counted"
is "$(metric 'iobatch_admissions_total{reason="nothing_running"}')" "1" "admitted: nothing_running +1"
is "$(metric iobatch_wait_seconds_count)" "1" "wait histogram count +1"
is "$(metric 'iobatch_containers{state="running",class="seq-write"}')" "1" "running seq-write 1"

# A rand-write beside it is held: pending 1, then 0 when the seq-write exits.
ctl register rw --class rand-write --key wk-rand >/dev/null
iobatchctl admit rw >"$IOB_T/rw.out" 2>&1 &
rw_pid=$!
wait_for 5 '[ -n "$(agent_field rw conflict)" ]'
is "$(metric 'iobatch_containers{state="pending",class="rand-write"}')" "1" "held rand-write: pending 1"
is "$(metric iobatch_wait_seconds_count)" "1" "no wait observed while it is held"
wait_for 5 'awk -v s="$(metric iobatch_pending_oldest_seconds)" "BEGIN { exit !(s > 0) }"'
o1=$(metric iobatch_pending_oldest_seconds)
sleep 0.2
o2=$(metric iobatch_pending_oldest_seconds)
awk -v a="$o1" -v b="$o2" 'BEGIN { exit !(a > 0 && b > a) }'
is "$?" "0" "the oldest pending wait grows while it is held ($o1 s, then $o2 s)"
pc=$(metric iobatch_plan_duration_seconds_count)
plans=$(ctl status --json | jq .plans)
[ "${pc:-0}" -ge 1 ] && [ "$pc" -le "$plans" ]
is "$?" "0" "every batcher run is timed: $pc of the $plans plans status counts so far"
ctl exited sw
wait $rw_pid
is "$?" "0" "its Admit returns after the seq-write exits"
is "$(metric 'iobatch_containers{state="pending",class="rand-write"}')" "0" "pending 1 -> 0"
is "$(metric 'iobatch_containers{state="running",class="rand-write"}')" "1" "running rand-write 1"
is "$(metric 'iobatch_containers{state="running",class="seq-write"}')" "0" "the exited one is gone"
adm=$(scrape | awk '$1 ~ /^iobatch_admissions_total/ { s += $2 } END { print s }')
is "$adm" "2" "admissions_total sums to 2"
is "$(metric iobatch_wait_seconds_count)" "2" "wait histogram count 2"
sum=$(metric iobatch_wait_seconds_sum)
awk -v s="$sum" 'BEGIN { exit !(s > 0) }'
is "$?" "0" "wait sum grew (${sum} s)"
is "$(metric 'iobatch_wait_seconds_bucket{le="+Inf"}')" "2" "+Inf bucket equals the count"
is "$(metric iobatch_pending_oldest_seconds)" "0.000" "admitted: nothing pending, 0 again"
scrape >"$IOB_T/body"
pc=$(awk '$1 == "iobatch_plan_duration_seconds_count" { print $2 }' "$IOB_T/body")
is "$(awk '$1 == "iobatch_plan_duration_seconds_bucket{le=\"+Inf\"}" { print $2 }' "$IOB_T/body")" "$pc" "plan histogram: +Inf bucket equals the count ($pc)"
awk '$1 ~ /^iobatch_plan_duration_seconds_bucket/ { if ($2 < last) bad = 1; last = $2 } $1 == "iobatch_plan_duration_seconds_sum" { s = $2 } END { exit !(bad == 0 && s > 0) }' "$IOB_T/body"
is "$?" "0" "plan histogram: cumulative buckets, a sum above 0"

# Cancel a registered container (from another connection: the one that
# registered it has closed; agent-owner.sh has the one still open).
ctl register sw2 --class seq-write >/dev/null
ctl cancel sw2
is "$(metric iobatch_cancellations_total)" "1" "a cancellation is counted"
is "$(metric 'iobatch_containers{state="pending",class="seq-write"}')" "0" "and it is not pending"

# Other paths and methods.
code() { curl -s --max-time 10 -o /dev/null -w '%{http_code}' --unix-socket "$MSOCK" "$@"; }
is "$(code http://x/other)" "404" "another path is 404"
is "$(code -X POST http://x/metrics)" "405" "POST is 405"
is "$(curl -s --max-time 10 -I --unix-socket "$MSOCK" http://x/metrics | head -1 | tr -d '\r')" \
  "HTTP/1.1 200 OK" "HEAD answers 200"
# raw BYTES: send them as they are, print the status line of the answer
raw() {
  python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1"))
print(s.makefile("rb").readline().decode().strip())' "$MSOCK" "$1"
}
is "$(raw 'GET /metrics HTTP/1.1\r\nBad header\r\n\r\n')" "HTTP/1.1 400 Bad Request" "a header line without a colon is 400"
is "$(raw 'GET /metrics\r\n\r\n')" "HTTP/1.1 400 Bad Request" "HTTP/0.9 is 400"
is "$(raw '\x16\x03\x01\x00\xff\x01')" "HTTP/1.1 400 Bad Request" "binary junk (a TLS hello) is 400"

# A client that connects and sends nothing stalls nobody.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(4)' "$MSOCK" &
silent=$!
sleep 0.3
st=$(ctl status --json | jq -r '.containers | length')
kill -0 $silent 2>/dev/null
silent_alive=$?
is "$st:$silent_alive" "1:0" "iobatchctl status answers while a silent client hangs"
is "$(metric iobatch_registrations_total)" "3" "and so does another scrape"
kill $silent 2>/dev/null; wait $silent 2>/dev/null

# SIGHUP moves the endpoint to a loopback port; a bad value keeps it there.
PORT=$(free_port)
sed -i "s|^metrics = .*|metrics = 127.0.0.1:$PORT|" "$IOB_T/agent.conf"
kill -HUP "$AGENT_PID"
wait_for 5 '[ -n "$(metric iobatch_registrations_total "http://127.0.0.1:$PORT/metrics" 2>/dev/null)" ]'
is "$(metric iobatch_registrations_total "http://127.0.0.1:$PORT/metrics")" "3" "SIGHUP: the counters answer on 127.0.0.1:$PORT"
[ ! -e "$MSOCK" ]
is "$?" "0" "and the old unix socket is gone"
sed -i "s|^metrics = .*|metrics = 10.1.2.3:$PORT|" "$IOB_T/agent.conf"
kill -HUP "$AGENT_PID"
wait_for 5 'grep -q "reload failed" "$AGENT_LOG"'
like "$(grep 'reload failed' "$AGENT_LOG" | tail -1)" "'metrics': not a loopback address" "a non-loopback value on SIGHUP is refused"
is "$(metric iobatch_registrations_total "http://127.0.0.1:$PORT/metrics")" "3" "and the endpoint stays"
ctl exited rw
agent_stop
is "$AGENT_RC" "0" "SIGTERM: clean exit"
curl -s --max-time 5 -o /dev/null "http://127.0.0.1:$PORT/metrics"
isnt=$?
[ "$isnt" -ne 0 ]
is "$?" "0" "and the port is closed"

# Started on a loopback port directly; SIGTERM unlinks a unix socket.
PORT=$(free_port)
agent_start "metrics = 127.0.0.1:$PORT" || bail "iobatchd did not start on a port"
ctl register a1 --class rand-read >/dev/null
is "$(metric 'iobatch_containers{state="pending",class="rand-read"}' "http://127.0.0.1:$PORT/metrics")" "0" \
  "127.0.0.1:PORT at start answers"
ctl cancel a1
agent_stop
is "$AGENT_RC" "0" "clean exit from a port"
agent_start "metrics = unix:$MSOCK" || bail "iobatchd did not start on a unix socket"
agent_stop
is "$AGENT_RC" "0" "clean exit from a unix socket"
[ ! -e "$MSOCK" ] && [ ! -e "$AGENT_SOCK" ]
is "$?" "0" "SIGTERM unlinks the metrics socket"
# Under B=build-asan a leak or a sanitizer report shows in the log.
is "$(grep -c Sanitizer "$AGENT_LOG")" "0" "no sanitizer report in the agent's log"

# A non-loopback address is refused at start, naming the key.
: >"$AGENT_LOG"
if agent_start "metrics = 0.0.0.0:$PORT" 2>/dev/null; then started=yes; else started=no; fi
is "$started" "no" "metrics = 0.0.0.0:PORT: iobatchd does not start"
like "$(cat "$AGENT_LOG")" "invalid value '0.0.0.0:$PORT' for 'metrics': not a loopback address" \
  "the error names the key and why"

tap_done
