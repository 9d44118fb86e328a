#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does the agent's BPF program count per cgroup what io.stat does, on a
# pure cgroup v2 machine (issue #22: may `sampler = auto` pick bpf there)?
# Inside the VM of tests/vm (qemu TCG, the disk an emulated NVMe drive,
# ext4), for each workload in a fresh cgroup of its own, tests/blklat-cmp
# (tests/tools/blklat_cmp.c) reads the cgroup's io.stat and the program's
# map entry together once a second; the totals and each window's bytes
# are compared:
#   direct-write   1 MiB O_DIRECT sequential writes
#   fsync-write    64 KiB buffered writes, fsync every 16 (the writer
#                  issues its writeback)
#   buffered-write 64 KiB buffered writes, no fsync: the kernel's flusher
#                  (a sync from the root cgroup after the writer exits)
#                  writes them back; v1 charges that to the root cgroup
#   read           64 KiB buffered sequential reads, page cache dropped
#                  first (readahead)
#   rand-read      4 KiB O_DIRECT random reads, queue depth 1
# Writes bench/results/sampler-v2.json and prints a markdown summary
# (bench/results/sampler-v2.md is written from it by hand).
#
#   make && bench/sampler-v2.sh
#
# Environment: SIZE (fio --size per workload, 128M), RUNTIME (fio
# --runtime cap, 30 s), OUT (bench/results/sampler-v2.json), B (build),
# VM_TIMEOUT (1080 s).  TCG is slow: rates mean nothing here, counts do.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
OUT=${OUT:-$TOP/bench/results/sampler-v2.json}
[ -x "$B/tests/blklat-cmp" ] || { echo "sampler-v2: build $B/tests/blklat-cmp first (make)" >&2; exit 1; }
# shellcheck source=bench/vm-scratch.sh
. "$TOP/bench/vm-scratch.sh"
vm_scratch smpv2
cat >"$G/t-sampler-v2.sh" <<GUEST
#!/usr/bin/env bash
# guest: io.stat and the BPF map of the same cgroups, window by window
echo "1..1"
CMP=/iobatch/build/tests/blklat-cmp
D=/data/smpv2
SIZE=${SIZE:-128M}
RUNTIME=${RUNTIME:-30}
GUEST
cat >>"$G/t-sampler-v2.sh" <<'GUEST'
mkdir -p "$D"
echo "#RAW kernel $(uname -r)"
rc=0
# run_case NAME SYNC FIO_ARGS...: the workload in a fresh cgroup; SYNC 1:
# a sync from the root cgroup once it has exited
run_case() {
  local name=$1 sync=$2 cg=/sys/fs/cgroup/iobcmp-$1 p
  shift 2
  mkdir "$cg" || { rc=1; return; }
  sync
  echo 3 >/proc/sys/vm/drop_caches
  "$CMP" 1000 0 "$cg" >"/tmp/cmp-$name" 2>"/tmp/cmp-$name.err" &
  p=$!
  sleep 2
  sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
    fio --name="$name" --runtime="$RUNTIME" --size="$SIZE" --ioengine=psync "$@" \
    >"/tmp/fio-$name" 2>&1 || { rc=1; sed "s/^/# fio $name: /" "/tmp/fio-$name"; }
  [ "$sync" = 1 ] && sync
  sleep 3
  kill -TERM "$p"
  wait "$p" || { rc=1; sed "s/^/# blklat-cmp $name: /" "/tmp/cmp-$name.err"; }
  rmdir "$cg"
  sed "s/^/#RAW $name /" "/tmp/cmp-$name"
  rm -f "$D/$name"
}
fio --name=prep --filename="$D/readfile" --rw=write --bs=1M --size="$SIZE" --direct=1 >/dev/null 2>&1 || rc=1
run_case direct-write 0 --filename="$D/direct-write" --rw=write --bs=1M --direct=1
run_case fsync-write 0 --filename="$D/fsync-write" --rw=write --bs=64k --direct=0 --fsync=16
run_case buffered-write 1 --filename="$D/buffered-write" --rw=write --bs=64k --direct=0
run_case read 0 --filename="$D/readfile" --rw=read --bs=64k --direct=0
run_case rand-read 0 --filename="$D/readfile" --rw=randread --bs=4k --direct=1 --iodepth=1
rm -f "$D/readfile"
if [ $rc -eq 0 ]; then echo "ok 1 - every workload measured"; else echo "not ok 1 - a workload failed"; fi
GUEST
chmod +x "$G/t-sampler-v2.sh"
rc=0
VM_CACHE=$TOP/tests/vm/cache B=$B VM_TIMEOUT=${VM_TIMEOUT:-1080} VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-1000} \
  "$T/tests/vm/run.sh" >"$T/tap" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  echo "sampler-v2: the VM run failed; its TAP:" >&2
  grep -v '^#RAW ' "$T/tap" | tail -40 >&2
  exit $rc
fi
COMMIT=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$T/tap" "$OUT" "$COMMIT" "SIZE=${SIZE:-128M} RUNTIME=${RUNTIME:-30}" <<'PY'
import datetime, json, statistics, sys

tap, out, commit, env = sys.argv[1:5]
kernel, rows = None, {}
for line in open(tap, encoding="utf-8", errors="replace"):
    if not line.startswith("#RAW "):
        continue
    _, case, rest = line.rstrip("\n").split(" ", 2)
    if case == "kernel":
        kernel = rest
        continue
    rows.setdefault(case, []).append(json.loads(rest))

NAMES = ["rbytes", "wbytes", "rios", "wios"]
DESC = {
    "direct-write": "1 MiB O_DIRECT sequential writes",
    "fsync-write": "64 KiB buffered writes, fsync every 16",
    "buffered-write": "64 KiB buffered writes, no fsync; written back by the kernel (a sync from the root cgroup)",
    "read": "64 KiB buffered sequential reads, page cache dropped first",
    "rand-read": "4 KiB O_DIRECT random reads, queue depth 1",
}
cases, worst = {}, 0.0
for case, rs in rows.items():
    first, last = rs[0], rs[-1]
    tot = {src: dict(zip(NAMES, (b - a for a, b in zip(first[src], last[src]))))
           for src in ("iostat", "bpf")}
    ib = tot["iostat"]["rbytes"] + tot["iostat"]["wbytes"]
    bb = tot["bpf"]["rbytes"] + tot["bpf"]["wbytes"]
    diff = 100.0 * (bb - ib) / ib if ib else None
    ii = tot["iostat"]["rios"] + tot["iostat"]["wios"]
    bi = tot["bpf"]["rios"] + tot["bpf"]["wios"]
    # each window's bytes, where io.stat saw at least 1 MiB
    wd = []
    for a, b in zip(rs, rs[1:]):
        wi = sum(b["iostat"][:2]) - sum(a["iostat"][:2])
        wb = sum(b["bpf"][:2]) - sum(a["bpf"][:2])
        if wi >= 1 << 20:
            wd.append(100.0 * (wb - wi) / wi)
    cases[case] = {
        "workload": DESC.get(case, case),
        "windows": len(rs) - 1,
        "iostat": tot["iostat"],
        "bpf": tot["bpf"],
        "bytes_diff_pct": round(diff, 3) if diff is not None else None,
        "bpf_requests_per_iostat_io": round(bi / ii, 3) if ii else None,
        "busy_windows": len(wd),
        "window_diff_pct_median": round(statistics.median(wd), 2) if wd else None,
        "window_diff_pct_max_abs": round(max(abs(x) for x in wd), 2) if wd else None,
    }
    if diff is not None:
        worst = max(worst, abs(diff))
TOL = 3.0
doc = {
    "benchmark": "sampler-v2",
    "command": f"bench/sampler-v2.sh ({env})",
    "date": datetime.date.today().isoformat(),
    "commit": commit,
    "conditions": "tests/vm guest: qemu TCG, 2 vCPUs, pure cgroup v2 (io memory pids cpu), ext4 on an emulated NVMe drive; 1 s windows read by tests/blklat-cmp",
    "kernel": kernel,
    "tolerance_pct": TOL,
    "worst_bytes_diff_pct": round(worst, 3),
    "agree": bool(cases) and all(c["bytes_diff_pct"] is not None and abs(c["bytes_diff_pct"]) <= TOL for c in cases.values()),
    "cases": cases,
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print(f"kernel {kernel}; agree within {TOL}%: {doc['agree']} (worst {worst:.3f}%)")
print("| workload | io.stat bytes | BPF bytes | diff | BPF requests / io.stat ios | busy windows: median, max diff |")
print("|---|---:|---:|---:|---:|---|")
for case, c in cases.items():
    ib = c["iostat"]["rbytes"] + c["iostat"]["wbytes"]
    bb = c["bpf"]["rbytes"] + c["bpf"]["wbytes"]
    print(f"| {case} | {ib} | {bb} | {c['bytes_diff_pct']}% | {c['bpf_requests_per_iostat_io']} | "
          f"{c['busy_windows']}: {c['window_diff_pct_median']}%, {c['window_diff_pct_max_abs']}% |")
PY
