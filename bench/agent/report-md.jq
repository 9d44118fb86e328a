# agent-overhead.json -> markdown (jq -r)
def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
"# Agent overhead (issue 7 §4)\n",
"Command: `\(.command)`; \(.date) on `\(.host)`, kernel \(.kernel), load average \(.loadavg) (other work on the machine shows here). Agent: \(.agent).\n",
"## iobatchd sampling N registered cgroups at 1 Hz\n",
(if .sampling.status != "run" then .sampling.status + "\n" else
  "Fixture cgroup directories under a temp root (`cgroup_root`), registered as running containers; CPU = utime+stime of iobatchd over the window (clock tick \(.sampling.runs[0].tick_ms) ms).\n",
  "| cgroups | still registered at end | sampler | window s | CPU ms | CPU % of one core | µs CPU per cgroup sample | RSS KiB |",
  "|---:|---:|---|---:|---:|---:|---:|---:|",
  (.sampling.runs[] | "| \(.cgroups) | \(.registered_at_end) | \(.sampler) | \(.window_s) | \(.cpu_ms) | \(.cpu_percent | f2) | \(.cpu_us_per_cgroup_sample | f2) | \(.rss_kib) |"),
  "",
  (if any(.sampling.runs[]; .sampler != "io.stat") then
    "The agent chose its sampler from the host's cgroup2 mount (agent/sampler.c: io.stat only when the io controller is there). This host is a v1/v2 hybrid, so every sample read the fixture's cgroup.procs, /proc/PID/io of its pid and io.pressure (checked with strace), not the fixture io.stat. Benchmarking the io.stat path on this host would need an agent option forcing the source (e.g. `sampler = io.stat`); on a cgroup v2 machine the same command measures it.\n"
   else empty end)
  end),
"## Uncontended admission latency\n",
(if .admission.status != "run" then .admission.status + "\n" else
  "`ctr run --rm --null-io ... /bin/true`, \(.admission.reps) interleaved runs each, medians (ms):\n",
  "| runc shim | iobatch shim, no agent (fails open) | iobatch shim + agent | iobatch shim + agent, batch_window = 0 |",
  "|---:|---:|---:|---:|",
  "| \(.admission.median_ms.runc_shim | f2) | \(.admission.median_ms.iobatch_no_agent | f2) | \(.admission.median_ms.iobatch_with_agent | f2) | \(.admission.median_ms.iobatch_with_agent_no_batch_window | f2) |",
  "",
  "Added by asking the agent: \(.admission.added_by_agent_ms | f2) ms with its default config (the batch window — arrivals gathered before planning, 200 ms by default — is part of it), \(.admission.added_by_agent_no_window_ms | f2) ms with `batch_window = 0`; iobatch shim + agent vs the runc shim: \(.admission.iobatch_vs_runc_ms | f2) ms.\n",
  "" end)
