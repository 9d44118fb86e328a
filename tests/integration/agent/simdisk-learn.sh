#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent learns a real penalty on a disk that punishes mixing, and holds
# for it; on a disk where mixing costs nothing, it holds nothing.  On the
# emulated 7200 rpm drive (simdisk/, model hdd) two sequential readers of
# files at different offsets, one request at a time each, make the head
# seek between them; iobatchd on
# its shipped defaults (no matrix) learns each reader's rate alone,
# measures the pair in three co-runs, and holds the second reader of the
# fourth co-run.  The same steps on the host's disk, with a fresh agent,
# end with the fourth admitted at once where the pair costs no more than
# running one after the other.  Every check reads the agent's own account
# (its status, its admission log), never the clock.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 7
iob_need containerd ctr runc fio jq losetup mkfs.ext4
[ -x "$IOB_B/bin/simdisk" ] || bail "$IOB_B/bin/simdisk is missing: run make first"
[ -e /dev/fuse ] || bail "no /dev/fuse: the emulated disk needs FUSE"

SD=$IOB_T/sd
mkdir -p "$SD"
at_exit "B='$IOB_B' '$IOB_TOP/simdisk/simdisk.sh' down '$SD'"
out=$(B=$IOB_B "$IOB_TOP/simdisk/simdisk.sh" up hdd "$SD" --size=2G) || bail "cannot bring up the emulated hdd"
HDD_MNT=$(sed -n 's/^mnt=//p' <<<"$out")
diag "emulated hdd: $(tr '\n' ' ' <<<"$out")"
iob_stack_up "max_hold = 120s"

# The readers read one 128 KiB request at a time (O_DIRECT), as a program
# reading a file in a loop does.  (With deep queues the drive serves one
# stream's queue, then the other's, and two readers together take about
# as long as one after the other: no penalty to learn.)
READER="--rw=read --bs=128k --direct=1 --ioengine=psync"
# layout DIR: two 256 MiB files, far apart on the disk (a and b); sets MIB,
# what one reader moves alone in 1 s on this disk: b's work; a's is three
# times that in every run, so that in the fourth co-run, where b arrives
# while a reads, the agent expects a to read for about 2.5 s more and
# holds b that long (an a that outran its learned work was "nearly done"
# from its learned end on, and how long b waited depended on when it
# arrived), and so that b, started half a second after a, still finds it
# reading on a loaded machine, where starting a container can take
# seconds
layout() {
  local f
  for f in a gap b; do
    fio --name=l --filename="$1/$f" --rw=write --bs=1M --size=256M --direct=1 --ioengine=libaio \
      --iodepth=8 >/dev/null || bail "cannot lay out '$1/$f'"
  done
  MIB=$(fio --name=p --filename="$1/a" $READER --size=256M --time_based --runtime=1 \
    --output-format=json | jq '.jobs[0].read.io_bytes / 1048576 | floor')
  [ "${MIB:-0}" -ge 4 ] || MIB=4
}
# run ID FILE DIR [TIMES]: a sequential reader of MIB (times TIMES) MiB of
# DIR/FILE, in the background; its exit status lands in $IOB_T/ID.rc
run() {
  (
    $CTR run --rm --runtime $RT --annotation io.iobatch.workload="reader-$2" \
      --mount "type=bind,src=$3,dst=/data,options=rbind:ro" --rootfs "$R" "$1" \
      /usr/bin/fio --name=r --filename="/data/$2" $READER --size=256M --io_size="$((MIB * ${4:-1}))M" \
      >"$IOB_T/$1.out" 2>&1
    echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc"
  ) &
}
done_() { [ -e "$IOB_T/$1.rc" ]; }
# pair: the measured (seq-read beside seq-read) pair, from status
pair() { ctl status --json | jq -c '[.penalties[]? | select(.victim == "seq-read" and .neighbour == "seq-read")][0] // {}'; }
# held_ms ID: how long the agent kept it pending (its admission line)
held_ms() { grep -oE "admitted '$1' \([a-z-]+\) after [0-9]+ ms" "$AGENT_LOG" | grep -oE '[0-9]+ ms' | grep -oE '[0-9]+'; }

# learn P DIR: alone a, alone b, three co-runs started together, then a
# fourth in which b arrives while a reads
learn() {
  local p=$1 dir=$2 i
  run "${p}sa" a "$dir" 3
  wait_for 120 "done_ ${p}sa" || bail "the reader alone did not end"
  run "${p}sb" b "$dir"
  wait_for 120 "done_ ${p}sb" || bail "the reader alone did not end"
  for i in 1 2 3 4; do
    run "${p}a$i" a "$dir" 3
    if [ "$i" = 4 ]; then # b arrives while a reads
      wait_for 30 '[ "$(agent_field '"${p}a$i"' state)" == running ]'
      sleep 0.5
    fi
    run "${p}b$i" b "$dir"
    wait_for 300 "done_ ${p}a$i && done_ ${p}b$i" || bail "co-run $i did not end"
    [ "$i" = 3 ] && PAIR=$(pair)
  done
}

layout "$HDD_MNT"
diag "hdd: a reader moves $MIB MiB (1 s alone)"
learn h "$HDD_MNT"
solo=$(jq -r --arg ns "$NS" '.namespaces[$ns]["reader-a"].solo_bps // 0' "$AGENT_STATE/profiles.json" 2>/dev/null)
ok "the agent sees the I/O of containers on the loop device (a solo rate of ${solo%.*} B/s)" \
  test "${solo%.*}" -gt 0
diag "hdd, after three co-runs: $PAIR"
ok "hdd: the co-runs of two sequential readers measured ($(jq -r '.coruns // 0' <<<"$PAIR") pairs of containers)" \
  test "$(jq -r '.coruns // 0' <<<"$PAIR")" -ge 3
sd=$(jq -r '.slowdown // 0' <<<"$PAIR")
ok "hdd: each reader ran more than 2x slower beside the other (${sd}x): mixing costs more than it saves" \
  awk -v s="$sd" 'BEGIN { exit !(s > 2) }'
is "$(jq -r '.in_use // false' <<<"$PAIR")" "true" "hdd: the pair is evidence"
hb4=$(held_ms hb4)
diag "hdd, fourth co-run: $(grep -oE "admitted 'hb4' .*" "$AGENT_LOG" | head -1)"
# held: longer than the batch window (100 ms) that gathers arrivals
ok "hdd: the fourth co-run's second reader is held (${hb4:-?} ms) while the first reads" \
  test "${hb4:-0}" -ge 250
is "$(cat "$IOB_T/ha4.rc" "$IOB_T/hb4.rc" | tr -d '\n')" "00" "hdd: both readers of the held run completed"

# The host's own disk, with a fresh agent: where two readers together take
# no longer than one after the other (a slowdown of at most 2 each), the
# fourth is admitted at once.  What the pair costs there depends on what
# else the machine runs (3.2x was measured beside a build), so the check
# is that the decision follows the measurement: held only above 2.
agent_stop
rm -rf "$AGENT_STATE"
: >"$AGENT_LOG"
agent_start "max_hold = 120s" || bail "iobatchd did not start again"
HOST_DIR=$IOB_T/hostdisk
mkdir -p "$HOST_DIR"
case $(stat -f -c %T "$HOST_DIR") in tmpfs | ramfs) bail "$HOST_DIR is on a tmpfs: the host part needs a disk" ;; esac
layout "$HOST_DIR"
diag "host: a reader moves $MIB MiB (1 s alone)"
learn o "$HOST_DIR"
diag "host, after three co-runs: $PAIR"
sd=$(jq -r '.slowdown // 0' <<<"$PAIR")
ob4=$(held_ms ob4)
diag "host, fourth co-run: $(grep -oE "admitted 'ob4' .*" "$AGENT_LOG" | head -1)"
if awk -v s="$sd" 'BEGIN { exit !(s > 0 && s <= 2) }'; then
  ok "host: the pair costs ${sd}x, so the fourth co-run's second reader is admitted at once (${ob4:-?} ms)" \
    test -n "$ob4" -a "${ob4:-250}" -lt 250
else
  ok "host: the pair cost ${sd}x here (a busy machine), and the fourth reader was held for it (${ob4:-?} ms)" \
    test "${ob4:-0}" -ge 250
fi
tap_done
