#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/kubernetes/iobatch-dashboard.json and iobatch-alerts.yaml
# against the agent that serves the metrics: an iobatchd is started and
# scraped, and every metric name the dashboard's queries and the alert
# rules select (tests/k8s/promql.py) must be one it serves (its TYPE
# lines; a histogram's _bucket, _sum, _count); a copy of the dashboard
# with a misspelt metric must fail that.  The I/O counters and latency
# histograms have samples for a container from its Register on.  The dashboard's
# queries parse as PromQL and the alert rules parse (promtool check rules,
# Debian's prometheus package); promtool test rules shows that the main
# alerts fire on the series they are about and not on NaN headroom.  The
# scrape itself passes promtool check metrics (the text format's parser
# and Prometheus' naming lint).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 13

iob_need promtool curl
PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || bail "python3-yaml is needed (scripts/install-deps.sh)"
K=$IOB_TOP/packaging/kubernetes
PROMQL=$IOB_TOP/tests/k8s/promql.py
MSOCK=$IOB_T/metrics.sock
agent_start "metrics = unix:$MSOCK" || bail "iobatchd did not start"
# A container with pod names, so that the per-container series have samples.
ctl register mon1 --pod pg-0 --pod-ns db --name postgres --class latency >/dev/null
curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics >"$IOB_T/scrape"
out=$(promtool check metrics <"$IOB_T/scrape" 2>&1)
rc=$?
[ -z "$out" ] || diag "$out"
is "$rc:$out" "0:" "the scrape passes promtool check metrics (format and naming lint)"
# served: every name a sample of the scrape may carry
awk '$1 == "#" && $2 == "TYPE" { print $3; if ($4 == "histogram") { print $3 "_bucket"; print $3 "_sum"; print $3 "_count" } }' \
  "$IOB_T/scrape" | sort -u >"$IOB_T/served"
n=$(wc -l <"$IOB_T/served")
[ "$n" -ge 30 ]
is "$?" "0" "the agent serves $n metric names"
# The counters and the histogram the dashboard takes rates of have
# samples from registration on, before any I/O (0), so that rate() sees
# a container's first window; the node's counters too.
want='iobatch_container_io_bytes_total op="read"
iobatch_container_io_bytes_total op="write"
iobatch_container_io_operations_total op="read"
iobatch_container_io_operations_total op="write"
iobatch_container_io_latency_seconds_bucket le="+Inf"
iobatch_container_io_latency_seconds_sum approx=
iobatch_container_io_latency_seconds_count approx='
got=$(while read -r name label; do
  grep -c "^$name{.*id=\"mon1\".*$label" "$IOB_T/scrape"
done <<<"$want" | tr '\n' ' ')
n=$(grep -c '^iobatch_node_io_\(bytes\|operations\)_total{op="\(read\|write\)"} [0-9]*$' "$IOB_T/scrape")
is "$got$n" "1 1 1 1 1 1 1 4" "the per-container counters and histogram have samples from Register on, the node's counters too"
# missing FILE: the names FILE's queries select that the agent does not serve
missing() {
  $PY "$PROMQL" names "$1" >"$IOB_T/used" || return 1
  [ -s "$IOB_T/used" ] || return 1
  comm -23 "$IOB_T/used" "$IOB_T/served" | tr '\n' ' '
}
m=$(missing "$K/iobatch-dashboard.json")
is "$?:$m" "0:" "every metric the dashboard's queries name is served ($(wc -l <"$IOB_T/used") names)"
grep -qx iobatch_node_io_headroom_ratio "$IOB_T/used" && grep -qx iobatch_container_io_cap_bytes_per_second "$IOB_T/used"
is "$?" "0" "the dashboard shows the headroom and the caps"
sed 's/iobatch_container_io_cap_bytes_per_second/iobatch_container_io_cap_bytes/' \
  "$K/iobatch-dashboard.json" >"$IOB_T/bad-dashboard.json"
is "$(missing "$IOB_T/bad-dashboard.json")" "iobatch_container_io_cap_bytes " \
  "a misspelt metric in a copy of the dashboard is caught"
m=$(missing "$K/iobatch-alerts.yaml")
is "$?:$m" "0:" "every metric the alert rules name is served ($(wc -l <"$IOB_T/used") names)"
$PY "$PROMQL" rules "$K/iobatch-dashboard.json" >"$IOB_T/dashboard-rules.yaml"
like "$(promtool check rules "$IOB_T/dashboard-rules.yaml" 2>&1)" "SUCCESS: [0-9]+ rules found" \
  "every dashboard query parses as PromQL"
$PY "$PROMQL" extract "$K/iobatch-alerts.yaml" >"$IOB_T/rules.yaml"
out=$(promtool check rules "$IOB_T/rules.yaml" 2>&1)
like "$out" "SUCCESS: 8 rules found" "the alert rules parse (promtool check rules)"
sed 's/expr: iobatch_io_pressure == 1/expr: iobatch_io_pressure ==/' "$IOB_T/rules.yaml" >"$IOB_T/bad-rules.yaml"
promtool check rules "$IOB_T/bad-rules.yaml" >/dev/null 2>&1
is "$?" "1" "a broken rule fails promtool check rules"
# The latency histograms: db/pg-0 completes 100 requests a minute, all
# between 8.192 and 16.384 ms (p99 16.3 ms by histogram_quantile's
# interpolation, above its 5 ms objective); web/w 100 a minute, all under
# 1.024 ms (below its own).
cat >"$IOB_T/rules.test.yaml" <<'TEST'
rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'iobatch_io_pressure{instance="n1"}'
        values: '0 0 1x20'
      - series: 'iobatch_io_pressure{instance="n2"}'
        values: '0x22'
      - series: 'iobatch_node_io_headroom_ratio{instance="n1"}'
        values: '0.05x40'
      - series: 'iobatch_node_io_headroom_ratio{instance="n2"}'
        values: 'NaN+0x40'
      - series: 'iobatch_node_io_headroom_ratio{instance="n3"}'
        values: '0.5x40'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",approx="false",le="0.000032"}'
        values: '0x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",approx="false",le="0.001024"}'
        values: '0x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",approx="false",le="0.008192"}'
        values: '0x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",approx="false",le="0.016384"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",approx="false",le="+Inf"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",approx="false",le="0.000032"}'
        values: '0x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",approx="false",le="0.001024"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",approx="false",le="0.008192"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",approx="false",le="0.016384"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_seconds_bucket{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",approx="false",le="+Inf"}'
        values: '0+100x20'
      - series: 'iobatch_container_io_latency_target_seconds{instance="n1",namespace="db",pod="pg-0",container="postgres",id="c1",runtime_namespace="k8s.io",source="declared"}'
        values: '0.005x20'
      - series: 'iobatch_container_io_latency_target_seconds{instance="n1",namespace="web",pod="w",container="nginx",id="c2",runtime_namespace="k8s.io",source="learned"}'
        values: '0.005x20'
      - series: 'iobatch_build_info{instance="n1",version="1",revision="x"}'
        values: '1x40'
    alert_rule_test:
      - eval_time: 4m
        alertname: IobatchIOPressure
      - eval_time: 10m
        alertname: IobatchIOPressure
        exp_alerts:
          - exp_labels: {severity: warning, instance: n1}
            exp_annotations:
              summary: Protected containers on n1 miss their I/O objective
              description: >-
                iobatchd has seen latency-sensitive containers miss their latency objective
                (or fall short of their share) for several sample windows in a row, despite
                capping and holding batch containers. The disk is over-committed: move batch
                pods elsewhere (iobatch_node_io_headroom_ratio).
      - eval_time: 15m
        alertname: IobatchLatencyAboveObjective
        exp_alerts:
          - exp_labels: {severity: warning, instance: n1, namespace: db, pod: pg-0, container: postgres}
            exp_annotations:
              summary: "db/pg-0/postgres: p99 I/O latency above its objective"
              description: >-
                The container's p99 block I/O latency (over 5 minutes) has been above the
                objective iobatchd protects for 10 minutes (16.3ms now).
      - eval_time: 35m
        alertname: IobatchNodeIOHeadroomLow
        exp_alerts:
          - exp_labels: {severity: info, instance: n1}
            exp_annotations:
              summary: n1 has less than 10% of its measured disk capacity left
              description: >-
                Over 15 minutes the containers on this node used more than 90% of the disk's
                measured capacity; place new batch pods elsewhere. (While the headroom is
                unknown the metric is NaN and this does not fire.)
      - eval_time: 35m
        alertname: IobatchAgentMissing
TEST
out=$(cd "$IOB_T" && promtool test rules rules.test.yaml 2>&1)
rc=$?
[ "$rc" -eq 0 ] || diag "$out"
is "$rc" "0" "the alerts fire on the series they are about, not on NaN headroom (promtool test rules)"
# ... and that test can fail: an objective alert that waits longer than
# the test's series last
sed 's/for: 10m$/for: 30m/' "$IOB_T/rules.yaml" >"$IOB_T/rules.yaml.new" &&
  mv "$IOB_T/rules.yaml.new" "$IOB_T/rules.yaml"
(cd "$IOB_T" && promtool test rules rules.test.yaml >/dev/null 2>&1)
is "$?" "1" "promtool test rules fails when an alert does not fire"
agent_stop
is "$AGENT_RC" "0" "the agent stops cleanly"
tap_done
