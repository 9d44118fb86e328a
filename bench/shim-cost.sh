#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shim cost, ours vs containerd-shim-runc-v2, in the same run on the same
# private containerd:
#   - RSS and PSS per shim process (/proc/PID/smaps_rollup) with N running
#     containers (N = 1, 10, 50), median per shim and total;
#   - `ctr run --rm ... /bin/true` lifecycle, median of REPS interleaved runs;
#   - CPU time of an idle shim over IDLE_SECONDS.
# Writes bench/results/shim-cost.json and bench/results/shim-cost.md.
# Usage: bench/shim-cost.sh   (env: COUNTS="1 10 50" REPS=20 IDLE_SECONDS=60)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNTS=${COUNTS:-"1 10 50"}
REPS=${REPS:-20}
IDLE_SECONDS=${IDLE_SECONDS:-60}
B=${B:-build}
[ -x "$B/bin/containerd-shim-iobatch-v2" ] || { echo "shim-cost: build the shim first (make)" >&2; exit 1; }
source tests/integration/lib/common.sh
iob_containerd_start
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
RUNTIMES=(io.containerd.runc.v2 io.containerd.iobatch.v2)
short() { case $1 in *runc*) echo runc ;; *) echo iobatch ;; esac; }
out_json=bench/results/shim-cost.json
out_md=bench/results/shim-cost.md

# shim_pids RUNTIME: pids of that runtime's shims serving our containerd
shim_pids() {
  local bin
  bin="containerd-shim-$(short "$1")-v2"
  pgrep -f "^$bin .*-address $IOB_SOCK" || pgrep -f "$bin.*$IOB_SOCK" || true
}
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

declare -A RSS_MED PSS_MED RSS_TOT PSS_TOT NSHIM LIFE_MS CPU_MS
for n in $COUNTS; do
  for rt in "${RUNTIMES[@]}"; do
    s=$(short "$rt")
    for i in $(seq 1 "$n"); do
      $CTR run -d --null-io --runtime "$rt" --rootfs "$ROOTFS" "mem-$s-$n-$i" /bin/sleep 100000 >/dev/null
    done
    sleep 2
    pids=$(shim_pids "$rt")
    rss=() pss=()
    for p in $pids; do rss+=("$(kb "$p" Rss)"); pss+=("$(kb "$p" Pss)"); done
    NSHIM[$s,$n]=${#rss[@]}
    RSS_MED[$s,$n]=$(printf '%s\n' "${rss[@]}" | median)
    PSS_MED[$s,$n]=$(printf '%s\n' "${pss[@]}" | median)
    RSS_TOT[$s,$n]=$(printf '%s\n' "${rss[@]}" | awk '{ t += $1 } END { print t + 0 }')
    PSS_TOT[$s,$n]=$(printf '%s\n' "${pss[@]}" | awk '{ t += $1 } END { print t + 0 }')
    if [ "$n" = "$(echo $COUNTS | awk '{ print $1 }')" ]; then
      # idle CPU of one shim: utime+stime ticks over IDLE_SECONDS
      p=$(echo "$pids" | head -1)
      t0=$(awk '{ print $14 + $15 }' "/proc/$p/stat")
      sleep "$IDLE_SECONDS"
      t1=$(awk '{ print $14 + $15 }' "/proc/$p/stat")
      CPU_MS[$s]=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) ))
    fi
    for i in $(seq 1 "$n"); do $CTR task kill -s KILL "mem-$s-$n-$i" >/dev/null 2>&1 || true; done
    sleep 1
    for i in $(seq 1 "$n"); do
      $CTR task delete "mem-$s-$n-$i" >/dev/null 2>&1 || $CTR task delete -f "mem-$s-$n-$i" >/dev/null 2>&1 || true
      $CTR container delete "mem-$s-$n-$i" >/dev/null 2>&1 || true
    done
  done
done

# lifecycle: interleave the runtimes so drift hits both alike
declare -A TIMES
for r in $(seq 1 "$REPS"); do
  for rt in "${RUNTIMES[@]}"; do
    s=$(short "$rt")
    t0=$(date +%s%N)
    $CTR run --rm --null-io --runtime "$rt" --rootfs "$ROOTFS" "life-$s-$r" /bin/true
    t1=$(date +%s%N)
    TIMES[$s]+="$(( (t1 - t0) / 1000 )) "
  done
done
for s in runc iobatch; do LIFE_MS[$s]=$(printf '%s\n' ${TIMES[$s]} | median | awk '{ printf "%.1f", $1 / 1000 }'); done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'; }
{
  echo "{"
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"command\": \"bench/shim-cost.sh\","
  echo "  \"host\": \"$(uname -r), $(nproc) cpus\","
  echo "  \"memory_kb\": ["
  first=1
  for n in $COUNTS; do for s in runc iobatch; do
    [ $first -eq 1 ] || echo ","
    first=0
    printf '    {"shim": "%s", "containers": %s, "shims": %s, "rss_median": %s, "pss_median": %s, "rss_total": %s, "pss_total": %s}' \
      "$s" "$n" "${NSHIM[$s,$n]}" "${RSS_MED[$s,$n]}" "${PSS_MED[$s,$n]}" "${RSS_TOT[$s,$n]}" "${PSS_TOT[$s,$n]}"
  done; done
  echo
  echo "  ],"
  echo "  \"lifecycle_ms_median\": {\"runc\": ${LIFE_MS[runc]}, \"iobatch\": ${LIFE_MS[iobatch]}, \"reps\": $REPS},"
  echo "  \"idle_cpu_ms\": {\"runc\": ${CPU_MS[runc]}, \"iobatch\": ${CPU_MS[iobatch]}, \"seconds\": $IDLE_SECONDS}"
  echo "}"
} >"$out_json"
{
  echo "Shim cost — \`bench/shim-cost.sh\`, $(date -u +%Y-%m-%d), $(nproc) CPUs, containerd $(containerd --version | awk '{ print $3 }')"
  echo
  echo "| containers | shim | shims | RSS/shim KB (median) | PSS/shim KB (median) | RSS total KB | PSS total KB |"
  echo "|---|---|---|---|---|---|---|"
  for n in $COUNTS; do for s in runc iobatch; do
    echo "| $n | $s | ${NSHIM[$s,$n]} | ${RSS_MED[$s,$n]} | ${PSS_MED[$s,$n]} | ${RSS_TOT[$s,$n]} | ${PSS_TOT[$s,$n]} |"
  done
    echo "| $n | **ratio iobatch/runc** | | $(ratio "${RSS_MED[iobatch,$n]}" "${RSS_MED[runc,$n]}") | $(ratio "${PSS_MED[iobatch,$n]}" "${PSS_MED[runc,$n]}") | $(ratio "${RSS_TOT[iobatch,$n]}" "${RSS_TOT[runc,$n]}") | $(ratio "${PSS_TOT[iobatch,$n]}" "${PSS_TOT[runc,$n]}") |"
  done
  echo
  echo "| \`ctr run --rm /bin/true\` (median of $REPS) | runc shim | iobatch shim | ratio |"
  echo "|---|---|---|---|"
  echo "| lifecycle ms | ${LIFE_MS[runc]} | ${LIFE_MS[iobatch]} | $(ratio "${LIFE_MS[iobatch]}" "${LIFE_MS[runc]}") |"
  echo "| idle CPU ms over ${IDLE_SECONDS}s | ${CPU_MS[runc]} | ${CPU_MS[iobatch]} | |"
} >"$out_md"
cat "$out_md"
