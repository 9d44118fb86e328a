#!/usr/bin/env bash
# make demo: the admission hold on a private containerd.
#
# Two sequential writers and two random writers (fio in busybox containers,
# classes declared with the io.iobatch.class annotation) are started at once
# through io.containerd.iobatch.v2 with iobatchd running: the random writers
# wait pending (their Start is held) while the sequential writers run, and
# are admitted when those exit.  Then the same four jobs are started at once
# with io.containerd.runc.v2, and the run times and makespans are compared.
# Everything (containerd, agent, shims, mounts, files) is removed at the end.
#
# DEMO_SEQ_SIZE / DEMO_RAND_SIZE change the job sizes (fio --size);
# DEMO_ROUNDS=1 skips the second round (the same comparison in reverse order).
set -u
cd "$(dirname "$0")/.."
. tests/integration/lib.sh
. tests/integration/agent-lib.sh

SEQ_SIZE=${DEMO_SEQ_SIZE:-2G}
RAND_SIZE=${DEMO_RAND_SIZE:-96M}
ROUNDS=${DEMO_ROUNDS:-2}
JOBS=(seq1 seq2 rand1 rand2)

die() { echo "demo: $*" >&2; exit 1; }
for c in containerd ctr runc fio jq; do
  command -v $c >/dev/null || die "$c is not installed (scripts/install-deps.sh)"
done
for p in iobatchd iobatchctl containerd-shim-iobatch-v2 iobatch-hook; do
  [ -x "$IOB_B/bin/$p" ] || die "$IOB_B/bin/$p is missing: run make first"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (containerd, runc)"

# The paper's objective (policy = paper, alpha 0.6) with the default penalty
# matrix, except that sequential streams do not count against each other:
# the two writers share a batch, a random writer beside them waits.
cp "$(dirname "$0")/integration/hold-matrix.conf" "$IOB_T/matrix.conf"
agent_start "policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 120s" >/dev/null || die "iobatchd did not start (log: $AGENT_LOG)"
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
iob_containerd_start >/dev/null || die "containerd did not start"
NS=demo${IOB_T##*.}
CTR="ctr --address $IOB_SOCK --namespace $NS"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
iob_rootfs_add_binary "$R" "$(command -v fio)"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
calc() { awk "BEGIN { print $1 }"; }
secs() { printf '%.1f' "$(calc "$1 / 1000")"; }
T0=0
stamp() { printf '%6.1fs' "$(calc "($(now_ms) - $T0) / 1000")"; }

fio_args() { # JOB
  case $1 in
  seq*) echo "--name=$1 --filename=/data/$1 --rw=write --bs=1M --size=$SEQ_SIZE" ;;
  rand*) echo "--name=$1 --filename=/data/$1 --rw=randwrite --bs=4k --size=$RAND_SIZE" ;;
  esac
}
class_of() { case $1 in seq*) echo seq-write ;; rand*) echo rand-write ;; esac; }

# launch RUNTIME JOB ID: ctr run -d in the background (it returns when the
# task has started, so later than usual when the agent holds it).
launch() {
  local rt=$1 job=$2 id=$3
  # shellcheck disable=SC2046
  $CTR run -d --runtime "$rt" --annotation io.iobatch.class="$(class_of "$job")" \
    --rootfs "$R" "$id" /usr/bin/fio $(fio_args "$job") --direct=1 --ioengine=psync \
    >"$IOB_T/$id.out" 2>&1 &
  LAUNCHED+=($!)
}
LAUNCHED=()

declare -A CREATED ADMITTED FINISHED STATE EXIT PENDING
# watch PREFIX: poll ctr task ls and the agent until every job of this run
# has stopped; print each change on the timeline.
watch_run() {
  local pre=$1 snap_pending=0 snap_admitted=0 done line id st job
  while :; do
    done=0
    while read -r id _ st; do
      job=${id#"$pre"-}
      [ "$id" != "$pre-$job" ] && continue
      [ "${STATE[$id]:-}" == "$st" ] && continue
      case $st in
      CREATED)
        CREATED[$id]=$(now_ms)
        echo "  $(stamp)  $id  created"
        ;;
      RUNNING)
        ADMITTED[$id]=$(now_ms)
        [ -z "${CREATED[$id]:-}" ] && CREATED[$id]=${ADMITTED[$id]}
        if [ -n "${PENDING[$id]:-}" ]; then
          echo "  $(stamp)  $id  admitted, running (pending for $(secs $((ADMITTED[$id] - PENDING[$id])))s)"
        else
          echo "  $(stamp)  $id  running"
        fi
        ;;
      STOPPED)
        FINISHED[$id]=$(now_ms)
        [ -z "${ADMITTED[$id]:-}" ] && ADMITTED[$id]=${FINISHED[$id]}
        [ -z "${CREATED[$id]:-}" ] && CREATED[$id]=${ADMITTED[$id]}
        echo "  $(stamp)  $id  finished"
        ;;
      esac
      STATE[$id]=$st
    done < <($CTR task ls 2>/dev/null | tail -n +2 | sort -k3,3r) # exits first
    for job in "${JOBS[@]}"; do [ "${STATE[$pre-$job]:-}" == STOPPED ] && done=$((done + 1)); done
    if [[ $pre == iob* ]]; then
      while read -r id why; do
        [ -n "${PENDING[$id]:-}" ] && continue
        PENDING[$id]=$(now_ms)
        echo "  $(stamp)  $id  pending in iobatchd (${why#pending: })"
      done < <(ctl status --json | jq -r '.containers[] | select(.state == "pending") | .id + " " + .reason + (if .conflict != "" then ", conflicts with " + .conflict else "" end)')
      if [ "$pre" == iob ] && [ $snap_pending -eq 0 ] && [ "$(ctl status --json | jq '[.containers[] | select(.state == "pending")] | length')" -ge 2 ]; then
        snap_pending=1
        echo "  $(stamp)  iobatchctl status:"
        ctl status | sed -n '4,$p' | grep -v '^$' | grep -v '^\*' | sed 's/^/             | /'
        echo "  $(stamp)  ctr task ls (a held task is CREATED):"
        $CTR task ls | sed 's/^/             | /'
      fi
      if [ "$pre" == iob ] && [ $snap_admitted -eq 0 ] && [ "${STATE[iob-rand1]:-}" == RUNNING ] && [ "${STATE[iob-rand2]:-}" == RUNNING ]; then
        snap_admitted=1
        echo "  $(stamp)  iobatchctl status:"
        ctl status | sed -n '4,$p' | grep -v '^$' | grep -v '^\*' | sed 's/^/             | /'
      fi
    fi
    [ $done -eq ${#JOBS[@]} ] && break
    [ $(($(now_ms) - T0)) -gt 150000 ] && { echo "demo: jobs did not finish in 150 s" >&2; return 1; }
    sleep 0.2
  done
}

# run RUNTIME PREFIX: all jobs at once (sequential writers first).
run() {
  local rt=$1 pre=$2 job
  rm -f "$R"/data/*
  sync
  T0=$(now_ms)
  for job in "${JOBS[@]}"; do
    launch "$rt" "$job" "$pre-$job"
    sleep 0.1
  done
  watch_run "$pre" || return 1
  wait "${LAUNCHED[@]}"
  LAUNCHED=()
  for job in "${JOBS[@]}"; do
    $CTR task delete "$pre-$job" >/dev/null 2>&1
    EXIT[$pre-$job]=$?
    $CTR container delete "$pre-$job" >/dev/null 2>&1
  done
  local first=0 last=0 id
  for job in "${JOBS[@]}"; do
    id=$pre-$job
    [ $first -eq 0 ] || [ "${CREATED[$id]}" -lt $first ] && first=${CREATED[$id]}
    [ "${FINISHED[$id]}" -gt $last ] && last=${FINISHED[$id]}
  done
  MAKESPAN[$pre]=$((last - T0))
}
declare -A MAKESPAN

echo "iobatch demo: 2 sequential writers (fio write, bs 1M, $SEQ_SIZE each) and 2 random"
echo "writers (fio randwrite, bs 4k, $RAND_SIZE each), O_DIRECT, started at once."
echo "Agent: iobatchd, policy paper (alpha 0.6); sampler: $(ctl status --json | jq -r .sampler)."
echo
echo "== 1. through io.containerd.iobatch.v2 (the agent holds conflicting starts)"
run io.containerd.iobatch.v2 iob || die "the iobatch run failed"
echo
echo "== 2. the same jobs through io.containerd.runc.v2 (all at once)"
run io.containerd.runc.v2 runc || die "the runc run failed"
echo
# A second round in the reverse order, so that a disk that gets slower (or
# faster) during the demo does not favour one side.
if [ "$ROUNDS" -ge 2 ]; then
  echo "== 3. round two, reverse order: runc first"
  run io.containerd.runc.v2 runc2 || die "the runc run failed"
  echo
  echo "== 4. round two: iobatch"
  run io.containerd.iobatch.v2 iob2 || die "the iobatch run failed"
  echo
fi

echo "== result (seconds; wait = created until running, run = running until finished)"
printf '  %-6s %22s   %22s\n' "" "iobatch" "runc (all at once)"
printf '  %-6s %6s %6s %6s %6s   %6s %6s\n' job wait run total exit run exit
fail=0
for job in "${JOBS[@]}"; do
  a=iob-$job b=runc-$job
  printf '  %-6s %6s %6s %6s %6s   %6s %6s\n' "$job" \
    "$(secs $((ADMITTED[$a] - CREATED[$a])))" "$(secs $((FINISHED[$a] - ADMITTED[$a])))" \
    "$(secs $((FINISHED[$a] - CREATED[$a])))" "${EXIT[$a]}" \
    "$(secs $((FINISHED[$b] - ADMITTED[$b])))" "${EXIT[$b]}"
  [ "${EXIT[$a]}" -eq 0 ] && [ "${EXIT[$b]}" -eq 0 ] || fail=1
done
echo
printf '  makespan: iobatch %ss, runc %ss, ratio iobatch/runc %.2f\n' \
  "$(secs "${MAKESPAN[iob]}")" "$(secs "${MAKESPAN[runc]}")" \
  "$(calc "${MAKESPAN[iob]} / ${MAKESPAN[runc]}")"
if [ "$ROUNDS" -ge 2 ]; then
  printf '  round two: iobatch %ss, runc %ss, ratio %.2f; both rounds: ratio %.2f\n' \
    "$(secs "${MAKESPAN[iob2]}")" "$(secs "${MAKESPAN[runc2]}")" \
    "$(calc "${MAKESPAN[iob2]} / ${MAKESPAN[runc2]}")" \
    "$(calc "(${MAKESPAN[iob]} + ${MAKESPAN[iob2]}) / (${MAKESPAN[runc]} + ${MAKESPAN[runc2]})")"
  for pre in runc2 iob2; do
    for job in "${JOBS[@]}"; do [ "${EXIT[$pre-$job]}" -eq 0 ] || fail=1; done
  done
fi
for job in rand1 rand2; do
  printf '  %s: %ss from start to finish with iobatch (held, then alone), %ss beside the writers\n' \
    "$job" "$(secs $((FINISHED[iob-$job] - CREATED[iob-$job])))" \
    "$(secs $((FINISHED[runc-$job] - CREATED[runc-$job])))"
done
[ $fail -eq 0 ] || die "a job did not exit with status 0"
[ -n "${PENDING[iob-rand1]:-}" ] && [ -n "${PENDING[iob-rand2]:-}" ] ||
  die "the agent did not hold the random writers (agent log: $AGENT_LOG)"
