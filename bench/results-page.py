#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write bench/RESULTS.md from bench/RESULTS.md.in and every result file
under bench/results/ (standard library only).

The template holds the prose; every number comes from a result file:

  {{FILE:PATH}}        one value: FILE relative to bench/results/, PATH a
  {{FILE:PATH:FMT}}    dotted path into its JSON (list indices are numbers),
                       FMT a format spec (default: floats to 2 decimals)
  {{table:KIND:FILE}}  a table of FILE drawn by the function table_KIND
  {{about:FILE}}       the command, date and commit FILE records

A JSON file under bench/results/ that the template does not name is listed
at the end with its command and date, so no result is left out.

The page ends with every result's commit and its date, and marks a result
stale when the code it measures (bench/results-code.txt) changed after
the commit it was measured on: the last commit that changed that code is
not an ancestor of the result's.  What git cannot tell (a shallow clone,
no repository, a commit not in this history) the page says is unknown.

  bench/results-page.py [ROOT]          write bench/RESULTS.md
  bench/results-page.py --check [ROOT]  exit 1, naming the page and showing
                                        the difference, when
                                        bench/RESULTS.md is not what this
                                        script would write (ROOT: the top of
                                        the repository, by default this one)
"""
import difflib
import json
import os
import re
import statistics
import subprocess
import sys

TOP = RESULTS = TEMPLATE = PAGE = CODE_MAP = ""


def set_top(top):
    global TOP, RESULTS, TEMPLATE, PAGE, CODE_MAP
    TOP = os.path.abspath(top)
    RESULTS = os.path.join(TOP, "bench", "results")
    TEMPLATE = os.path.join(TOP, "bench", "RESULTS.md.in")
    PAGE = os.path.join(TOP, "bench", "RESULTS.md")
    CODE_MAP = os.path.join(TOP, "bench", "results-code.txt")


set_top(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_cache = {}
used = set()


class PageError(Exception):
    pass


def load(name):
    if name not in _cache:
        path = os.path.join(RESULTS, name)
        try:
            with open(path, encoding="utf-8") as f:
                _cache[name] = json.load(f)
        except (OSError, ValueError) as e:
            raise PageError(f"cannot read 'bench/results/{name}': {e}") from e
    used.add(name)
    return _cache[name]


def get(doc, path, name=""):
    cur = doc
    for part in path.split(".") if path else []:
        try:
            cur = cur[int(part)] if isinstance(cur, list) else cur[part]
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise PageError(f"'bench/results/{name}' has no '{path}'") from e
    return cur


def fmt(v, spec=""):
    if v is None:
        return "–"
    if spec:
        return format(v, spec)
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(head, rows, align=None):
    out = [row(head), "|" + "|".join(align or ["---"] * len(head)) + "|"]
    out += [row(r) for r in rows]
    return "\n".join(out)


# The command of a result file that does not record its own.
UNRECORDED = {"pairs.json": "bench/pairs.sh", "plan-cost.json": "bench/plan-cost.sh",
              "libcgroup.json": "bench/libcgroup.sh"}


def cmd(doc, name):
    c = (doc.get("command") or "").strip()
    if c:
        return f"`{c}`"
    if name in UNRECORDED:
        return f"`{UNRECORDED[name]}` (the file records no command)"
    return "(no command recorded)"


def about(name):
    doc = load(name)
    parts = [cmd(doc, name)]
    date = doc.get("date") or doc.get("started")
    if date:
        parts.append(str(date))
    if isinstance(doc.get("commit"), str) and doc["commit"]:
        parts.append(f"commit {doc['commit']}" + commit_date(doc["commit"]))
    elif doc.get("agent"):
        # the date goes right after the hash: the prose goes on with the
        # settings of each mode
        prose = str(doc["agent"])
        m = AT_HEX.search(prose)
        if m:
            prose = prose[:m.end(1)] + commit_date(m.group(1)) + prose[m.end(1):]
        parts.append(prose)
    return ", ".join(parts) + f" ([{name}](results/{name}))" + stale_mark(name)


# --- the commit each result was measured on, and the code it measures ----
#
# Result files name their commit in one of these ways:
#   "commit": "3a6e025"                           most
#   "agent": "iobatchd ... at commit 632eb10; ..."  bench/agent-overhead.sh,
#                                                   bench/service.sh, bench/sched.sh
#   "agent": "... of main at 1accb76 (...)"       the first hash after "at"
#   "KEY": {"commit": ...}, one per run           bench/mix.sh's summary.json
#   "detector": "main at 4f9371c"                 wcd-latency.json, one run
#   "recorded_in": "da70a40"                      demo.json: the commit that
#                                                 wrote the result down, not
#                                                 the one it was measured on
# and some name none.

HEX = re.compile(r"[0-9a-f]{7,40}")
AT_HEX = re.compile(r"\bat (?:commit )?([0-9a-f]{7,40})\b")


def commits(doc):
    """(where, commit, measured) for each commit doc names, in file order;
    where is the dotted path to the object holding it."""
    out = []

    def walk(x, path):
        if isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, path + [str(i)])
            return
        if not isinstance(x, dict):
            return
        for k, v in x.items():
            if isinstance(v, (dict, list)):
                walk(v, path + [k])
            elif not isinstance(v, str):
                continue
            elif k == "commit":
                out.append((".".join(path), v.strip(), True))
            elif k == "recorded_in":
                out.append((".".join(path), v.strip(), False))
            elif k in ("agent", "detector") and AT_HEX.search(v):
                out.append((".".join(path), AT_HEX.search(v).group(1), True))
    walk(doc, [])
    return out


# Without git's history (a shallow clone, no repository) what only the
# history decides is written as unknown and --check does not compare it:
# unknown() puts UNKNOWN around those words until then.
UNKNOWN = "\x00"


class Git:
    def __init__(self, top):
        self.top = top
        self.head_pending = False
        self._memo = {}
        self.ok = self._history_ok()

    def run(self, *args):
        key = args
        if key not in self._memo:
            try:
                p = subprocess.run(["git", "-C", self.top] + list(args), capture_output=True,
                                   text=True, check=False)
                self._memo[key] = (p.returncode, p.stdout.strip())
            except OSError:
                self._memo[key] = (127, "")
        return self._memo[key]

    def _history_ok(self):
        # a copy of the tree inside another repository is not that one
        rc, out = self.run("rev-parse", "--show-toplevel")
        if rc != 0 or os.path.realpath(out) != os.path.realpath(self.top):
            return False
        rc, out = self.run("rev-parse", "--is-shallow-repository")
        if rc != 0 or out != "false":
            return False
        return self.run("rev-parse", "--verify", "-q", "HEAD")[0] == 0

    def resolve(self, h):
        """The full hash of commit h when it is in HEAD's history, else None."""
        if not HEX.fullmatch(h):
            return None
        rc, full = self.run("rev-parse", "--verify", "-q", h + "^{commit}")
        if rc != 0 or not self.ancestor(full, "HEAD"):
            return None
        return full

    def ancestor(self, a, b):
        return self.run("merge-base", "--is-ancestor", a, b)[0] == 0

    def date(self, full):
        return self.run("log", "-1", "--format=%cs", full, "--")[1]

    def clean(self):
        return self.run("status", "--porcelain", "--untracked-files=no")[1] == ""

    def last_change(self, paths):
        """The last commit that changed paths, or PENDING when the work tree
        or the index changes them: the commit that will carry them and this
        page has no hash yet.  With head_pending, PENDING also when that
        commit is HEAD: the page HEAD carries was written before HEAD was."""
        if self.run("diff", "--quiet", "HEAD", "--", *paths)[0] != 0:
            return PENDING
        full = self.run("log", "-1", "--format=%H", "--", *paths)[1]
        if full and self.head_pending and full == self.run("rev-parse", "HEAD")[1]:
            return PENDING
        return full or None


PENDING = "pending"
git = None


def unknown(words):
    return UNKNOWN + words + UNKNOWN


def commit_date(h):
    """' of DATE' for commit h, or what stands in for it."""
    if not HEX.fullmatch(h):
        return " (not a commit hash)"
    if not git.ok:
        return unknown(" (date unknown)")
    full = git.resolve(h)
    return f" of {git.date(full)}" if full else " (not in this repository's history)"


def read_code_map():
    """{result: [path, ...]} from bench/results-code.txt."""
    out = {}
    try:
        with open(CODE_MAP, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return out
    except OSError as e:
        raise PageError(f"cannot read 'bench/results-code.txt': {e}") from e
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"'bench/results-code.txt' line {n}"
        if len(words) < 2:
            raise PageError(f"{where}: '{words[0]}' names no source path")
        if not os.path.isfile(os.path.join(RESULTS, words[0])):
            raise PageError(f"{where}: no result 'bench/results/{words[0]}'")
        for p in words[1:]:
            if os.path.isabs(p) or ".." in p.split("/") or not os.path.exists(os.path.join(TOP, p)):
                raise PageError(f"{where}: no '{p}' in the repository")
        out[words[0]] = words[1:]
    return out


code_map = {}


def staleness(name):
    """(stale, text) for result name: whether the code it measures changed
    after the commit it was measured on, and the page's words for it."""
    paths = code_map.get(name)
    if not paths:
        return False, "–"
    measured = [(w, h) for w, h, m in commits(load(name)) if m]
    if not measured:
        return False, "unknown: the file records no commit"
    if not git.ok:
        return False, unknown("unknown: no history (a shallow clone or no repository)")
    last = git.last_change(paths)
    if last is None:
        return False, "unknown: no commit changed the code it measures"
    # The mark does not name the commit that changed the code: a page
    # written in the same commit as a code change cannot know that
    # commit's hash, and a mark naming it would go stale with every later
    # commit whether or not it touched the code.
    stale, unsure = [], []
    for w, h in measured:
        who = f"{w} " if w else ""
        full = git.resolve(h)
        if not HEX.fullmatch(h):
            unsure.append(f"{who}'{h}' is not a commit hash: unknown")
        elif full is None:
            unsure.append(f"{who}measured at {h}, which is not in this repository's history: unknown")
        elif last == PENDING or not git.ancestor(last, full):
            stale.append(f"{who}measured at {h}")
    if stale:
        return True, ("**stale**: " + "; ".join(stale) +
                      "; the code it measures changed since" +
                      ("; " + "; ".join(unsure) if unsure else ""))
    if unsure:
        return False, "; ".join(unsure)
    return False, "current"


def stale_mark(name):
    if not code_map.get(name):
        return ""
    if not git.ok:
        return unknown(" (whether the code it measures changed since: unknown)")
    stale, text = staleness(name)
    return f" ({text})" if stale else ""


def commits_section(names):
    rows = []
    for n in names:
        found = commits(load(n))
        if found:
            cells = []
            for w, h, m in found:
                label = (w + ": " if w else "") + ("" if m else "recorded in ")
                cells.append(f"{label}{h}{commit_date(h)}")
            at = "; ".join(cells)
        else:
            at = "no commit recorded"
        rows.append([f"[{n}](results/{n})", at, " ".join(f"`{p}`" for p in code_map.get(n, [])) or "–",
                     staleness(n)[1]])
    return ("\n## Each result's commit\n\n"
            "The commit each result was measured on, the code it measures\n"
            "(`bench/results-code.txt`) and whether that code changed since: a\n"
            "stale result is measured again on a quiet machine, not in CI.\n\n"
            + table(["result", "measured at", "the code it measures", "since then"], rows) + "\n")


# --- the tables -----------------------------------------------------------


def table_soak(name):
    rows = []
    for n in name.split(","):
        d = load(n)
        leaked = sum(v for k, v in d.items() if k.startswith("leaked_"))
        rows.append([f"[{n}](results/{n})", d["lifecycles_done"], d["concurrency"],
                     f"{d['seconds'] / 60:.0f} min", d["failed_lifecycles"], d["failed_checks"],
                     leaked, d["agent_restarts"], d["containerd_restarts"],
                     f"{d['agent_rss_kb_start']} → {d['agent_rss_kb_end']} KB"])
    return table(["run", "lifecycles", "at a time", "took", "failed lifecycles", "failed checks",
                  "leaked (shims, mounts, cgroups, agent entries, fds, snapshots, containers, FIFOs)",
                  "agent restarts", "containerd restarts", "agent RSS"], rows)


SERVICE_LABELS = {
    "all": "all at once (runc)",
    "serial": "batch one at a time (runc)",
    "iobatch": "iobatch (service `io.iobatch.class=latency`)",
    "iobatch.c": "iobatch, `protect_cpu = false`",
}


def service_label(mode):
    m = re.fullmatch(r"iobatch\.f(\d+)", mode)
    if m:
        return f"iobatch, cap fixed at {m.group(1)} MiB/s"
    return SERVICE_LABELS.get(mode, mode)


def table_service(name):
    d = load(name)
    s = d["solo"]
    rows = [["service alone", fmt(s["victim_tps"], ".0f"), "1", fmt(s["victim_p99_ms"], ".1f"), "", ""]]
    for mode, m in d["modes"].items():
        if m.get("victim_tps") is None:
            rows.append([service_label(mode), "no result", "", "", "", ""])
            continue
        ms = m.get("batch_makespan_s")
        mk = f"{ms:.1f} s" + ("" if mode == "all" else f" (×{m['makespan_vs_all']:.2f})") if ms else "–"
        rows.append([service_label(mode),
                     f"{m['victim_tps']:.0f} (×{m['victim_tps_vs_solo']:.2f})",
                     fmt(m.get("victim_tps_p10_1s_vs_solo")),
                     f"{m['victim_p99_ms']:.1f} (×{m['victim_p99_vs_solo']:.1f})",
                     mk, fmt(m.get("victim_lost_tx"))])
    return table(["mode", "TPS (vs alone)", "worst seconds", "p99 ms (vs alone)",
                  "batch makespan (vs all at once)", "transactions lost"], rows)


def table_service_slo(name):
    d = load(name)
    s = d["solo"]
    rows = [["service alone", fmt(s["late_pct"], ".1f"), fmt(s["p99_ms"], ".1f"), "", "", ""]]
    for mode, m in d["modes"].items():
        if m.get("late_pct") is None:
            rows.append([service_label(mode), "no result", "", "", "", ""])
            continue
        rows.append([service_label(mode), fmt(m["late_pct"], ".1f"), fmt(m.get("p99_ms"), ".1f"),
                     fmt(m.get("excess_late_vs_all")), fmt(m.get("batch_makespan_s"), ".1f"),
                     fmt(m.get("makespan_vs_all"))])
    return table(["mode", "missed %", "p99 ms", "excess misses vs all at once",
                  "batch makespan s", "vs all at once"], rows)


def table_service_cpu(name):
    d = load(name)
    rows = []
    for r in d["reps"]:
        mark = "" if r["clean"] else " *"
        rows.append([f"{r['rep']}{mark}", fmt(r["solo_tps"], ".1f"),
                     f"{r['all_tps']:.1f} ({r['all_tps'] / r['solo_tps']:.2f})",
                     f"{r['all_c_tps']:.1f} ({r['all_c_tps'] / r['solo_tps']:.2f})",
                     f"{r['all_makespan_s']:.2f} / {r['all_c_makespan_s']:.2f}"])
    return (table(["rep", "solo TPS", "all: TPS (vs solo)", "all.c: TPS (vs solo)",
                   "makespan all / all.c s"], rows)
            + f"\n\n\\* not comparable: {d['not_clean']}.")


def table_demo(name):
    d = load(name)
    rows = [[r["setting"], fmt(r["victim_tps_ratio"]), fmt(r["makespan_ratio"]),
             fmt(r["all_at_once_tps_ratio"]), r["date"]] for r in d["part1"]["runs"]]
    return table(["setting", "victim_tps_ratio", "makespan_ratio", "all at once: TPS ratio", "date"], rows)


SCHED_LABELS = {"all": "all at once", "serial": "serial", "iobatch": "iobatch (default)",
                "paper": "iobatch (paper)", "calibrated": "iobatch (calibrated matrix)"}


def table_sched(name):
    d = load(name)
    modes = list(d["modes"])
    rows = []
    for mx in d["mixes"]:
        cells = [mx["name"] + ": " + " + ".join(mx["jobs"])]
        for m in modes:
            r = mx["results"].get(m)
            if r is None or r.get("makespan_s") is None:
                cells.append("no result")
                continue
            ratios = mx.get("ratios", {}).get(m, {})
            va, vs = ratios.get("makespan_vs_all"), ratios.get("makespan_vs_serial")
            each = " ".join(f"{x:.1f}" for x in r.get("makespan_all_s", []))
            cells.append(f"{r['makespan_s']:.2f} s"
                         + (f" (×{va:.2f} / ×{vs:.2f})" if m not in ("all", "serial") and None not in (va, vs)
                            else f" (×{va:.2f})" if m == "serial" and va is not None else "")
                         + (f" [{each}]" if each else "")
                         + f", worst {r['worst_slowdown']:.2f}, J {r['jain']:.2f}")
        rows.append(cells)
    notes = [f"- {SCHED_LABELS.get(k, k)}: {v}" for k, v in d["modes"].items() if v != "run"]
    return table(["mix"] + [SCHED_LABELS.get(m, m) for m in modes], rows) + (
        "\n\n" + "\n".join(notes) if notes else "")



def table_pairs(name):
    d = load(name)
    rows = [[f"{p['a']} + {p['b']}", fmt(p["ratio"]), fmt(p["slow_a"]), fmt(p["slow_b"])]
            for p in d["pairs"]]
    return table(["pair", "together / one after the other", "A slowed", "B slowed"], rows,
                 ["---", "---:", "---:", "---:"])


def table_simdisk_mix(name):
    """bench/mix.sh's summary: one row per disk (and style)."""
    d = load(name)
    rows = []
    for key in sorted(d):
        r = d[key]
        a = r.get("all_s")

        def vs(v):
            return "–" if v is None or not a else f"{v:.1f} s (×{v / a:.2f})"
        rows.append([f"{key}: {r.get('device', '')}", f"{a:.1f} s" if a else "–",
                     vs(r.get("serial_s")), vs(r.get("plan_s")), vs(r.get("iobatch_warm_s")),
                     " ".join(fmt(x) for x in r.get("iobatch_fresh_runs_vs_all") or []),
                     " ".join(fmt(x) for x in r.get("iobatch_warm_runs_vs_all") or []) or "–",
                     fmt(r.get("held")), r.get("load_average_start", "–"),
                     f"{r.get('date', '')}, commit {r.get('commit', '')}, {r.get('repeats')} repeats"])
    return table(["disk", "all at once", "one after another", "class plan", "iobatch warmed",
                  "fresh runs 1, 2, 3 (× all)", "after a solo warm-up: runs 1, 2, 3 (× all)",
                  "held (warm)", "load average", "run"], rows,
                 ["---", "---:", "---:", "---:", "---:", "---", "---", "---:", "---", "---"])


def table_simdisk_calibration(name):
    """bench/simdisk-calibrate.sh: each run's rate, with the daemon's CPU use."""
    d = load(name)
    rows = []
    for r in d.get("runs", []):
        j = (r.get("jobs") or [{}])[0]
        rd, wr = j.get("read") or {}, j.get("write") or {}
        side = rd if (rd.get("kib") or 0) >= (wr.get("kib") or 0) else wr
        rows.append([r.get("name"), fmt(side.get("MBps"), ".1f"), fmt(side.get("iops"), ".0f"),
                     fmt(side.get("lat_mean_us"), ".0f"), fmt(r.get("daemon_cpu_percent"), ".1f")])
    for p in d.get("pairs", []):
        rows.append([f"pair {p.get('name')}: together / one after the other",
                     fmt(p.get("ratio_together_over_serial"), ".2f"), "", "", ""])
    return table(["run", "MB/s", "IOPS", "mean latency us", "daemon CPU % of a core"], rows,
                 ["---", "---:", "---:", "---:", "---:"])


def table_valley(name):
    d = load(name)
    rows = []
    for r in d["results"]:
        m = r["modes"]
        rows.append([r["readers"], fmt(r["working_set_vs_limit"]),
                     fmt(m["all"]["throughput_mib_s"], ".0f"), fmt(m["serial"]["throughput_mib_s"], ".0f"),
                     fmt(m["iobatch"]["throughput_mib_s"], ".0f"), fmt(r["iobatch_vs_all"]),
                     fmt(m["all"]["limit_hits"], ".0f")])
    return table(["readers", "working set / limit", "all at once MiB/s", "serial MiB/s",
                  "iobatch MiB/s", "iobatch / all", "limit hits (all)"], rows)


def table_dirty_cost(name):
    d = load(name)
    rows = []
    for w, r in d["writers"].items():
        p = r["program"]
        rows.append([w, r["bytes_mib"], fmt(r["median_us"]["without_agent"] / 1000, ".1f"),
                     fmt(r["median_us"]["with_agent"] / 1000, ".1f"), fmt(r["ratio"], ".3f"),
                     p["calls"], fmt(p["ns_per_call"], ".0f") if p["ns_per_call"] else "–",
                     fmt(100 * p["share_of_median"], ".2f")])
    return table(["writer", "MiB", "median ms, no agent", "median ms, agent", "agent / no agent",
                  "program calls (one run)", "ns per call", "% of the run"], rows)


def table_shim_cost(name):
    d = load(name)
    by = {}
    for m in d["memory_kb"]:
        by.setdefault(m["containers"], {})[m["shim"]] = m
    rows = []
    for n, s in sorted(by.items()):
        r, i = s["runc"], s["iobatch"]
        rows.append([n, f"{r['rss_median']:g} / {r['pss_median']:g} KB",
                     f"{i['rss_median']:g} / {i['pss_median']:g} KB",
                     f"{i['pss_median'] / r['pss_median']:.3f}"])
    life = d["lifecycle_ms_median"]
    idle = d["idle_cpu_ms"]
    return (table(["running containers", "runc shim RSS / PSS", "iobatch shim RSS / PSS", "PSS ratio"], rows)
            + f"\n\n`ctr run --rm /bin/true`, median of {life['reps']} interleaved runs: runc shim "
            f"{life['runc']:.1f} ms, iobatch shim {life['iobatch']:.1f} ms "
            f"(ratio {life['iobatch'] / life['runc']:.2f}). Idle CPU over {idle['seconds']} s: "
            f"{idle['runc']} ms against {idle['iobatch']} ms.")


def table_start_path(name):
    """bench/start-path.sh: median ms per phase of `ctr run --rm`, each shim."""
    d = load(name)
    m = d["median_ms"]
    r, i = m["runc_shim"], m["iobatch"]
    rows = [[k, f"{r[k]:.1f}", f"{i[k]:.1f}", f"{i[k] - r[k]:+.1f}"] for k in r]
    return (table(["phase", "runc's shim (ms)", "iobatch (ms)", "iobatch − runc's"], rows,
                  ["---", "---:", "---:", "---:"])
            + f"\n\n{d['reps']} runs of each, interleaved; load average {d['load_average_start']}. "
            f"Total iobatch / runc's shim: {i['total'] / r['total']:.2f}; runc's three calls are "
            f"{i['runc_calls'] / i['total']:.0%} of iobatch's total.")


def trim_ratio(name, containers):
    """iobatch shim PSS with trim / without, means of the runs."""
    d = load(name)

    def pss(on):
        return statistics.mean(m["pss_median"] for r in d["runs"] if r["trim"] == on
                               for m in r["memory_kb"] if m["shim"] == "iobatch" and m["containers"] == containers)
    return f"{pss(True) / pss(False):.2f}"


def table_shim_trim(name):
    d = load(name)
    rows = []
    for r in d["runs"]:
        for m in r["memory_kb"]:
            if m["shim"] == "iobatch":
                rows.append([r["run"], "on" if r["trim"] else "off", m["containers"],
                             f"{m['rss_median']:g}", f"{m['pss_median']:g}"])
    return table(["run", "trim", "containers", "iobatch shim RSS KB", "PSS KB"], rows) + (
        f"\n\nPSS with trim / without (means of the runs): {trim_ratio(name, 1)}× with one container, "
        f"{trim_ratio(name, 10)}× with ten.")


def table_agent_overhead(name):
    d = load(name)
    s = d["sampling"]
    out = []
    if s["status"] == "run":
        out.append(table(["registered cgroups", "CPU % of a core (1 Hz)", "µs per cgroup sample", "RSS KiB",
                          "sampler / latency_source options", "sampler running"],
                         [[r["cgroups"], fmt(r["cpu_percent"]), fmt(r["cpu_us_per_cgroup_sample"], ".0f")
                           if r["cpu_us_per_cgroup_sample"] is not None else "–", r["rss_kib"],
                           f"{r.get('sampler_option', '?')} / {r.get('latency_source_option', '?')}", r["sampler"]]
                          for r in s["runs"]], ["---:", "---:", "---:", "---:", "---", "---"]))
    else:
        out.append(f"Sampling: {s['status']}")
    a = d["admission"]
    if a["status"] == "run":
        m = a["median_ms"]
        out.append(f"Uncontended admission (`ctr run --rm /bin/true`, median of {a['reps']}): runc shim "
                   f"{m['runc_shim']:.1f} ms, iobatch shim without an agent {m['iobatch_no_agent']:.1f} ms, "
                   f"asking iobatchd {m['iobatch_with_agent']:.1f} ms, with `batch_window = 0` "
                   f"{m['iobatch_with_agent_no_batch_window']:.1f} ms; asking iobatchd against the runc shim: "
                   f"{m['iobatch_with_agent'] / m['runc_shim']:.2f}.")
    else:
        out.append(f"Admission latency: {a['status']}")
    return "\n\n".join(out)


def table_kubepods_overhead(name):
    d = load(name)
    walk = re.compile(r"(\d+) walks .*over (\d+) directories in ([0-9.]+) ms")

    def last_walk(r):
        m = walk.search(r["kubepods_at_end"])
        return f"{m.group(2)} dirs, {m.group(3)} ms ({m.group(1)} walks)" if m else "–"
    return table(["containers found", "CPU % of a core (1 Hz)", "RSS KiB", "last walk"],
                 [[r["found"], fmt(r["cpu_percent"]), r["rss_kib"], last_walk(r)] for r in d["runs"]],
                 ["---:", "---:", "---:", "---"])


def table_plan_cost(name):
    d = load(name)
    rows = [[r["pending"], f"{r['defaults_ms']:.3f}", f"{r['defaults_max_ms']:.3f}",
             f"{r['evidence_ms']:.3f}", f"{r['evidence_max_ms']:.3f}", r["admitted"]] for r in d["rows"]]
    return (f"{d['running']} containers running, CPU per plan in ms, median (and max) of {d['reps']}:\n\n"
            + table(["pending", "shipped defaults", "max", "every pair counted as evidence", "max",
                     "admitted by the evidence plan"], rows, ["---:"] * 6))


def table_profiles_rss(name):
    d = load(name)
    rows = [[p, kb] for p, kb in d["median_rss_kb"].items()]
    return (table(["profiles loaded", "agent RSS KB (median)"], rows, ["---:", "---:"])
            + f"\n\nAbout {d['kb_per_profile']:g} KB a profile.")


def table_solver(name):
    d = load(name)
    small = table(["N", "instances", "brute force ms", "exact ms", "heuristic ms", "exact gap max",
                   "heuristic optimal"],
                  [[r["n"], r["instances"], f"{r['brute_force_s'] * 1000:.3g}", f"{r['exact_s'] * 1000:.3g}",
                    f"{r['heuristic_s'] * 1000:.3g}", fmt(r["exact_gap_max"]),
                    f"{r['heuristic_optimal']} of {r['instances']}"] for r in d["small"]])
    large = table(["instance", "N", "heuristic ms", "exact ms", "heuristic gap"],
                  [[r["instance"], r["n"], f"{r['heuristic_s'] * 1000:.3g}",
                    "not run" if r.get("exact_s") is None else f"{r['exact_s'] * 1000:.3g}",
                    fmt(r.get("heuristic_gap"))] for r in d["large"]])
    return small + "\n\n" + large


def table_calibration(name):
    d = load(name)
    c = ["seq-read", "rand-read", "seq-write", "rand-write"]
    sd = d["measurements"]["slowdown"]
    return table(["victim \\ neighbour"] + c, [[v] + [fmt(sd[v][n]) for n in c] for v in c],
                 ["---"] + ["---:"] * 4)


def table_libcgroup(name):
    d = load(name)
    c = d["cpu"]
    labels = {"discover": "find the cgroup2 and v1 blkio mounts", "pid_cgroup": "a process's blkio cgroup",
              "read_blkio": "read and parse blkio.throttle.io_service_bytes"}
    rows = [[labels.get(k, k), v["cgroupv2"], v["libcgroup"], fmt(v["libcgroup_vs_cgroupv2"])]
            for k, v in c["ns_per_call"].items()]
    m = d["memory"]
    return (f"CPU ns per call, median of {c['repeats']} repeats of {c['iterations']} calls:\n\n"
            + table(["what", "cgroupv2/", "libcgroup", "libcgroup / cgroupv2/"], rows,
                    ["---", "---:", "---:", "---:"])
            + f"\n\nAn idle process: {m['idle_plain_kb']['pss']} KB PSS; after `cgroup_init()` "
            f"{m['idle_after_cgroup_init_kb']['pss']} KB (+{m['cgroup_init_adds_kb']['pss']} KB PSS, "
            f"+{m['cgroup_init_adds_kb']['rss']} KB RSS), of which libcgroup's own mapping "
            f"{m['libcgroup_mapping_kb']['pss']} KB PSS.")


def table_sampler_v2(name):
    d = load(name)
    rows = []
    for case, c in d["cases"].items():
        ib = c["iostat"]["rbytes"] + c["iostat"]["wbytes"]
        bb = c["bpf"]["rbytes"] + c["bpf"]["wbytes"]
        ii = c["iostat"]["rios"] + c["iostat"]["wios"]
        bi = c["bpf"]["rios"] + c["bpf"]["wios"]
        rows.append([f"{case}: {c['workload']}", ib, bb, fmt(c["bytes_diff_pct"], "+.3f") + "%",
                     ii, bi, c["busy_windows"],
                     "–" if c["window_diff_pct_median"] is None else
                     f"{fmt(c['window_diff_pct_median'], '+.2f')}%, {fmt(c['window_diff_pct_max_abs'], '.2f')}%"])
    return table(["workload (its own cgroup)", "io.stat bytes", "BPF bytes", "BPF − io.stat",
                  "io.stat ios", "BPF requests", "windows with ≥ 1 MiB",
                  "per window: median, largest difference (absolute)"], rows,
                 ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---"])


def table_wcd(name):
    d = load(name)
    rows = [[r["name"], r["detector"], f"{r['correct']} of {r['total']} ({r['correct'] / r['total']:.0%})",
             f"{r['flag_latency']} of {r['latency_runs']}", f"{r['flag_batch']} of {r['batch_runs']}"]
            for r in d["runs"]]
    return table(["where", "detector", "correct", "latency flag on latency-sensitive runs",
                  "latency flag on batch runs"], rows)


# --- the template ---------------------------------------------------------

DIRECTIVE = re.compile(r"\{\{([^{}]+)\}\}")


def expand(m):
    try:
        return expand1(m.group(1).strip())
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
        raise PageError(f"'{{{{{m.group(1).strip()}}}}}': {type(e).__name__} {e} "
                        "(a result file without what the page shows?)") from e


def expand1(directive):
    parts = directive.split(":")
    if parts[0] == "table":
        fn = globals().get("table_" + parts[1].replace("-", "_"))
        if fn is None:
            raise PageError(f"no table '{parts[1]}' (bench/results-page.py)")
        return fn(parts[2])
    if parts[0] == "trim":
        return trim_ratio(parts[1], int(parts[2]))
    if parts[0] == "about":
        return about(parts[1])
    name, path = parts[0], parts[1] if len(parts) > 1 else ""
    spec = ":".join(parts[2:])
    return fmt(get(load(name), path, name), spec)


def result_files():
    out = []
    for root, dirs, files in os.walk(RESULTS):
        # a benchmark's logs beside its results (bench/mix.sh's logs-KEY/)
        dirs[:] = sorted(d for d in dirs if not d.startswith("logs-"))
        for f in sorted(files):
            if f.endswith(".json"):
                out.append(os.path.relpath(os.path.join(root, f), RESULTS))
    return out


def render(head_pending=False):
    """The page, with UNKNOWN around what git's history decides when
    there is none."""
    global git, code_map
    git = Git(TOP)
    git.head_pending = head_pending
    used.clear()
    code_map = read_code_map()
    with open(TEMPLATE, encoding="utf-8") as f:
        text = f.read()
    text = DIRECTIVE.sub(expand, text)
    left = [n for n in result_files() if n not in used]
    if left:
        text = text.rstrip("\n") + "\n\n## Other results\n\nNot described above yet:\n\n"
        for n in left:
            text += f"- {about(n)}\n"
    text = text.rstrip("\n") + "\n" + commits_section(result_files())
    head = ("<!-- Generated by bench/results-page.py from bench/RESULTS.md.in and bench/results/;\n"
            "     do not edit: `make docs` writes it, `make docs-check` fails when it is stale. -->\n")
    return head + text


def matches(page, rendered):
    """Whether page is rendered, each UNKNOWN span standing for any text
    on its line."""
    parts = rendered.split(UNKNOWN)
    pattern = "[^\n]*?".join(re.escape(p) for p in parts[::2])
    return re.fullmatch(pattern, page) is not None


def main(argv):
    args = argv[1:]
    check = args[:1] == ["--check"]
    args = args[1:] if check else args
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: bench/results-page.py [--check] [ROOT]", file=sys.stderr)
        return 2
    if args:
        set_top(args[0])
    try:
        rendered = render()
    except PageError as e:
        print(f"results-page: {e}", file=sys.stderr)
        return 1
    new = re.sub(UNKNOWN + "([^" + UNKNOWN + "]*)" + UNKNOWN, r"\1", rendered)
    stale = [n for n in result_files() if staleness(n)[0]]
    if stale:
        print(f"results-page: {len(stale)} results measured before a change to the code they "
              f"measure (marked stale on the page): {', '.join(stale)}")
    if not git.ok:
        print("results-page: no git history here (a shallow clone?): commits' dates and "
              "stale marks are unknown and not checked")
    if not check:
        with open(PAGE + ".tmp", "w", encoding="utf-8") as f:
            f.write(new)
        os.replace(PAGE + ".tmp", PAGE)
        return 0
    try:
        with open(PAGE, encoding="utf-8") as f:
            old = f.read()
    except OSError as e:
        old = ""
        print(f"results-page: cannot read 'bench/RESULTS.md': {e}", file=sys.stderr)
    if old == new or (not git.ok and matches(old, rendered)):
        print("docs-check: bench/RESULTS.md is up to date")
        return 0
    # HEAD itself, checked on a clean tree, may carry a page written just
    # before it was committed, when the change to the code it names had no
    # hash yet.  Before the next commit (a tree with changes) the page must
    # name it.
    if git.ok and git.clean():
        try:
            if old == render(head_pending=True):
                print("docs-check: bench/RESULTS.md is up to date")
                return 0
        except PageError:
            pass
    print("docs-check: bench/RESULTS.md is stale (make docs regenerates it):")
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                               "bench/RESULTS.md", "bench/results-page.py", n=1))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
