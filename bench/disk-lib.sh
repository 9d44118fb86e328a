# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # DISK_DEV and DISK_DESC are read by the benchmarks
# DISK=host|hdd|ssd|pass for the benchmarks that put fio files on a disk
# (sourced after tests/integration/lib/common.sh, for at_exit and IOB_T).
#
#   host  the files go under SCRATCH_PARENT (default /var/tmp) on this
#         machine's own disk, as before
#   hdd, ssd, pass
#         an emulated disk (simdisk/README.md: the model, its cited
#         parameters) made for this run: ext4 on a loop device over a FUSE
#         file whose requests complete when the model says; SCRATCH_PARENT
#         is its mount, and it is torn down at exit
#
# SIMDISK_ARGS: more simdisk options; default --scale=10 on ssd, whose
# microsecond flash times are otherwise below what FUSE and the loop
# device cost (simdisk/README.md, "Calibration"), none on hdd and pass.
#
# bench_disk_up [SIZE]: bring DISK up (SIZE: simdisk's --size, e.g. 8G)
# in a directory under SIMDISK_PARENT (default /var/tmp), removed at exit;
# sets SCRATCH_PARENT, DISK_DEV (the block device, "" on host) and
# DISK_DESC (one line for the results).
DISK=${DISK:-host}
DISK_DEV=
DISK_DESC=
BENCH_SPAN=${BENCH_SPAN:-512M} # in MiB, with the M
bench_disk_up() {
  local size=${1:-8G} dir out
  case $DISK in
  host)
    SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
    DISK_DESC="host ($(df --output=source "$SCRATCH_PARENT" | tail -1))"
    return 0
    ;;
  hdd | ssd | pass) ;;
  *) echo "bench: DISK='$DISK': expected host, hdd, ssd or pass" >&2; return 2 ;;
  esac
  # Not under IOB_T (0700): a service run as its own user (bench/service.sh
  # slo, PostgreSQL) must reach its data on the mount.
  dir=$(mktemp -d "${SIMDISK_PARENT:-/var/tmp}/iob-simdisk.XXXXXX") || return 1
  chmod 755 "$dir"
  at_exit "B='${B:-build}' '$TOP/simdisk/simdisk.sh' down '$dir' && rm -rf '$dir'"
  local -a extra
  if [ -n "${SIMDISK_ARGS+set}" ]; then
    read -r -a extra <<<"$SIMDISK_ARGS"
  elif [ "$DISK" = ssd ]; then
    extra=(--scale=10)
  fi
  out=$(B=${B:-build} "$TOP/simdisk/simdisk.sh" up "$DISK" "$dir" --size="$size" "${extra[@]}") || {
    echo "bench: cannot bring up the emulated '$DISK' disk" >&2
    return 1
  }
  SCRATCH_PARENT=$(sed -n 's/^mnt=//p' <<<"$out")
  DISK_DEV=$(sed -n 's/^device=//p' <<<"$out")
  DISK_DESC="simdisk $DISK${extra[*]:+ ${extra[*]}} on $DISK_DEV ($(sed -n 's/^majmin=//p' <<<"$out"), $(xargs <"/sys/block/${DISK_DEV#/dev/}/queue/scheduler"))"
  export SCRATCH_PARENT
}

# bench_fit_mib SECONDS FIO-ARGS...: the MiB that one job of FIO-ARGS
# (with --direct and --ioengine, without --size) moves alone in SECONDS on
# SCRATCH_PARENT, at least 4: fixed-work jobs sized to the disk under test,
# so that a job takes about as long on an emulated HDD as on an SSD (the
# work is fitted to the disk, never the disk to the work).  The probe file
# spans BENCH_SPAN (512M), as the jobs' files should (fio --size=SPAN
# --io_size=MIB), so that seeks span the same distance; it is laid out
# once and kept until exit.
bench_fit_mib() {
  local s=$1 f=$SCRATCH_PARENT/.bench-fit.dat bytes
  shift
  if [ ! -e "$f" ]; then
    at_exit "rm -f '$f'"
    fio --name=layout --filename="$f" --rw=write --bs=1M --direct=1 --ioengine=libaio \
      --iodepth=8 --size="$BENCH_SPAN" >/dev/null || return 1
  fi
  bytes=$(fio --name=fit --filename="$f" "$@" --size="$BENCH_SPAN" \
    --time_based --runtime="$s" --output-format=json |
    jq '[.jobs[0].read.io_bytes, .jobs[0].write.io_bytes] | add') || return 1
  echo $((bytes / 1048576 < 4 ? 4 : bytes / 1048576))
}

# bench_size_jobs SECONDS: the job sizes of bench/sched/jobs.sh's classes
# (sourced first) on this disk.  Defines SIZE_ARGS CLASS (fio's size
# arguments for one job) and LAYOUT_MIB CLASS (its file's MiB).  On the
# host, JOB_MIB as it is; elsewhere each class's work is fitted to SECONDS
# alone on this disk (times SCALE), on a file spanning BENCH_SPAN whatever
# the work, so that seeks are as long as on the host.
bench_size_jobs() {
  local c
  SIZE_ARGS() { echo "--size=$(job_mib "$1")M"; }
  LAYOUT_MIB() { job_mib "$1"; }
  [ "$DISK" != host ] || return 0
  for c in "${CLASSES[@]}"; do
    # shellcheck disable=SC2086
    JOB_MIB[$c]=$(bench_fit_mib "$1" ${JOB_ARGS[$c]} --direct=1 --ioengine=libaio) || return 1
    echo "bench: $c alone on $DISK moves ${JOB_MIB[$c]} MiB in ${1}s"
  done
  SIZE_ARGS() { echo "--size=$BENCH_SPAN --io_size=$(job_mib "$1")M"; }
  LAYOUT_MIB() { echo $((${BENCH_SPAN%M})); }
}
