#!/usr/bin/env bash
# libcgroup (libcgroup-dev, a chosen dependency) against cgroupv2/'s
# direct cgroupfs code, for the jobs it could take over (docs/DESIGN.md,
# "cgroupfs without libcgroup"): CPU per call of hierarchy discovery, a
# pid's blkio cgroup and one sample's blkio read (bench/libcgroup/main.c,
# both ways in the same run, median of REPS), and what loading it costs a
# process that would use it (the shim: one per container): the PSS and RSS
# of an idle process linked with it after cgroup_init() against one that
# does not call it (both are the same binary, so the difference is what
# cgroup_init() touches, not the library's mapping: the mapped-but-unused
# pages are counted separately from /proc/PID/smaps).
# Writes bench/results/libcgroup.json.
# Usage: bench/libcgroup.sh   (env: ITER=2000 REPS=5 B=build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
ITER=${ITER:-2000}
REPS=${REPS:-5}
bin=$B/bench/iob-libcgroup
[ -x "$bin" ] || { echo "libcgroup: build first: make $bin" >&2; exit 1; }
command -v jq >/dev/null || { echo "libcgroup: jq is not installed" >&2; exit 1; }
cpu=$("$bin" "$ITER" "$REPS")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/smaps_rollup"; }
# kB of the process's mappings of libcgroup (Pss, Rss)
libkb() {
  awk -v k="$2:" '/^[0-9a-f]+-[0-9a-f]+ / { lib = ($6 ~ /libcgroup/) } lib && $1 == k { s += $2 } END { print s + 0 }' "/proc/$1/smaps"
}
"$bin" --idle-plain &
pids+=($!)
"$bin" --idle-libcgroup &
pids+=($!)
sleep 1
plain=${pids[0]} lib=${pids[1]}
for p in "$plain" "$lib"; do kill -0 "$p" || { echo "libcgroup: idle process $p died" >&2; exit 1; }; done
mem=$(jq -n --argjson pp "$(kb "$plain" Pss)" --argjson pr "$(kb "$plain" Rss)" \
  --argjson lp "$(kb "$lib" Pss)" --argjson lr "$(kb "$lib" Rss)" \
  --argjson llp "$(libkb "$lib" Pss)" --argjson llr "$(libkb "$lib" Rss)" \
  '{idle_plain_kb: {pss: $pp, rss: $pr}, idle_after_cgroup_init_kb: {pss: $lp, rss: $lr},
    cgroup_init_adds_kb: {pss: ($lp - $pp), rss: ($lr - $pr)},
    libcgroup_mapping_kb: {pss: $llp, rss: $llr}}')
mkdir -p bench/results
jq -n --arg date "$(date -u +%FT%TZ)" --arg kernel "$(uname -r)" \
  --arg lib "$(dpkg-query -W -f='${Version}' libcgroup2 2>/dev/null || echo unknown)" \
  --argjson cpu "$cpu" --argjson mem "$mem" \
  '{benchmark: "libcgroup", date: $date, kernel: $kernel, libcgroup_version: $lib,
    cpu: $cpu, memory: $mem,
    definitions: {ns_per_call: "CPU time (CLOCK_PROCESS_CPUTIME_ID) per call, median of the repeats",
      discover: "the cgroup2 mount and the v1 blkio mount (cg2_mount_find + cg2_v1_mount_find; cgroup_init + cgroup_get_subsys_mount_point)",
      pid_cgroup: "the blkio cgroup of this process (cg2_pid_cgroup_v1; cgroup_get_current_controller_path)",
      read_blkio: "the blkio root'"'"'s blkio.throttle.io_service_bytes into a buffer and parsed by cg2_blkio_parse (cg2_read_file; cgroup_read_value_begin/next)",
      cgroup_init_adds_kb: "PSS/RSS of an idle process after cgroup_init() minus the same binary idle without it"}}' \
  >bench/results/libcgroup.json
cat bench/results/libcgroup.json
