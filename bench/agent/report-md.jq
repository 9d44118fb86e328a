# SPDX-License-Identifier: Apache-2.0
# agent-overhead.json -> markdown (jq -r)
def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
"# Agent overhead (issue 7 §4)\n",
"Command: `\(.command)`; \(.date) on `\(.host)`, kernel \(.kernel), load average \(.loadavg) (other work on the machine shows here). Agent: \(.agent).\n",
"## iobatchd sampling N registered cgroups at 1 Hz\n",
(if .sampling.status != "run" then .sampling.status + "\n" else
  "Fixture cgroup directories under a temp root (`cgroup_root`), or (REAL=1, rows marked real) real cgroups each holding a process that writes 4 KiB with O_DIRECT every second or so, registered as running containers; CPU = utime+stime of iobatchd over the window (clock tick \(.sampling.runs[0].tick_ms) ms).\n",
  "| cgroups | still registered at end | sampler option | sampler | latency_source (running) | window s | CPU ms | CPU % of one core | µs CPU per cgroup sample | RSS KiB |",
  "|---:|---:|---|---|---|---:|---:|---:|---:|---:|",
  (.sampling.runs[] | "| \(.cgroups)\(if .real then " real" else "" end) | \(.registered_at_end) | \(.sampler_option // "auto") | \(.sampler) | \(.latency_source_option // "–") (\(.latency_source // "–")) | \(.window_s) | \(.cpu_ms) | \(.cpu_percent | f2) | \(.cpu_us_per_cgroup_sample | f2) | \(.rss_kib) |"),
  "",
  "latency_source: `off` reads files only; `bpf` adds one lookup in the BPF latency program's map per container and window; sampler `bpf` reads no file at all (bytes and requests from the same map, one stat of the cgroup directory to notice it gone).  The fixtures are not cgroups the block layer charges, so the map holds no entry for them: each lookup misses, which costs the same system call as a hit.\n",
  "Sampler: the agent's `sampler` option for the run (`auto` picks the BPF map where the program is loaded and sees every write: on cgroup v2 with the io and memory controllers, or where it counts dirtied pages (v1 and hybrid hosts); else io.stat where the cgroup2 root has the io controller, the v1 blkio files, or /proc/PID/io of every pid in cgroup.procs; `io.stat` forces the io.stat path, which on a host without the io controller only fixture cgroups can serve) and what the agent reported running. A sample of io.stat or procfs also reads io.pressure; one of v1 blkio does not (v1 directories have none), and the bpf sampler reads no file.\n"
  end),
"## Uncontended admission latency\n",
(if .admission.status != "run" then .admission.status + "\n" else
  "`ctr run --rm --null-io ... /bin/true`, \(.admission.reps) runs each, medians (ms)\(if .admission.pause_s then "; one block per configuration, in which runc's shim and ours alternate (either first in turn), each run after a \(.admission.pause_s) s pause, the agent started once per block and settled; the second row is each one's ratio to runc's shim in its own block" else ", interleaved" end):\n",
  "| runc shim | iobatch shim, no agent (fails open) | iobatch shim + agent | iobatch shim + agent, batch_window = 0 |",
  "|---:|---:|---:|---:|",
  "| \(.admission.median_ms.runc_shim | f2) | \(.admission.median_ms.iobatch_no_agent | f2) | \(.admission.median_ms.iobatch_with_agent | f2) | \(.admission.median_ms.iobatch_with_agent_no_batch_window | f2) |",
  (if .admission.vs_runc_shim_same_block then
    (.admission.vs_runc_shim_same_block | "| 1 | \(.iobatch_no_agent) | \(.iobatch_with_agent) | \(.iobatch_with_agent_no_batch_window) |")
   else empty end),
  "",
  "Added by asking the agent: \(.admission.added_by_agent_ms | f2) ms with its default config (whether the batch window — arrivals gathered before planning, 200 ms by default — is waited for on an idle node depends on the agent's version: agent/plan/admission.c), \(.admission.added_by_agent_no_window_ms | f2) ms with `batch_window = 0`; iobatch shim + agent vs the runc shim: \(.admission.iobatch_vs_runc_ms | f2) ms. Differences below the spread of the runs (the load average above) are noise.\n",
  "" end)
