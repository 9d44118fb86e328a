# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # PGB_* are read by the scripts that source this file
# PostgreSQL 15 from Debian as a containerised service, and pgbench against
# it (sourced by bench/service.sh and tests/demo.sh, after
# tests/integration/lib/common.sh and iob_containerd_start, so that $CTR and
# $IOB_T exist).
#
# The container's rootfs is busybox-static plus the host's /usr bind-mounted
# read-only (the postgres binaries, their shared libraries, share files and
# time zones; /lib and /lib64 are symlinks into it as on a merged-/usr
# Debian), an /etc/passwd entry for the host's postgres user (same uid/gid,
# so that the data directory on the host belongs to it) and mount points.
# The data directory lives on the host disk and is bind-mounted read-write;
# the server listens only on a unix socket in a host directory that is
# bind-mounted too, so pgbench runs on the host with -h SOCKDIR.
#
# The server is the container's pid 1 (busybox start-stop-daemon execs it as
# the postgres user), so `ctr task kill -s SIGINT` is a fast shutdown.
#
# Functions:
#   pg_find                      sets PG_BIN (server binaries) or fails
#   pg_rootfs DIR                the rootfs above
#   pg_initdb DATADIR            initdb as the postgres user (host), trust auth
#   pg_start RUNTIME ID DATADIR SOCKDIR LOG [ctr run flags...]
#                                `ctr run --rm` in the background (PG_CTR_PID),
#                                returns when the server accepts connections
#   pg_stop ID                   fast shutdown, waits for ctr run to return
#   pg_sql SOCKDIR SQL           psql -c as postgres
#   pgb_init SOCKDIR SCALE       pgbench -i -s SCALE (quiet)
#   pgb_start SOCKDIR OUTPREFIX SECONDS CLIENTS
#                                pgbench -T SECONDS -P 1 --log in the
#                                background (PGB_PID); PGB_T0_NS = host time
#                                just before it started; the array PGB_EXTRA
#                                adds arguments (the rate-limited service:
#                                -R RATE -L LIMIT_MS)
#   pgb_max SOCKDIR OUTPREFIX SECONDS
#                                one unthrottled run in the foreground; prints
#                                its TPS (the service's maximum)
#   pgb_slo OUTPREFIX LIMIT_MS   JSON {scheduled, skipped, late, late_pct,
#                                p50_ms, p99_ms, p999_ms} of a -R run: a
#                                transaction misses when pgbench skipped it
#                                or it ended more than LIMIT_MS after its
#                                scheduled start (time + schedule lag);
#                                late_pct = misses / scheduled x 100;
#                                percentiles over the transactions that ran,
#                                schedule lag included
#   pgb_window OUTPREFIX FROM_NS TO_NS
#                                JSON {tps, p50_ms, p99_ms, mean_ms, n} of the
#                                transactions that completed in [FROM, TO)
#   pgb_series OUTPREFIX T0_NS   "second tps" lines (completions per second)

PG_SCALE=${PG_SCALE:-10}
PG_CLIENTS=${PG_CLIENTS:-4}
PGB_EXTRA=()

pg_find() {
  local d
  PG_BIN=${PG_BIN:-}
  if [ -z "$PG_BIN" ]; then
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
      if [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pgbench" ]; then PG_BIN=$d; break; fi
    done
  fi
  [ -n "$PG_BIN" ] || { echo "no PostgreSQL server under /usr/lib/postgresql (scripts/install-deps.sh installs postgresql-15)"; return 1; }
  case $PG_BIN in /usr/*) ;; *) echo "PG_BIN '$PG_BIN' is not under /usr (the container sees the host's /usr only)"; return 1 ;; esac
  for t in psql pg_isready; do
    [ -x "$PG_BIN/$t" ] || command -v "$t" >/dev/null || { echo "'$t' not found (postgresql-client-15)"; return 1; }
  done
  id -u postgres >/dev/null 2>&1 || { echo "no 'postgres' user (the postgresql-15 package creates it)"; return 1; }
  return 0
}

_pg_tool() { # NAME: the versioned binary if there is one, else PATH's
  if [ -x "$PG_BIN/$1" ]; then echo "$PG_BIN/$1"; else command -v "$1"; fi
}

pg_rootfs() {
  local d=$1
  iob_rootfs_busybox "$d"
  ln -sfn usr/lib "$d/lib"
  [ ! -e /usr/lib64 ] || ln -sfn usr/lib64 "$d/lib64"
  mkdir -p "$d/usr" "$d/run/postgresql" "$d/var/lib/pg/data"
  getent passwd postgres | awk -F: -v OFS=: '{ $6 = "/var/lib/pg"; $7 = "/bin/sh"; print }' >>"$d/etc/passwd"
  getent group postgres >>"$d/etc/group" || true
}

pg_initdb() {
  local data=$1
  mkdir -p "$data"
  chown postgres: "$data"
  chmod 700 "$data"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$data" --auth=trust -E UTF8 --locale=C >/dev/null
}

# The server's settings: a unix socket only; everything else is initdb's
# default (fsync on, synchronous_commit on, shared_buffers 128 MB), so every
# commit waits for its WAL flush, as a real database does.
PG_ARGS=(-D /var/lib/pg/data -c listen_addresses= -c unix_socket_directories=/run/postgresql
  -c max_connections=50 -c log_min_messages=warning)

pg_start() {
  local rt=$1 id=$2 data=$3 sock=$4 log=$5 i
  shift 5
  mkdir -p "$sock"
  chown postgres: "$sock"
  $CTR run --rm --runtime "$rt" "$@" \
    --mount "type=bind,src=/usr,dst=/usr,options=rbind:ro" \
    --mount "type=bind,src=$data,dst=/var/lib/pg/data,options=rbind:rw" \
    --mount "type=bind,src=$sock,dst=/run/postgresql,options=rbind:rw" \
    --rootfs "$PG_ROOTFS" "$id" \
    /bin/start-stop-daemon -S -c postgres:postgres -x "$PG_BIN/postgres" -- "${PG_ARGS[@]}" \
    >>"$log" 2>&1 &
  PG_CTR_PID=$!
  for i in $(seq 1 600); do
    "$(_pg_tool pg_isready)" -q -h "$sock" -U postgres 2>/dev/null && return 0
    kill -0 "$PG_CTR_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "postgres '$id' did not start; log:" >&2
  tail -20 "$log" >&2
  return 1
}

pg_stop() {
  local id=$1
  $CTR task kill -s SIGINT "$id" >/dev/null 2>&1 || true
  for _ in $(seq 1 300); do
    kill -0 "$PG_CTR_PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$PG_CTR_PID" 2>/dev/null; then
    $CTR task kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  fi
  wait "$PG_CTR_PID" 2>/dev/null || true
  $CTR task delete -f "$id" >/dev/null 2>&1 || true
  $CTR container delete "$id" >/dev/null 2>&1 || true
}

pg_sql() { "$(_pg_tool psql)" -X -q -h "$1" -U postgres -d postgres -c "$2" >/dev/null; }

pgb_init() { "$PG_BIN/pgbench" -h "$1" -U postgres -i -s "$2" -q postgres >/dev/null 2>&1; }

pgb_start() {
  local sock=$1 out=$2 secs=$3 clients=${4:-$PG_CLIENTS}
  PGB_T0_NS=$(date +%s%N)
  "$PG_BIN/pgbench" -h "$sock" -U postgres -c "$clients" -j 2 -T "$secs" -P 1 \
    "${PGB_EXTRA[@]}" --log --log-prefix="$out" postgres >"$out.txt" 2>&1 &
  PGB_PID=$!
}

pgb_max() {
  local sock=$1 out=$2 secs=$3
  "$PG_BIN/pgbench" -h "$sock" -U postgres -c "$PG_CLIENTS" -j 2 -T "$secs" postgres >"$out.txt" 2>&1 ||
    { echo "pgbench (unthrottled) failed: $(tail -2 "$out.txt")" >&2; return 1; }
  # "tps = 2466.1 (without initial connection time)"
  awk '/^tps = / { print $3; exit }' "$out.txt"
}

# With -R the log line is: client_id transaction_no time_us script_no
# time_epoch time_us_part schedule_lag_us; time_us is "skipped" for a
# transaction -L dropped before sending it.
pgb_slo() {
  local out=$1 limit_ms=$2 skipped
  skipped=$(_pgb_lines "$out" | awk 'NF >= 7 && $3 == "skipped" { n++ } END { print n + 0 }')
  _pgb_lines "$out" | awk 'NF >= 7 && $3 != "skipped" { printf "%.3f\n", ($3 + $7) / 1000 }' |
    sort -n | awk -v lim="$limit_ms" -v skipped="$skipped" '
    { v[NR] = $1; if ($1 > lim) late++ }
    END {
      n = NR; total = n + skipped
      if (total == 0) { print "{\"scheduled\":0,\"skipped\":0,\"late\":0,\"late_pct\":null,\"p50_ms\":null,\"p99_ms\":null,\"p999_ms\":null}"; exit }
      split("0.5 0.99 0.999", q, " ")
      for (k = 1; k <= 3; k++) { i = int(q[k] * n + 0.999999); if (i < 1) i = 1; p[k] = (n > 0) ? sprintf("%.3f", v[i]) : "null" }
      printf "{\"scheduled\":%d,\"skipped\":%d,\"late\":%d,\"late_pct\":%.3f,\"p50_ms\":%s,\"p99_ms\":%s,\"p999_ms\":%s}\n",
        total, skipped, late + 0, (late + skipped) * 100 / total, p[1], p[2], p[3]
    }'
}

# Per-transaction log lines: client_id transaction_no time_us script_no
# time_epoch time_us_part (completion time = epoch + us).
_pgb_lines() { cat "$1".[0-9]* 2>/dev/null; }

pgb_window() {
  local out=$1 from=$2 to=$3
  _pgb_lines "$out" | awk -v from="$from" -v to="$to" '
    { t = $5 * 1000000 + $6; if (t * 1000 >= from && t * 1000 < to) print $3 / 1000 }' |
    sort -n | awk -v span="$(awk -v a="$from" -v b="$to" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')" '
    { v[NR] = $1; s += $1 }
    END {
      n = NR
      if (n == 0) { printf "{\"n\":0,\"tps\":0,\"p50_ms\":null,\"p99_ms\":null,\"mean_ms\":null,\"span_s\":%s}\n", span; exit }
      i50 = int(0.50 * n + 0.999999); if (i50 < 1) i50 = 1
      i99 = int(0.99 * n + 0.999999); if (i99 < 1) i99 = 1
      printf "{\"n\":%d,\"tps\":%.2f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"span_s\":%s}\n",
        n, n / span, v[i50], v[i99], s / n, span
    }'
}

pgb_series() {
  local out=$1 t0=$2
  _pgb_lines "$out" | awk -v t0="$t0" '
    { t = ($5 * 1000000 + $6) * 1000; s = int((t - t0) / 1e9); c[s]++; if (s > m) m = s }
    END { for (i = 0; i < m; i++) printf "%d %d\n", i, c[i] + 0 }  # the last second is partial'
}
