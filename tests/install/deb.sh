#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package as an operator installs it (issue 21), on a Debian
# booted with systemd as PID 1 (systemd-nspawn, tests/install/lib.sh) with
# that Debian's own containerd and /etc/containerd/config.toml: INST_SUITE
# bookworm (Debian 12, containerd 1.6), trixie (13, 1.7) or sid (unstable,
# 2.1).  Each test's name says which containerd it ran against.  On sid the
# admin's config.toml imports /etc/containerd/conf.d/*.toml (as the one
# containerd 2.2's `config default` writes), so the package adds the
# handler as a conf.d drop-in and leaves containerd.service alone; then,
# with Debian's config.toml as shipped (no imports), through the unit
# drop-in.  Everywhere:
#   - `apt-get install ./iobatch_*.deb`, then the one documented step,
#     `systemctl restart containerd`;
#   - iobatchd.service is active (Type=notify), its socket directory 0700;
#   - containerd runs on the config the drop-in generates and serves the
#     CRI handler `iobatch`: a pod through the CRI (tests/tools/
#     cri_client.py, on the host, against the guest's socket) runs and
#     `iobatchctl status` names its pod and container;
#   - `ctr run --runtime io.containerd.iobatch.v2`: the shim holds Start
#     until the agent admits the container (its journal says so);
#   - podman (Debian 12 only: podman 5, in 13 and unstable, refuses this
#     host's cgroup v1) with the packaged hooks.d file: the container is `running`
#     (not `created`) while it runs, the agent lists it, and it ends; a
#     rootless podman (a user with subordinate ids) applies the same file,
#     its container runs unaffected;
#   - with a declared latency pod running, the agent lowers a batch pod's
#     CPU weight; `systemctl stop iobatchd` puts back what it wrote (its
#     journal, restore.json, says what each file held before) and changes
#     nothing else on that container's cgroups;
#   - the unit is /usr/lib/systemd/system/iobatchd.service (the /usr-merge),
#     enabled; dpkg holds the file trigger on /usr/bin/containerd;
#   - `apt-get purge iobatch` and `systemctl restart containerd` leave
#     /etc/containerd, /usr and /var/lib/iobatch as they were before the
#     install (modes, owners, link targets, checksums); /run is not compared;
#   - an upgrade from the package laid out as before the /usr-merge move
#     (the unit under /lib/systemd/system): dpkg drops the old path, which
#     on a merged /usr is the new file too, and must keep the file; the
#     agent stays enabled and active;
#   - unstable only: containerd 1.7 (Debian 13's .deb) installed over 2.1,
#     then 2.1 again: each time the package's file trigger runs
#     containerd-setup, which moves the handler to the unit drop-in and back
#     to conf.d, and after `systemctl restart containerd` a pod runs with the
#     handler iobatch; the same 2.1 once more: the trigger changes no file
#     and asks for no restart;
#   - Debian 12 only, the security review's installer cases, each installed,
#     restarted and purged: /etc/containerd/config.toml a relative link, an
#     absolute link, a config.toml without a final newline, and a decoy
#     process named containerd started before the install, which the
#     package must not take for containerd (nor stop).
# IOBATCH_DEB=FILE uses a prebuilt package instead of running make deb; a
# $B-pkg package newer than every file of the tree is used as it is.
. "$(dirname "$0")/lib.sh"
iob_need jq tar sha256sum dpkg-deb
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null ||
  bail "python3-grpcio and python3-grpc-tools are not installed (scripts/install-deps.sh)"
IMAGE=iobatch.test/busybox:1

# ---- the package
# make check-all has just built it (tests/integration/packaging/deb.sh): that one is
# used when no file of the tree is newer.
DEB=${IOBATCH_DEB:-}
fresh() { # DEB: no tracked or new file of the tree is newer than DEB
  [ -f "$1" ] && [ -z "$(cd "$IOB_TOP" && git ls-files -co --exclude-standard -z |
    xargs -0 sh -c 'find "$@" -maxdepth 0 -newer "$0" -print 2>/dev/null' "$1" | head -1)" ]
}
if [ -z "$DEB" ]; then
  for f in "$IOB_B"-pkg/iobatch_*_*.deb; do [[ "$f" == *dbgsym* ]] || { fresh "$f" && DEB=$f; }; done
fi
if [ -z "$DEB" ]; then
  make -C "$IOB_TOP" --no-print-directory B="$IOB_B" deb >"$IOB_T/make-deb.log" 2>&1 ||
    { sed 's/^/# /' "$IOB_T/make-deb.log" | tail -30; bail "make deb failed"; }
  for f in "$IOB_B"-pkg/iobatch_*_*.deb; do [[ "$f" == *dbgsym* ]] || DEB=$f; done
fi
[ -f "$DEB" ] || bail "no package: $DEB"
diag "package: $DEB"
# The same package as the versions before the /usr-merge move laid it out:
# the unit under /lib/systemd/system, and a lower version (~lib).
OLD=$IOB_T/iobatch-lib.deb
olddeb() {
  local d=$IOB_T/olddeb
  dpkg-deb -R "$DEB" "$d" && mkdir -p "$d/lib/systemd/system" &&
    mv "$d/usr/lib/systemd/system/iobatchd.service" "$d/lib/systemd/system/" &&
    rmdir -p --ignore-fail-on-non-empty "$d/usr/lib/systemd/system" &&
    sed -i 's| usr/lib/systemd/system/iobatchd.service$| lib/systemd/system/iobatchd.service|' "$d/DEBIAN/md5sums" &&
    sed -i 's/^Version: .*/&~lib/' "$d/DEBIAN/control" &&
    dpkg-deb -Zgzip -z1 -b "$d" "$OLD" >/dev/null
}
olddeb || bail "cannot repack $DEB with its unit under /lib/systemd/system"

# ---- a booted Debian (podman in Debian 12's for the hooks.d part)
inst_root
inst_boot deb
G=/proc/$INST_PID/root
CV=$(inst_containerd_version)
P="deb[containerd ${CV:-?}]"
diag "$INST_SUITE: containerd $CV"
# The plan: 43, podman's 6 on Debian 12, 3 per install cycle at the end
# (4 and the decoy's check on Debian 12, 1 on sid), and on sid the 7 of
# containerd 1.7 and back.
case $INST_SUITE in
bookworm) tap_plan $((43 + 6 + 4 * 3 + 1)) ;;
sid) tap_plan $((43 + 3 + 8)) ;;
*) tap_plan 43 ;;
esac
# The containerd's default sandbox image (pause:3.6 in 1.6, 3.8 in 1.7,
# 3.10 in 2.1); nothing can be pulled here, so the busybox image is tagged
# so too (it runs `sleep`).
PAUSE=$(inst_exec containerd config dump 2>/dev/null |
  awk -F'["'\'']' '/^[[:space:]]*(sandbox_image|sandbox)[[:space:]]*=/ { print $2; exit }')
[ -n "$PAUSE" ] || bail "no sandbox image in the guest's containerd config dump"
# What the package does on this containerd (containerd-setup): a conf.d
# drop-in where containerd 2.x imports conf.d, the unit drop-in elsewhere.
CONFD=0
[ "$INST_SUITE" = sid ] && CONFD=1
SOCK=$G/run/containerd/containerd.sock
CRI="$PY $IOB_TOP/tests/tools/cri_client.py --socket $SOCK --gen $IOB_T/gen --timeout 60"

T0=$SECONDS
step() { diag "$(($SECONDS - T0))s: $*"; }
step "booted"
# The admin's own edit, before iobatch: these machines refuse a negative
# oom_score_adj (shared/TESTBED.md), which the CRI gives sandboxes unless
# restrict_oom_score_adj is set.
inst_exec sed -i 's/^  \[plugins."io.containerd.grpc.v1.cri"\]$/&\n    restrict_oom_score_adj = true/' \
  /etc/containerd/config.toml
inst_exec grep -q 'restrict_oom_score_adj = true' /etc/containerd/config.toml ||
  bail "cannot set restrict_oom_score_adj in the guest's config.toml"
cp -p "$G/etc/containerd/config.toml" "$IOB_T/config.debian"
# On containerd 2.x, the imports line containerd 2.2's `config default`
# writes (Debian's config.toml has none, and 2.1 imports only what it says).
[ $CONFD = 0 ] || inst_exec sed -i '1i imports = ["/etc/containerd/conf.d/*.toml"]' /etc/containerd/config.toml
inst_restart containerd || bail "containerd did not restart on the admin's config.toml"

# snapshot FILE: /etc/containerd, /usr and /var/lib/iobatch, each entry's
# type and mode, owner, path and link target, and each file's checksum.
snapshot() {
  inst_exec sh -c 'for d in /etc/containerd /usr /var/lib/iobatch; do
      [ -e "$d" ] || { echo "absent $d"; continue; }
      find "$d" -xdev -printf "%M %u:%g %p %l\n"
      find "$d" -xdev -type f -print0 | xargs -0 sha256sum
    done' | LC_ALL=C sort >"$1"
}
snapshot "$IOB_T/before"
ok "$P: the machine before the install is listed" test -s "$IOB_T/before"

step "snapshot taken"
# ---- install, then the documented step
inst_put "$DEB" "/root/$(basename "$DEB")"
inst_exec sh -c "cd /root && apt-get install -y ./$(basename "$DEB")" >"$IOB_T/apt.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# apt: /' "$IOB_T/apt.log" | tail -20
is "$rc" 0 "$P: apt-get install ./$(basename "$DEB")"
inst_restart containerd
is "$?" 0 "$P: systemctl restart containerd (the documented step)"
is "$(inst_exec systemctl is-active iobatchd)" "active" "$P: iobatchd.service is active"
is "$(inst_exec systemctl show -p Type --value iobatchd) $(inst_exec systemctl show -p NRestarts --value iobatchd)" \
  "notify 0" "$P: Type=notify, started once (no restart)"
is "$(inst_exec stat -c '%a %U' /run/iobatch)" "700 root" "$P: /run/iobatch is 0700, root's"
cmdline() { tr '\0' ' ' <"$G/proc/$(inst_exec systemctl show -p MainPID --value containerd)/cmdline" 2>/dev/null; }
if [ $CONFD = 0 ]; then
  like "$(grep 'containerd-setup' "$IOB_T/apt.log")" "containerd $CV \(/usr/bin/containerd, '/etc/containerd/config.toml'\): the handler is added by the unit drop-in" \
    "$P: the package chose the unit drop-in for this containerd (containerd-setup, by the unit's binary)"
  like "$(cmdline)" "^/usr/bin/containerd --config /run/iobatch-containerd/config.toml" \
    "$P: containerd runs on the config the drop-in generates"
  like "$(inst_exec journalctl -b -u containerd --no-pager -o cat 2>&1 | grep 'containerd-config')" \
    "/etc/containerd/config.toml' \(config version 2\) with the CRI runtime handler iobatch" \
    "$P: the generator's line in containerd's journal"
else
  like "$(grep 'containerd-setup' "$IOB_T/apt.log")" "containerd $CV \(/usr/bin/containerd\) imports /etc/containerd/conf.d/\*\.toml from '/etc/containerd/config.toml': the handler is in '/etc/containerd/conf.d/iobatch.toml' \(config version 2\); containerd.service is not changed" \
    "$P: the package chose a conf.d drop-in for this containerd (containerd-setup, by the unit's binary)"
  is "$(cmdline)|$(inst_exec systemctl show -p DropInPaths --value containerd)" "/usr/bin/containerd |" \
    "$P: containerd.service runs its own command: no ExecStart override, no unit drop-in"
  like "$(inst_exec containerd config dump 2>&1 | grep -A1 'runtimes.iobatch\]')" 'runtime_type = .io\.containerd\.iobatch\.v2.' \
    "$P: containerd's own view of config.toml (config dump) has the handler from conf.d/iobatch.toml"
fi
ok "$P: /etc/containerd/config.toml is not touched" \
  cmp -s <(grep ' /etc/containerd/config.toml$' "$IOB_T/before") <(inst_exec sha256sum /etc/containerd/config.toml)
is "$(inst_exec dpkg -S /usr/lib/systemd/system/iobatchd.service 2>&1) $(inst_exec systemctl is-enabled iobatchd 2>&1)" \
  "iobatch: /usr/lib/systemd/system/iobatchd.service enabled" \
  "$P: the unit is the package's /usr/lib/systemd/system/iobatchd.service, enabled"
is "$(inst_exec grep '^/usr/bin/containerd ' /var/lib/dpkg/triggers/File 2>&1)" "/usr/bin/containerd iobatch/noawait" \
  "$P: dpkg holds the package's file trigger on containerd's binary (noawait)"
# An admin's override (what `systemctl edit containerd` writes): containerd
# in /usr/local/bin with a flag of its own.  The drop-in runs that command,
# on the generated config; then the override goes again.
inst_exec sh -c 'cp -p /usr/bin/containerd /usr/local/bin/containerd &&
  mkdir -p /etc/systemd/system/containerd.service.d &&
  printf "[Service]\nExecStart=\nExecStart=/usr/local/bin/containerd --log-level debug\n" \
    >/etc/systemd/system/containerd.service.d/override.conf &&
  systemctl daemon-reload && systemctl reset-failed containerd && systemctl restart containerd'
is "$?:$(inst_exec systemctl is-active containerd)" "0:active" "$P: an admin override with /usr/local/bin/containerd starts"
if [ $CONFD = 0 ]; then
  is "$(cmdline)" "/usr/local/bin/containerd --config /run/iobatch-containerd/config.toml --log-level debug " \
    "$P: the override's binary and flags, on the generated config"
else
  is "$(cmdline)" "/usr/local/bin/containerd --log-level debug " "$P: the override's binary and flags, as the admin wrote them"
fi
inst_exec sh -c 'rm -rf /etc/systemd/system/containerd.service.d /usr/local/bin/containerd &&
  systemctl daemon-reload && systemctl reset-failed containerd && systemctl restart containerd'
is "$?:$(inst_exec systemctl is-active containerd)" "0:active" "$P: the override removed, containerd restarted"

step "installed"
# ---- a pod with runtime handler iobatch, through the CRI
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
img=$IOB_T/img
mkdir -p "$img"
tar --numeric-owner -C "$R" -cf "$img/layer.tar" .
layer=$(sha256sum "$img/layer.tar" | cut -d' ' -f1)
jq -n --arg d "sha256:$layer" '{architecture: "amd64", os: "linux",
  config: {Cmd: ["/bin/sleep", "2147483647"], Env: ["PATH=/bin"]},
  rootfs: {type: "layers", diff_ids: [$d]}}' >"$img/config.json"
cfg=$(sha256sum "$img/config.json" | cut -d' ' -f1)
mv "$img/config.json" "$img/$cfg.json"
jq -n --arg c "$cfg.json" --arg t "$IMAGE" --arg p "$PAUSE" \
  '[{Config: $c, RepoTags: [$t, $p], Layers: ["layer.tar"]}]' >"$img/manifest.json"
tar -C "$img" -cf "$IOB_T/image.tar" manifest.json "$cfg.json" layer.tar
inst_put "$IOB_T/image.tar" /root/image.tar
inst_exec ctr -n k8s.io images import /root/image.tar >"$IOB_T/import.log" 2>&1 ||
  sed 's/^/# import: /' "$IOB_T/import.log"
is "$($CRI image-status "$IMAGE" 2>&1 | jq -r .present 2>&1)" "true" "$P: the CRI sees the test image"

$CRI create --handler iobatch --image "$IMAGE" --name debpod --container main >"$IOB_T/create.json" 2>&1
cid=$(jq -r .container_id "$IOB_T/create.json" 2>/dev/null)
[ -n "$cid" ] && [ "$cid" != null ] || sed 's/^/# create: /' "$IOB_T/create.json"
ok "$P: RunPodSandbox with handler iobatch, CreateContainer" test -n "$cid" -a "$cid" != null
# The container's weight, cap and CPU weight files (relative to the
# hierarchies' root), one "path=content" line each.
cgfiles() {
  inst_exec sh -c 'for d in /sys/fs/cgroup/*/k8s.io/'"$1"' /sys/fs/cgroup/k8s.io/'"$1"'; do
      [ -d "$d" ] || continue
      for f in "$d"/*weight* "$d"/*shares* "$d"/*throttle*device "$d"/io.max "$d"/cpu.max "$d"/*cfs_quota_us; do
        [ -f "$f" ] && [ -r "$f" ] && printf "%s=%s\n" "$f" "$(tr "\n" " " <"$f")"
      done
    done' | sort
}
$CRI start "$cid" >"$IOB_T/start.json" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# start: /' "$IOB_T/start.json"
is "$rc" 0 "$P: StartContainer returns"
st() { inst_exec iobatchctl status --json; }
ok "$P: iobatchctl status lists the container running" \
  wait_for 20 '[ "$(st | jq -r --arg id "$cid" ".containers[] | select(.id == \$id) | .state")" = running ]'
is "$(st | jq -r --arg id "$cid" '.containers[] | select(.id == $id) | [.namespace, .pod_namespace, .pod_name, .container_name] | join(" ")')" \
  "k8s.io iobtest debpod main" "$P: and names its namespace, pod and container"
ok "$P: and the pod's sandbox, kind sandbox" \
  test "$(st | jq '[.containers[] | select(.kind == "sandbox" and .pod_name == "debpod")] | length')" -ge 1

step "CRI pod done"
# ---- ctr run through the shim: Start is held until the agent admits it
cp -a "$R" "$G/root/rootfs"
out=$(inst_exec timeout 60 ctr run --rm --runtime io.containerd.iobatch.v2 --rootfs /root/rootfs ctr1 \
  /bin/sh -c 'echo started' 2>&1)
is "$out" "started" "$P: ctr run --runtime io.containerd.iobatch.v2 runs a container"
like "$(inst_exec journalctl -u iobatchd --no-pager -o cat 2>&1 | grep "'ctr1'")" "admitted 'ctr1' .* after [0-9]+ ms" \
  "$P: its Start was held until the agent admitted it (the agent's journal)"
step "ctr run done"
# ---- podman with the packaged hooks.d file (Debian 12: podman 5 refuses
# cgroup v1 hosts)
if [ "$INST_SUITE" = bookworm ]; then
  inst_exec sh -c 'podman run --rm --name pm1 --cidfile /root/pm1.cid --runtime runc --network none \
      --cgroup-manager cgroupfs --events-backend file --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
      --rootfs /root/rootfs /bin/sleep 6 >/root/pm1.out 2>&1; echo $? >/root/pm1.rc' &
  pmid() { cat "$G/root/pm1.cid" 2>/dev/null; }
  listed() { [ -n "$(pmid)" ] && st | jq -r --arg id "$(pmid)" '.containers[] | select(.id == $id) | .state'; }
  ok "$P: podman (hooks.d as packaged): the agent lists the container running" \
    wait_for 30 '[ "$(listed)" = running ]'
  is "$(inst_exec podman inspect -f '{{.State.Status}}' pm1 2>&1)" "running" \
    "$P: podman shows it running (prestart admitted it)"
  ok "$P: podman's container ends with status 0" wait_for 30 '[ "$(cat "$G/root/pm1.rc" 2>/dev/null)" = 0 ]'
  [ "$(cat "$G/root/pm1.rc" 2>/dev/null)" = 0 ] || sed 's/^/# podman: /' "$G/root/pm1.out"
  ok "$P: and the agent no longer lists it (poststop)" wait_for 20 '[ -z "$(listed)" ]'

  # A rootless podman, same hooks.d file: its user cannot reach the root-only
  # socket; the hook runs and exits 0, the container runs as without iobatch.
  # (podman shows a hook's output only when it fails, so that the hook itself
  # prints nothing is checked in tests/integration/hook/podman-hooks.sh.)
  inst_exec useradd -m -s /bin/sh rl >/dev/null 2>&1
  cp -a "$R" "$G/home/rl/rootfs" && inst_exec chown -R rl: /home/rl/rootfs
  rlrun() { inst_exec su -l rl -c "podman $* run --rm --network none --rootfs /home/rl/rootfs /bin/echo hi" 2>&1; }
  like "$(rlrun --log-level=debug | grep -i 'iobatch.json')" "50-iobatch\.json" \
    "$P: rootless podman applies the packaged hooks.d file too"
  is "$(rlrun)" "hi" "$P: rootless podman: the container runs unaffected, nothing but its output"
  step "podman done"
fi
# ---- stop the agent: what it wrote on the CRI container's cgroups goes back
# (CRI creates the task, and so the cgroup, in StartContainer: there is no
# "before the agent" to read.  The agent's journal, restore.json, holds
# what each file it wrote had before; the files it did not write must not
# change at its stop.)
# A latency-sensitive pod and a batch pod, declared where the packaged
# iobatchd.conf trusts declarations (kube-system): while the first runs the
# agent protects it, and the batch container runs at the least CPU weight
# (protect_cpu, v1 cpu.shares here).
crun() { # NAME CLASS: a pod in kube-system, its container started; prints its id
  local id
  id=$($CRI create --handler iobatch --image "$IMAGE" --name "$1" --namespace kube-system \
    --annotation io.iobatch.class="$2" 2>>"$IOB_T/cri.err" | jq -r .container_id) &&
    $CRI start "$id" >/dev/null 2>>"$IOB_T/cri.err" && echo "$id"
}
svc=$(crun svc latency)
job=$(crun job seq-write)
[ -n "$svc" ] && [ -n "$job" ] || sed 's/^/# cri: /' "$IOB_T/cri.err"
journal() { inst_exec cat /var/lib/iobatch/restore.json 2>/dev/null; }
# written ID: how many files of container ID the journal holds; 0 until the
# agent writes its first (no journal yet: jq -n reads no input, not an
# empty string for `[ -gt ]`).
written() { journal | jq -n --arg j "$1" '[inputs | .entries[] | select(.file | contains($j))] | length'; }
ok "$P: with a latency pod running the agent lowers the batch pod's CPU weight (restore.json)" \
  wait_for 30 '[ "$(written "$job")" -gt 0 ]'
cgfiles "$job" >"$IOB_T/cg.during"
ok "$P: the batch container's weight, cap and CPU weight files are there to compare" test -s "$IOB_T/cg.during"
journal >"$IOB_T/journal" || echo '{"entries": []}' >"$IOB_T/journal"
jq -r '.entries[] | "# the agent wrote \(.file) \(.dev) (was: \(.value))"' "$IOB_T/journal"
diag "the agent wrote $(jq '.entries | length' "$IOB_T/journal") cgroup file(s) on this node"
inst_exec systemctl stop iobatchd
is "$(inst_exec systemctl is-active iobatchd)" "inactive" "$P: systemctl stop iobatchd"
cgfiles "$job" >"$IOB_T/cg.after"
# Every journaled file holds its old value again ...
bad=$(jq -r '.entries[] | [.file, .dev, .value] | @tsv' "$IOB_T/journal" | while IFS=$'\t' read -r f dev val; do
  case $f in
  */tasks | */cgroup.threads)
    # the I/O priority lever's record: the file lists the tasks, never
    # written; none of them keeps the idle class it gave them
    now=$(inst_exec sh -c 'for t in $(cat "$1"); do ionice -p "$t"; done' sh "$f" 2>/dev/null |
      grep -c '^idle' || true)
    [ "$val" = idle ] || [ "${now:-0}" = 0 ] || echo "$f: $now task(s) still idle, was $val"
    continue
    ;;
  esac
  now=$(cat "$G$f" 2>/dev/null)
  if [ -n "$dev" ] && [ "$dev" != 0:0 ]; then now=$(awk -v d="$dev" '$1 == d { print $2 }' <<<"$now"); [ -n "$now" ] || now=0; fi
  [ "$now" = "$val" ] || echo "$f $dev: $now, was $val"
done)
is "$bad" "" "$P: every weight, cap and CPU weight the agent wrote is put back"
ok "$P: and its journal is gone" test ! -e "$G/var/lib/iobatch/restore.json"
# ... and the others did not change.
jq -r '.entries[].file' "$IOB_T/journal" | sort -u >"$IOB_T/written"
filter() { grep -v -F -f "$IOB_T/written" "$1"; true; }
diff <(filter "$IOB_T/cg.during") <(filter "$IOB_T/cg.after") | sed 's/^/# /'
ok "$P: the batch container's other cgroup files are as they were" \
  cmp -s <(filter "$IOB_T/cg.during") <(filter "$IOB_T/cg.after")
step "agent stopped"
# ---- uninstall: pods first (a drained node), purge, the documented step
$CRI down >"$IOB_T/down.json" 2>&1
is "$(jq -s '[.[] | select(.not_removed)] | length' "$IOB_T/down.json" 2>&1)" "0" "$P: the pods are removed"
# An agent that did not stop (killed, out of memory) left its journal: a
# frozen container and a CPU weight, on a fake cgroup directory, and a
# freeze that cannot be put back (a directory where the file is: EISDIR).
# The prerm's `iobatchd --restore-only` puts back what it can; the purge
# keeps the journal with what it could not.
inst_exec sh -c 'set -e; d=/root/cg/pod1/ctr1; mkdir -p $d/bad; echo 1 >$d/cgroup.freeze; echo 1 >$d/cpu.weight
  mkdir $d/bad/cgroup.freeze; i=$(stat -c %i $d); b=$(stat -c %i $d/bad)
  printf "{\"version\": 2, \"entries\": [%s, %s, %s]}\n" \
    "{\"file\": \"$d/cgroup.freeze\", \"dev\": \"0:0\", \"value\": \"0\", \"ino\": $i, \"written\": \"1\"}" \
    "{\"file\": \"$d/cpu.weight\", \"dev\": \"0:0\", \"value\": \"100\", \"ino\": $i, \"written\": \"1\"}" \
    "{\"file\": \"$d/bad/cgroup.freeze\", \"dev\": \"0:0\", \"value\": \"0\", \"ino\": $b, \"written\": \"1\"}" \
    >/var/lib/iobatch/restore.json'
inst_exec apt-get purge -y iobatch >"$IOB_T/purge.log" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# apt: /' "$IOB_T/purge.log" | tail -20
is "$rc" 0 "$P: apt-get purge iobatch"
is "$(inst_exec sh -c 'head -c1 /root/cg/pod1/ctr1/cgroup.freeze; head -c3 /root/cg/pod1/ctr1/cpu.weight')" "0100" \
  "$P: purge (prerm) thaws what a killed agent left frozen and puts back its CPU weight"
like "$(cat "$IOB_T/purge.log")" "restored '/root/cg/pod1/ctr1/cgroup.freeze' 0:0 to '0'" "$P: and says what it put back"
is "$(ls -A "$G/var/lib/iobatch"; jq -r '.entries[].file' "$G/var/lib/iobatch/restore.json")" \
  "$(printf 'restore.json\n/root/cg/pod1/ctr1/bad/cgroup.freeze')" \
  "$P: purge keeps the journal with the value it could not put back, and nothing else"
like "$(cat "$IOB_T/purge.log")" "restore.json kept" "$P: and says so"
inst_exec rm -rf /var/lib/iobatch /root/cg
inst_restart containerd
is "$?:$(inst_exec systemctl is-active containerd)" "0:active" "$P: systemctl restart containerd after the purge"
main=$(inst_exec systemctl show -p MainPID --value containerd)
is "$(tr '\0' ' ' <"$G/proc/$main/cmdline" 2>/dev/null)" "/usr/bin/containerd " \
  "$P: containerd runs on /etc/containerd/config.toml again"
snapshot "$IOB_T/after"
diff "$IOB_T/before" "$IOB_T/after" | sed 's/^/# /' | head -40
ok "$P: /etc/containerd, /usr and /var/lib/iobatch are as before the install (nothing kept)" \
  cmp -s "$IOB_T/before" "$IOB_T/after"
step "purged"

# ---- an upgrade from the package with its unit under /lib/systemd/system
# (the versions before the /usr-merge move).  dpkg removes the paths the
# new version no longer ships after unpacking it; on a merged /usr the old
# /lib/systemd/system/iobatchd.service is the new file, which must stay.
snapshot "$IOB_T/up.before"
inst_put "$OLD" /root/iobatch-lib.deb
inst_exec sh -c 'cd /root && apt-get install -y ./iobatch-lib.deb' >"$IOB_T/up-old.apt" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# apt: /' "$IOB_T/up-old.apt" | tail -20
is "$rc $(inst_exec dpkg -S /lib/systemd/system/iobatchd.service 2>&1) $(inst_exec systemctl is-active iobatchd)" \
  "0 iobatch: /lib/systemd/system/iobatchd.service active" \
  "$P: the package as it was (unit under /lib/systemd/system) installs, the agent active"
inst_exec sh -c "cd /root && apt-get install -y ./$(basename "$DEB")" >"$IOB_T/up.apt" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# apt: /' "$IOB_T/up.apt" | tail -20
like "$rc $(grep -m1 'Unpacking iobatch' "$IOB_T/up.apt")" "^0 Unpacking iobatch \(.*\) over \(.*~lib\)" \
  "$P: apt-get install ./$(basename "$DEB") upgrades it"
is "$(inst_exec sh -c 'test -f /usr/lib/systemd/system/iobatchd.service && echo kept'; inst_exec dpkg -L iobatch | grep 'systemd/system/iobatchd')" \
  "$(printf 'kept\n/usr/lib/systemd/system/iobatchd.service')" \
  "$P: the unit file survives the move and dpkg lists it under /usr/lib alone"
is "$(inst_exec systemctl is-enabled iobatchd) $(inst_exec systemctl is-active iobatchd)" "enabled active" \
  "$P: iobatchd.service enabled and active after the upgrade"
inst_exec apt-get purge -y iobatch >"$IOB_T/up.purge" 2>&1 && inst_restart containerd
rc=$?
snapshot "$IOB_T/up.after"
diff "$IOB_T/up.before" "$IOB_T/up.after" | sed 's/^/# /' | head -20
ok "$P: upgraded, purged: /etc/containerd, /usr and /var/lib/iobatch as they were" \
  test $rc -eq 0 -a -z "$(diff "$IOB_T/up.before" "$IOB_T/up.after")"
step "upgrade from the /lib layout done"

# ---- install cycles: ID NAME WHAT-THE-PACKAGE-SAYS (a regex of
# containerd-setup's line).  Install, restart containerd, a pod through the
# handler, purge, restart: /etc/containerd, /usr and /var/lib/iobatch as
# before, and config.toml as containerd reads it (through any link: bytes,
# mode, owner, and the link itself).
cfgstate() {
  inst_exec sh -c 'c=/etc/containerd/config.toml; readlink "$c"; stat -L -c "%a %U:%G %s" "$c"; sha256sum <"$c"'
}
cycle() {
  local b=$IOB_T/cycle-$1 rc id
  shift
  snapshot "$b.before"
  cfgstate >"$b.cfg.before"
  inst_exec sh -c "cd /root && apt-get install -y ./$(basename "$DEB")" >"$b.apt" 2>&1 &&
    inst_restart containerd
  rc=$?
  [ $rc -eq 0 ] || sed 's/^/# apt: /' "$b.apt" | tail -20
  like "$(grep containerd-setup "$b.apt")" "$2" "$P: $1: the package says how it adds the handler"
  id=$($CRI create --handler iobatch --image "$IMAGE" --name "cycle-$(basename "$b")" --container main 2>"$b.cri" | jq -r .container_id 2>/dev/null)
  [ -n "$id" ] && [ "$id" != null ] || sed 's/^/# cri: /' "$b.cri"
  $CRI down >/dev/null 2>&1
  is "$rc:$([ -n "$id" ] && [ "$id" != null ] && echo pod)" "0:pod" \
    "$P: $1: installed, containerd restarted, a pod runs with the handler iobatch"
  inst_exec apt-get purge -y iobatch >"$b.purge" 2>&1 && inst_restart containerd
  rc=$?
  snapshot "$b.after"
  cfgstate >"$b.cfg.after"
  diff "$b.before" "$b.after" | sed 's/^/# /' | head -20
  diff "$b.cfg.before" "$b.cfg.after" | sed 's/^/# config.toml: /'
  ok "$P: $1: purged, /etc/containerd, /usr, /var/lib/iobatch and config.toml's bytes, mode and owner as they were" \
    test $rc -eq 0 -a -z "$(diff "$b.before" "$b.after"; diff "$b.cfg.before" "$b.cfg.after")"
}
UNIT_DROPIN="containerd $CV \(/usr/bin/containerd, '/etc/containerd/config.toml'\): the handler is added by the unit drop-in"
if [ "$INST_SUITE" = sid ]; then
  # Debian's own config.toml (no imports): containerd 2.1 would not read a
  # conf.d drop-in, so the unit drop-in adds the handler, as on 1.x.
  cp "$IOB_T/config.debian" "$G/etc/containerd/config.toml"
  inst_restart containerd
  cycle debian "Debian's config.toml (no imports)" "$UNIT_DROPIN"

  # containerd 1.7 over 2.1 and back, with the imports line again: the
  # file trigger (debian/iobatch.triggers) re-runs containerd-setup.
  inst_exec sed -i '1i imports = ["/etc/containerd/conf.d/*.toml"]' /etc/containerd/config.toml
  inst_restart containerd
  b=$IOB_T/switch
  snapshot "$b.before"
  inst_exec sh -c "cd /root && apt-get install -y ./$(basename "$DEB")" >"$b.apt" 2>&1 ||
    sed 's/^/# apt: /' "$b.apt" | tail -20
  TOML=/etc/containerd/conf.d/iobatch.toml
  DROP=/usr/lib/systemd/system/containerd.service.d/zz-iobatch.conf
  where() { inst_exec sh -c "[ -e $TOML ] && echo conf.d; [ -e $DROP ] && echo unit-drop-in; true" | paste -sd' '; }
  podruns() { # NAME: a pod with handler iobatch runs (then goes)
    local id
    id=$($CRI create --handler iobatch --image "$IMAGE" --name "$1" --container main 2>"$b.cri" | jq -r .container_id 2>/dev/null)
    [ -n "$id" ] && [ "$id" != null ] || sed 's/^/# cri: /' "$b.cri"
    $CRI down >/dev/null 2>&1
    [ -n "$id" ] && [ "$id" != null ]
  }
  inst_exec sh -c 'dpkg -i --force-confdef --force-confold /root/debs/containerd_1.7*.deb' >"$b.dpkg17" 2>&1
  rc=$?
  [ $rc -eq 0 ] || sed 's/^/# dpkg: /' "$b.dpkg17" | tail -20
  CV17=$(inst_containerd_version)
  like "$rc $(cat "$b.dpkg17")" "^0 .*Processing triggers for iobatch.*containerd-setup: containerd $CV17 \(/usr/bin/containerd, '/etc/containerd/config.toml'\): the handler is added by the unit drop-in.*run 'systemctl restart containerd'" \
    "deb[containerd $CV -> $CV17]: dpkg -i containerd 1.7: the trigger re-runs containerd-setup, which chooses the unit drop-in and says to restart"
  is "$(where)" "unit-drop-in" "deb[containerd $CV17]: conf.d/iobatch.toml gone, the unit drop-in there"
  # 1.7's sandbox image is another pause tag: the test image stands in.
  inst_exec ctr -n k8s.io images tag --force "$IMAGE" \
    "$(inst_exec containerd config dump 2>/dev/null | awk -F'"' '/^[[:space:]]*sandbox_image[[:space:]]*=/ { print $2; exit }')" >/dev/null 2>&1
  inst_restart containerd
  ok "deb[containerd $CV17]: restarted, containerd runs on the generated config and a pod runs with the handler iobatch" \
    eval '[[ "$(cmdline)" == "/usr/bin/containerd --config /run/iobatch-containerd/config.toml "* ]] && podruns switch17'
  inst_exec sh -c 'dpkg -i --force-confdef --force-confold /root/debs/containerd_2.*.deb' >"$b.dpkg2" 2>&1
  rc=$?
  [ $rc -eq 0 ] || sed 's/^/# dpkg: /' "$b.dpkg2" | tail -20
  like "$rc $(cat "$b.dpkg2")" "^0 .*Processing triggers for iobatch.*containerd-setup: containerd $CV \(/usr/bin/containerd\) imports /etc/containerd/conf.d/\*\.toml .*containerd.service is not changed.*run 'systemctl restart containerd'" \
    "deb[containerd $CV17 -> $CV]: dpkg -i containerd 2.x: the trigger chooses conf.d again and says to restart"
  is "$(where)" "conf.d" "deb[containerd $CV]: the unit drop-in gone, conf.d/iobatch.toml there"
  inst_restart containerd
  ok "deb[containerd $CV]: restarted, containerd runs its own command and a pod runs with the handler iobatch" \
    eval '[ "$(cmdline)" = "/usr/bin/containerd " ] && podruns switch2'
  # The same 2.x again: the trigger runs, the choice stays, so nothing
  # changes and no restart is asked for.
  snapshot "$b.same0"
  inst_exec sh -c 'dpkg -i --force-confdef --force-confold /root/debs/containerd_2.*.deb' >"$b.dpkg2b" 2>&1
  rc=$?
  [ $rc -eq 0 ] || sed 's/^/# dpkg: /' "$b.dpkg2b" | tail -20
  snapshot "$b.same1"
  # The running agent writes its profiles under /var/lib/iobatch when it
  # will (the pods above taught it); the trigger's files are the rest.
  sed -i '\| /var/lib/iobatch/|d' "$b.same0" "$b.same1"
  diff "$b.same0" "$b.same1" | sed 's/^/# /' | head -20
  ok "deb[containerd $CV -> $CV]: dpkg -i the same containerd: the trigger runs, changes no file of /etc/containerd or /usr and asks for no restart" \
    eval '[ $rc -eq 0 ] && grep -q "Processing triggers for iobatch" "$b.dpkg2b" &&
      ! grep -q "systemctl restart containerd" "$b.dpkg2b" && [ -z "$(diff "$b.same0" "$b.same1")" ]'
  inst_exec apt-get purge -y iobatch >"$b.purge" 2>&1 && inst_restart containerd
  rc=$?
  snapshot "$b.after"
  diff "$b.before" "$b.after" | sed 's/^/# /' | head -20
  ok "$P: containerd 1.7 and back, purged: /etc/containerd, /usr and /var/lib/iobatch as they were" \
    test $rc -eq 0 -a -z "$(diff "$b.before" "$b.after")"
fi
if [ "$INST_SUITE" = bookworm ]; then
  # The security review's cases.  config.toml a relative link into a
  # directory of its own, then an absolute one out of /etc/containerd
  # (mode 0640, group 123): read through, never replaced nor written.
  inst_exec sh -c 'cd /etc/containerd && mkdir site && mv config.toml site/ && ln -s site/config.toml config.toml'
  cycle rel "config.toml a relative link" "$UNIT_DROPIN"
  inst_exec sh -c 'cd /etc/containerd && rm config.toml && mkdir -p /srv/ctd &&
    mv site/config.toml /srv/ctd/ && rmdir site && chmod 0640 /srv/ctd/config.toml &&
    chgrp 123 /srv/ctd/config.toml && ln -s /srv/ctd/config.toml config.toml'
  cycle abs "config.toml an absolute link" "$UNIT_DROPIN"
  inst_exec sh -c 'cd /etc/containerd && rm config.toml && mv /srv/ctd/config.toml . && rmdir /srv/ctd &&
    chmod 0644 config.toml && chgrp root config.toml'
  # No newline at the end of the file.
  cp -p "$G/etc/containerd/config.toml" "$IOB_T/config.admin"
  printf '%s' "$(cat "$IOB_T/config.admin")" >"$G/etc/containerd/config.toml"
  cycle noeol "config.toml without a final newline" "$UNIT_DROPIN"
  cp -p "$IOB_T/config.admin" "$G/etc/containerd/config.toml"
  # A decoy: a process named containerd, its binary first on PATH
  # (/usr/local/bin), started before the install.  The package goes by
  # containerd.service's ExecStart, and leaves the decoy running.
  inst_exec sh -c 'cp /bin/sleep /usr/local/bin/containerd && cd / && setsid containerd 100000 </dev/null >/dev/null 2>&1 &'
  decoys() { # the guest's pids of /usr/local/bin/containerd (no procps in the root)
    inst_exec sh -c 'for p in /proc/[0-9]*; do [ "$(readlink $p/exe)" = /usr/local/bin/containerd ] && echo ${p#/proc/}; done; true'
  }
  wait_for 5 '[ -n "$(decoys)" ]'
  decoy=$(decoys)
  cycle decoy "a decoy process named containerd (/usr/local/bin)" "$UNIT_DROPIN"
  ok "$P: the decoy still runs (pid ${decoy:-none}): nothing stopped it nor took it for containerd" \
    test -n "$decoy" -a "$(decoys)" = "$decoy"
  inst_exec sh -c "kill $decoy; rm -f /usr/local/bin/containerd"
fi
tap_done
