#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real fio in a real cgroup on this host: the sampler (the procfs fallback on
# this hybrid host, io.stat where the v2 io controller exists) must report
# fio's own byte count within 10%, and the detector must tell a 1 MiB
# sequential writer from a 4 KiB random writer.
. "$(dirname "$0")/../lib/common.sh"
. "$IOB_TOP/bench/calibrate-wcd-lib.sh"
tap_plan 8
WCD_PROBE=$IOB_B/bin/wcd-probe
[ -x "$WCD_PROBE" ] || bail "no $WCD_PROBE (build first)"
iob_need fio
[ "$(id -u)" -eq 0 ] || bail "needs root to create cgroups"
wcd_env || bail "no usable cgroup hierarchy"
diag "sampling source: $WCD_SOURCE (cgroup2 at $WCD_V2)"
# fio's data file on a real disk, not on a tmpfs
DATA=$(wcd_data_dir "$IOB_TOP/build/.hook-fio.$$" "/tmp/.hook-fio.$$" "/data/.hook-fio.$$") ||
  bail "no directory on a block device for fio's file"
at_exit "rm -rf '$DATA'"
common=(--filename="$DATA/f" --size=256M --direct=1 --ioengine=psync --randrepeat=0)

within10() { # got want
  awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d / w <= 0.10) }'
}

wcd_fio iobt-seq$$ "$IOB_T/seq" --name=seqw --rw=write --bs=1M "${common[@]}" || bail "fio seq run failed"
got=$(wcd_probe_field "$IOB_T/seq" wbytes); want=$(wcd_fio_bytes "$IOB_T/seq" write)
diag "seq 1M write: sampler $got bytes, fio $want bytes ($(cat "$IOB_T/seq/probe.json"))"
ok "seq write: sampler bytes within 10% of fio's ($got vs $want)" within10 "$got" "$want"
is "$(wcd_probe_field "$IOB_T/seq" class)" seq-write "1 MiB sequential writer classified seq-write"
like "$(wcd_probe_field "$IOB_T/seq" confidence)" '^0\.[5-9]|^1' "with confidence >= 0.5"

wcd_fio iobt-rand$$ "$IOB_T/rand" --name=randw --rw=randwrite --bs=4k --time_based --runtime=3 "${common[@]}" || bail "fio rand run failed"
got=$(wcd_probe_field "$IOB_T/rand" wbytes); want=$(wcd_fio_bytes "$IOB_T/rand" write)
diag "rand 4k write: sampler $got bytes, fio $want bytes ($(cat "$IOB_T/rand/probe.json"))"
ok "rand write: sampler bytes within 10% of fio's ($got vs $want)" within10 "$got" "$want"
is "$(wcd_probe_field "$IOB_T/rand" class)" rand-write "4 KiB random writer classified rand-write"
wios=$(wcd_probe_field "$IOB_T/rand" wios); fios=$(jq '.jobs[0].write.total_ios' "$IOB_T/rand/fio.json")
ok "rand write: request count within 10% of fio's ($wios vs $fios)" within10 "$wios" "$fios"

# reads: the file is laid out above (outside the measured cgroup's run)
wcd_fio iobt-rr$$ "$IOB_T/rr" --name=randr --rw=randread --bs=4k --time_based --runtime=2 "${common[@]}" || bail "fio randread run failed"
got=$(wcd_probe_field "$IOB_T/rr" rbytes); want=$(wcd_fio_bytes "$IOB_T/rr" read)
diag "rand 4k read: sampler $got bytes, fio $want bytes ($(cat "$IOB_T/rr/probe.json"))"
ok "rand read: sampler bytes within 10% of fio's ($got vs $want)" within10 "$got" "$want"
is "$(wcd_probe_field "$IOB_T/rr" class)" rand-read "4 KiB random reader classified rand-read"
tap_done
