# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared by bench/calibrate-wcd.sh and tests/integration/hook/hook-fio.sh: run one
# fio job inside a fresh cgroup and sample that cgroup with wcd-probe.
#
#   wcd_env                      # sets WCD_V2 (cgroup2 mount), WCD_SOURCE
#   wcd_fio NAME OUTDIR FIOARGS  # OUTDIR/probe.json, OUTDIR/fio.json
#
# Source: io.stat where the v2 hierarchy has the io controller (the qemu VM
# of tests/vm), else the procfs fallback (this hybrid host).  WCD_SOURCE may
# be set beforehand to force one; WCD_CONFIG, a detector config file for the
# probe (wcd_config_load), else its defaults.  Needs root, fio and $WCD_PROBE.

wcd_env() {
  WCD_V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
  [ -n "$WCD_V2" ] || { echo "wcd_env: no cgroup2 mount" >&2; return 1; }
  if [ -z "${WCD_SOURCE:-}" ]; then
    if grep -qw io "$WCD_V2/cgroup.controllers" 2>/dev/null; then WCD_SOURCE=io.stat; else WCD_SOURCE=procfs; fi
  fi
  WCD_V1_PIDS=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)pids(,|$)/ { print $5; exit }' /proc/self/mountinfo)
  if [ "$WCD_SOURCE" = io.stat ] && ! grep -qw io "$WCD_V2/cgroup.subtree_control"; then
    echo +io >"$WCD_V2/cgroup.subtree_control" || return 1
  fi
  export WCD_V2 WCD_SOURCE WCD_V1_PIDS
}

# wcd_fio NAME OUTDIR FIOARGS...: fio runs in cgroup NAME (v2, plus v1 pids
# on a hybrid host so runc-like tools see it too); the probe samples it every
# 100 ms until it is empty.  fio keeps the job process alive 0.5 s after its
# I/O (exec_postrun) because /proc/PID/io counts vanish when a process exits:
# a trap of the procfs source, see wcd/CALIBRATION.md.
wcd_fio() {
  local name=$1 out=$2; shift 2
  local cg=$WCD_V2/$name
  mkdir -p "$out" "$cg"
  [ -n "${WCD_V1_PIDS:-}" ] && mkdir -p "$WCD_V1_PIDS/$name"
  "$WCD_PROBE" --cgdir "$cg" --source "$WCD_SOURCE" ${WCD_CONFIG:+--config "$WCD_CONFIG"} \
    --until-empty --interval-ms 100 >"$out/probe.json" 2>"$out/probe.err" &
  local probe=$!
  (
    cd "$out" || exit 1
    echo $BASHPID >"$cg/cgroup.procs"
    [ -n "${WCD_V1_PIDS:-}" ] && echo $BASHPID >"$WCD_V1_PIDS/$name/cgroup.procs"
    exec fio --output-format=json --output="$out/fio.json" --exec_postrun='sleep 0.5' "$@"
  ) </dev/null >"$out/fio.log" 2>&1
  local rc=$?
  wait "$probe"
  local prc=$?
  rmdir "$cg" 2>/dev/null
  [ -n "${WCD_V1_PIDS:-}" ] && rmdir "$WCD_V1_PIDS/$name" 2>/dev/null
  [ "$rc" -eq 0 ] || { echo "wcd_fio: fio failed: $(tail -3 "$out/fio.log")" >&2; return 1; }
  [ "$prc" -eq 0 ] || { echo "wcd_fio: probe failed: $(cat "$out/probe.err")" >&2; return 1; }
}

# wcd_data_dir DIR...: the first DIR (created) that lives on a block device,
# so that fio's I/O reaches a disk (not a tmpfs, as /iobatch/build is in the
# VM's initramfs).
wcd_data_dir() {
  local d dev
  for d in "$@"; do
    mkdir -p "$d" 2>/dev/null || continue
    dev=$(df -P "$d" 2>/dev/null | awk 'NR == 2 { print $1 }')
    case $dev in /dev/*) echo "$d"; return 0 ;; esac
    rmdir "$d" 2>/dev/null
  done
  return 1
}

# wcd_fio_bytes OUTDIR read|write: fio's own byte count
wcd_fio_bytes() { jq ".jobs[0].$2.io_bytes" "$1/fio.json"; }
# wcd_probe_field OUTDIR FIELD
wcd_probe_field() { jq -r ".$2" "$1/probe.json"; }
