# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # these are read by the scripts that source this file
# Job classes and mixes of bench/sched.sh (sourced).
#
# Every job does a fixed amount of work (size=, never time-based) with
# O_DIRECT, so the page cache (24 GiB here) cannot turn reads into memcpy and
# the time a job takes is the time the disk gave it.  Sizes aim at ~5 s solo
# on this host's /dev/vda (probed 2026-11-29: 1 MiB seq write ~1.1 GB/s,
# 4 KiB rand write iodepth 32 ~35k IOPS, seq read ~1.1 GB/s, 4 KiB rand read
# ~44k IOPS).  SCALE multiplies every size (SCALE=2: ~10 s jobs).

SCALE=${SCALE:-1}

# class -> fio arguments (the file and the output are added per instance)
declare -A JOB_ARGS=(
  [seq-write]="--rw=write --bs=1M --iodepth=8"
  [rand-write]="--rw=randwrite --bs=4k --iodepth=32"
  [seq-read]="--rw=read --bs=1M --iodepth=8"
  [rand-read]="--rw=randread --bs=4k --iodepth=32"
)
# class -> size in MiB at SCALE=1
declare -A JOB_MIB=(
  [seq-write]=5120
  [rand-write]=640
  [seq-read]=5120
  [rand-read]=800
)
CLASSES=(seq-write rand-write seq-read rand-read)

job_mib() { awk -v m="${JOB_MIB[$1]}" -v s="$SCALE" 'BEGIN { printf "%d", m * s }'; }

# Mixes: name -> job classes in submission order (serial runs them in this
# order; all-at-once and iobatch submit them all at the same instant).
#  hetero-writers: the paper's heterogeneous case and this host's known
#    result (two sequential + two random writers: batched ~25% sooner than
#    all at once, issue 7).
#  homo-seq-write: the paper's homogeneous write-heavy case.
#  read-vs-write: read-heavy beside write-heavy (the paper: fine; docs/DESIGN.md:
#    not on these machines).
#  every-class: sequential/random x read/write, two of each.
#  paper-mix: the paper's shape with eight containers: three sequential
#    writers, three random writers, a sequential and a random reader
#    (bench/mix.sh runs the same set with a learning curve).
MIXES_ALL=(hetero-writers homo-seq-write read-vs-write every-class paper-mix)
declare -A MIX_JOBS=(
  [hetero-writers]="seq-write seq-write rand-write rand-write"
  [homo-seq-write]="seq-write seq-write seq-write"
  [read-vs-write]="seq-read rand-read seq-write rand-write"
  [every-class]="seq-write rand-write seq-read rand-read seq-write rand-write seq-read rand-read"
  [paper-mix]="seq-write rand-write seq-write rand-write seq-write rand-write seq-read rand-read"
)
