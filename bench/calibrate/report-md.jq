# SPDX-License-Identifier: Apache-2.0
# calibration.json -> markdown (jq -r)
def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
def mib: . / 1048576 | f2;
def median: sort | if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
["seq-read", "rand-read", "seq-write", "rand-write"] as $cls
| .measurements as $m
| "# Penalty matrix calibration (`iobatchctl calibrate`)\n",
  "Command: `\(.command)`; started \(.started) on `\(.host)`, kernel \(.kernel), disk \(.disk) (\(.io_scheduler)), scratch under `\(.dir)`; \(.fio); took \(.elapsed_s) s. Median of \(.repeats) repeats; sequential jobs 1 MiB × iodepth 8, \(.seq_mib) MiB; random jobs 4 KiB × iodepth 32, \(.rand_mib) MiB; O_DIRECT, libaio.\n",
  "Method: each class alone, then for every ordered pair the victim's fixed work while the neighbour (time-based) runs beside it for the victim's whole run; a victim is stopped after \(.max_factor)× its solo time + 2 s (its rate stays exact; marked capped). Slowdown d = solo rate / paired rate − 1, median of same-repeat ratios.\n",
  "## Solo rates\n",
  "| class | MiB/s (median) | runtime s (median) |", "|---|---:|---:|",
  ($cls[] as $c | "| \($c) | \($m.solo[$c] | map(.rate_bps) | median | mib) | \($m.solo[$c] | map(.runtime_s) | median | f2) |"),
  "",
  "## Measured slowdown d (row: the job that suffers; column: its neighbour)\n",
  "| victim \\ neighbour | " + ($cls | join(" | ")) + " |", "|---|---:|---:|---:|---:|",
  ($cls[] as $v | "| \($v) | " + ([$cls[] as $n | $m.pairs[] | select(.victim == $v and .neighbour == $n)
      | "\(.slowdown | f2)\(if any(.runs[]; .capped) then " (capped)" else "" end)"] | join(" | ")) + " |"),
  "",
  "So a victim runs (1 + d)× slower: e.g. rand-write beside seq-write at \(($m.slowdown["rand-write"]["seq-write"] + 1) | f2)× its solo time. Median factor of two sequential streams (seq_slowdown): \(.seq_slowdown | f2).\n",
  "## Per-repeat factors (solo rate / paired rate)\n",
  "| victim | neighbour | " + ([range(0; .repeats) | "repeat \(. + 1)"] | join(" | ")) + " |",
  "|---|---|" + ([range(0; .repeats) | "---:"] | join("|")) + "|",
  ($m.pairs[] | . as $p
   | "| \(.victim) | \(.neighbour) | " + ([range(0; $p.runs | length) as $r
       | ($m.solo[$p.victim][$r].rate_bps / $p.runs[$r].rate_bps) | f2] | join(" | ")) + " |"),
  "",
  "## The matrix file (bench/results/penalty-matrix.conf)\n",
  "Batcher config format (`batch_config_parse`, batcher/batcher.h): `matrix.<class>` rows in the order seq-read rand-read seq-write rand-write mixed idle unknown, penalty s = d / slowdown_scale. Use it with `matrix = /path/penalty-matrix.conf` in iobatchd.conf.\n",
  "```", (.matrix_file | rtrimstr("\n")), "```"
