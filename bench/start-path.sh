#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where the time of `ctr run --rm ... /bin/true` goes, ours vs
# containerd-shim-runc-v2, on the same private containerd, REPS runs
# interleaved, no agent.  The kernel's sched_process_exec and
# sched_process_exit tracepoints (perf record -a) time each run's
# processes; the phases between them, median per shim:
#   before_shim     ctr starts .. containerd starts the shim binary
#   shim_to_create  the shim starts .. it starts `runc create`
#   runc_create     `runc create` runs (runc init included)
#   create_to_start `runc create` exits .. `runc start` starts (the shim
#                   answers Create, ctr asks Start)
#   runc_start      `runc start` runs
#   exit_to_delete  the container's process exits .. `runc delete` starts
#                   (the exit event, ctr's Wait returns, it asks Delete)
#   runc_delete     `runc delete` runs
#   after_delete    `runc delete` exits .. ctr exits (the shim's own
#                   delete action, Shutdown, containerd's cleanup)
#   total           ctr starts .. ctr exits
# and what runc's three calls add up to.  The tracepoints cost both shims
# alike; the totals are not the uncontended lifecycle (bench/shim-cost.sh
# and bench/agent-overhead.sh measure that).
# Writes bench/results/start-path.json and .md.
# Usage: bench/start-path.sh   (env: REPS=15 B=build OUT_DIR=bench/results)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-15}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
[ "$(id -u)" = 0 ] || { echo "start-path: must run as root (containerd, perf -a)" >&2; exit 1; }
for t in perf python3 jq ctr containerd containerd-shim-runc-v2; do
  command -v "$t" >/dev/null || { echo "start-path: '$t' not found (scripts/install-deps.sh)" >&2; exit 1; }
done
[ -x "$B/bin/containerd-shim-iobatch-v2" ] || { echo "start-path: build the shim first (make)" >&2; exit 1; }
source tests/integration/lib/common.sh
trap 'exit 130' INT TERM
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
iob_containerd_start
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
run() { $CTR run --rm --null-io --runtime "io.containerd.$1.v2" --rootfs "$ROOTFS" "$2" /bin/true; }
for i in 1 2 3; do # warm: the binaries and the rootfs in the page cache
  run runc "w-r-$i"
  run iobatch "w-i-$i"
done
cat >"$IOB_T/runs.sh" <<EOF
for i in \$(seq 1 $REPS); do
  $CTR run --rm --null-io --runtime io.containerd.runc.v2 --rootfs $ROOTFS p-runc-\$i /bin/true
  $CTR run --rm --null-io --runtime io.containerd.iobatch.v2 --rootfs $ROOTFS p-iobatch-\$i /bin/true
done
EOF
perf record -q -a -e sched:sched_process_exec,sched:sched_process_exit -o "$IOB_T/perf.data" \
  -- bash "$IOB_T/runs.sh" >/dev/null 2>&1
perf script -i "$IOB_T/perf.data" -F comm,pid,time,event,trace >"$IOB_T/events.txt" 2>/dev/null
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$OUT_DIR"
python3 - "$IOB_T/events.txt" "$(basename "$CTR")" >"$IOB_T/phases.json" <<'PY'
import json, re, statistics, sys
events, ctr_name = sys.argv[1], sys.argv[2]
ev = []
for line in open(events):
    m = re.match(r'\s*(.+?)\s+(\d+)\s+([\d.]+):\s+sched:(\w+):\s+(.*)', line)
    if m:
        comm, pid, t, name, rest = m.groups()
        ev.append((float(t) * 1e3, int(pid), name, rest))
runs, cur = [], None
for e in ev:  # a run starts where the ctr wrapper is executed
    if e[2] == 'sched_process_exec' and re.search(r'filename=\S*/' + re.escape(ctr_name) + r' ', e[3]):
        cur = [e]
        runs.append(cur)
    elif cur is not None:
        cur.append(e)
phases = {'runc': {}, 'iobatch': {}}
for i, r in enumerate(runs):
    shim = 'runc' if i % 2 == 0 else 'iobatch'
    t0, ctr_pid = r[0][0], r[0][1]
    live, runc, shim_t, true_exit, end = {}, [], None, None, None
    for t, pid, name, rest in r:
        if name == 'sched_process_exec':
            f = re.search(r'filename=(\S+)', rest).group(1)
            again = pid in live and live[pid][0].endswith('/runc')  # a wrapper's exec
            if f.endswith('/runc') and not again:
                runc.append([t, None])
            elif '/containerd-shim-' in f and shim_t is None:
                shim_t = t
            live[pid] = (f, len(runc) - 1 if f.endswith('/runc') else -1)
        elif re.search(r'\bpid=%d\b' % pid, rest) and pid in live:  # a process, not a thread
            f, k = live.pop(pid)
            if f.endswith('/runc'):
                runc[k][1] = t
            elif f == '/bin/true':
                true_exit = t
        if name == 'sched_process_exit' and pid == ctr_pid and re.search(r'\bpid=%d\b' % pid, rest):
            end = t
    # runc's calls in order: create, start, delete (the runc shim's delete
    # action runs a fourth)
    if len(runc) < 3 or None in (shim_t, true_exit, end) or None in (c[1] for c in runc[:3]):
        continue
    p = {
        'before_shim': shim_t - t0,
        'shim_to_create': runc[0][0] - shim_t,
        'runc_create': runc[0][1] - runc[0][0],
        'create_to_start': runc[1][0] - runc[0][1],
        'runc_start': runc[1][1] - runc[1][0],
        'exit_to_delete': runc[2][0] - true_exit,
        'runc_delete': runc[2][1] - runc[2][0],
        'after_delete': end - runc[2][1],
        'total': end - t0,
    }
    p['runc_calls'] = p['runc_create'] + p['runc_start'] + p['runc_delete']
    for k, v in p.items():
        phases[shim].setdefault(k, []).append(v)
out = {s: {k: round(statistics.median(v), 2) for k, v in ph.items()} for s, ph in phases.items()}
out['runs'] = {s: len(ph.get('total', [])) for s, ph in phases.items()}
print(json.dumps(out))
PY
jq -n --slurpfile p "$IOB_T/phases.json" --arg date "$(date -u +%FT%TZ)" \
  --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  --arg load0 "$LOAD0" --arg load1 "$LOAD1" --argjson reps "$REPS" \
  '{date: $date, commit: $commit, command: "bench/start-path.sh", reps: $reps,
    load_average_start: $load0, load_average_end: $load1,
    median_ms: {runc_shim: ($p[0].runc | del(.runs)), iobatch: ($p[0].iobatch | del(.runs))},
    runs: $p[0].runs}' >"$OUT_DIR/start-path.json"
{
  echo "# Where a container's start goes (bench/start-path.sh)"
  echo
  jq -r '"\(.date), commit \(.commit), \(.reps) runs of each interleaved, load average \(.load_average_start) .. \(.load_average_end); median ms per phase (tracepoints on: not the uncontended lifecycle)."' "$OUT_DIR/start-path.json"
  echo
  echo "| phase | runc's shim | iobatch | difference |"
  echo "|---|---:|---:|---:|"
  jq -r '.median_ms as $m | $m.runc_shim | keys_unsorted[] as $k |
    "| \($k) | \($m.runc_shim[$k]) | \($m.iobatch[$k]) | \(($m.iobatch[$k] - $m.runc_shim[$k]) * 100 | round / 100) |"' \
    "$OUT_DIR/start-path.json"
} >"$OUT_DIR/start-path.md"
cat "$OUT_DIR/start-path.md"
