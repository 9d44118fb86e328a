#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containerd's runc options (runtimeoptions ConfigPath TOML) that change how
# the shim runs runc and itself: NoPivotRoot, NoNewKeyring, IoUid/IoGid,
# ShimCgroup, SystemdCgroup, each against a control run without it; the
# shipped packaging/containerd/runtime-options.toml, and a misspelt key
# warned about in the shim log.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 33

[ -r /proc/keys ] || bail "/proc/keys is needed (CONFIG_KEYS)"
iob_need jq

# The test cgroup, in every v1 hierarchy or in the v2 tree. Registered
# before containerd so that it is removed after the shims are gone.
CG=/iobopt-${IOB_T##*.}
UNIFIED=0
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && UNIFIED=1
cg_dirs() {
  if [ $UNIFIED = 1 ]; then echo "/sys/fs/cgroup$CG"; return; fi
  awk '$3 == "cgroup" { print $2 }' /proc/mounts | while read -r m; do echo "$m$CG"; done
}
cg_remove() {
  local d i
  for d in $(cg_dirs); do
    for i in $(seq 1 50); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null && break; sleep 0.1; done
  done
}
cg_left() { local d; for d in $(cg_dirs); do [ -d "$d" ] && echo "$d"; done; }
at_exit cg_remove

shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

# binary_name: a wrapper that records each runc command line.
cat >"$IOB_T/runc-wrap" <<SH
#!/bin/sh
echo "\$*" >>"$IOB_T/argv.log"
exec runc "\$@"
SH
chmod +x "$IOB_T/runc-wrap"
toml() { # name lines...: a runtime options file
  local f=$IOB_T/$1.toml
  shift
  printf '%s\n' "BinaryName = \"$IOB_T/runc-wrap\"" "$@" >"$f"
  echo "$f"
}
create_line() { grep -E "(^| )create .* $1\$" "$IOB_T/argv.log"; }
run() { # toml id cmd...: a foreground container, output on stdout
  local t=$1 id=$2
  shift 2
  timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$t" --rm --privileged --rootfs "$R" "$id" "$@" 2>&1
}

# --- no_pivot_root, no_new_keyring: runc flags; the keyring shows in
# /proc/keys (unmasked by --privileged): runc names the session keyring it
# creates _ses.<id>; with --no-new-keyring the shim's own is inherited.
T=$(toml flags "NoPivotRoot = true" "NoNewKeyring = true")
out=$(run "$T" k1 /bin/cat /proc/keys)
like "$(create_line k1)" " --no-pivot( |$)" "no_pivot_root: runc create --no-pivot"
like "$(create_line k1)" " --no-new-keyring( |$)" "no_new_keyring: runc create --no-new-keyring"
if [[ "$out" == *keyring* && "$out" != *"_ses.k1"* ]]; then r=0; else r=1; diag "$out"; fi
_tap_report $r "no_new_keyring: the container has no session keyring of its own"
T0=$(toml plain)
out=$(run "$T0" k2 /bin/cat /proc/keys)
l=$(create_line k2)
[[ -n "$l" && "$l" != *--no-pivot* ]]
_tap_report $? "without the options: runc create without --no-pivot"
[[ -n "$l" && "$l" != *--no-new-keyring* ]]
_tap_report $? "without the options: runc create without --no-new-keyring"
like "$out" "_ses\.k2" "without no_new_keyring: runc's session keyring _ses.<id>"

# --- the `delete` action, which containerd runs after every shim's exit:
# after a Delete RPC removed the container (runc delete k2) there is no
# state of it under runc's root, and the action runs no runc; after its
# shim was killed, runc still has the container, and the action deletes it
# (runc delete --force).
deletes() { grep -cE "(^| )delete( --force)? $1\$" "$IOB_T/argv.log"; }
is "$(deletes k2)" 1 "delete action after a clean Delete: no runc run (one runc delete k2 in all)"
ok "a detached container to orphan" timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$T0" -d --rootfs "$R" kd /bin/sleep 600
kill -9 "$(pgrep -f "$SHIM.* -id kd -address $IOB_SOCK")"
killed() { grep -qE " delete --force kd\$" "$IOB_T/argv.log" && ! [ -e "/run/containerd/runc/$SHIM_NS/kd" ]; }
for _ in $(seq 1 100); do killed && break; sleep 0.1; done
ok "delete action after the shim was killed: runc delete --force, and runc forgets it" killed
$CTR task delete kd >/dev/null 2>&1
$CTR container delete kd >/dev/null 2>&1
# A killed shim cannot remove its socket: the next `start` of its group
# finds nobody answering there and replaces it, as runc's shim does.
rm -f "$(shim_socket_of kd)"

# --- io_uid/io_gid: in a user namespace (root is host uid 100000) the
# container can reopen its stdio (/dev/stdout) only if the shim's pipes
# belong to that uid. ctr 1.6 drops --uidmap with --rootfs: a whole spec.
chmod 711 "$IOB_T"
U=$IOB_T/userns-rootfs
iob_rootfs_busybox "$U"
chown -R 100000:100000 "$U"
spec() { # id cmd: an OCI spec with a user namespace
  ctr oci spec | jq --arg r "$U" --arg cg "/$SHIM_NS/$1" --arg c "$2" '.root.path = $r
    | .process.args = ["/bin/sh", "-c", $c] | .linux.cgroupsPath = $cg
    | .linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]' >"$IOB_T/$1.json"
  echo "$IOB_T/$1.json"
}
TU=$(toml io "IoUid = 100000" "IoGid = 100000")
out=$(timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$TU" --rm --config "$(spec u1 'echo init-reopened >/dev/stdout')" u1 2>&1)
is "$out" "init-reopened" "io_uid: the init process reopens its stdout and ctr prints it"
out=$(timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$T0" --rm --config "$(spec u2 'echo init-reopened >/dev/stdout')" u2 2>&1)
like "$out" "Permission denied" "without io_uid: reopening stdout is refused (control)"
# One line, not up to EOF: ctr 1.6 run does not close the task's stdin.
out=$(echo piped | timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$TU" --rm --config "$(spec u4 'read x </dev/stdin; echo "$x"')" u4 2>&1)
is "$out" "piped" "io_uid: the init process reopens its stdin"
ok "io_uid: a detached container" timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$TU" -d --config "$(spec u3 'sleep 600')" u3
pid=$($CTR task ls | awk '$1 == "u3" { print $2 }')
is "$(stat -Lc %u:%g /proc/$pid/fd/1 /proc/$pid/fd/2 | sort -u)" "100000:100000" "io_uid: the init's stdout and stderr pipes belong to IoUid:IoGid"
out=$(timeout -k 5 30 $CTR task exec --exec-id e1 u3 /bin/sh -c 'echo exec-reopened >/dev/stdout; echo exec-err >/dev/stderr' 2>&1)
is "$(echo "$out" | sort | tr '\n' ' ')" "exec-err exec-reopened " "io_uid: an exec reopens its stdout and stderr"
timeout 60 $CTR task exec --exec-id e2 u3 /bin/sleep 300 >/dev/null 2>&1 &
execpid=$!
epid=
for i in $(seq 1 50); do
  epid=$($CTR task ps u3 2>/dev/null | awk '/ExecID:e2[,}]/ { print $1 }')
  [ -n "$epid" ] && break
  sleep 0.1
done
is "$(stat -Lc %u:%g /proc/$epid/fd/1 /proc/$epid/fd/2 2>&1 | sort -u)" "100000:100000" "io_uid: an exec's stdout and stderr pipes belong to IoUid:IoGid"
$CTR task kill -s SIGKILL u3
wait $execpid
for i in $(seq 1 50); do $CTR task ls | grep -q '^u3 .*STOPPED' && break; sleep 0.1; done
ok "io_uid: container deleted" bash -c "$CTR task delete u3 && $CTR container delete u3"

# --- shim_cgroup: the daemon moves into it at start (v1: every hierarchy
# it exists in; v2: the one tree). A fresh cpuset group needs cpus and mems.
for d in $(cg_dirs); do
  mkdir "$d"
  if [ -e "$d/cpuset.cpus" ] && [ -e "$d/../cpuset.cpus" ]; then # v1 only: the v2 root has none
    cat "$d/../cpuset.cpus" >"$d/cpuset.cpus"
    cat "$d/../cpuset.mems" >"$d/cpuset.mems"
  fi
done
TC=$(toml cg "ShimCgroup = \"$CG\"")
ok "shim_cgroup: a detached container" timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$TC" -d --rootfs "$R" c1 /bin/sleep 600
sp=$(pgrep -f "$SHIM.* -id c1 -address $IOB_SOCK")
want=$(cg_dirs | wc -l)
if [ $UNIFIED = 1 ]; then got=$(grep -c "^0::$CG\$" /proc/$sp/cgroup)
else got=$(grep -v '^0::' /proc/$sp/cgroup | grep -c ":$CG\$"); fi
is "$got" "$want" "shim_cgroup: /proc/<shim>/cgroup shows $CG in each of its $want hierarchies"
[ "$got" = "$want" ] || diag "$(tr '\n' ' ' </proc/$sp/cgroup)"
$CTR task kill -s SIGKILL c1
for _ in $(seq 1 50); do $CTR task ls | grep -q '^c1 .*STOPPED' && break; sleep 0.1; done
ok "shim_cgroup: container deleted" bash -c "$CTR task delete c1 && $CTR container delete c1"
is "$(shim_wait_gone)" 0 "shim_cgroup: the shim exits"
cg_remove
is "$(cg_left)" "" "shim_cgroup: the test cgroup is empty and removed"

TB=$(toml cgbad "ShimCgroup = \"$CG-missing\"")
out=$(run "$TB" c2 /bin/true)
like "$out" "cannot join shim_cgroup '$CG-missing'" "a shim_cgroup that does not exist fails start, naming it"
is "$(shim_wait_gone)" 0 "no shim is left running after the failed start"
ok "no socket or bundle left after the failed start" shim_no_leftovers c2

# --- systemd_cgroup: runc --systemd-cgroup; no systemd here, so runc's
# refusal has to reach ctr. Real systemd cgroups are not tested here.
TS=$(toml sd "SystemdCgroup = true")
out=$(timeout -k 5 30 $CTR run --runtime $RT --runtime-config-path "$TS" --cgroup system.slice:iob:s1 --rm --rootfs "$R" s1 /bin/true 2>&1)
like "$(create_line s1)" "--systemd-cgroup" "systemd_cgroup: runc --systemd-cgroup create"
like "$out" "OCI runtime create failed: runc create failed: .*systemd" "systemd_cgroup without systemd: runc's error reaches ctr"
diag "$out"

# --- the file packaging ships, as it is (inline comments and all); then a
# typo: the container runs with the default and the shim log names the key.
out=$(run "$IOB_TOP/packaging/containerd/runtime-options.toml" p1 /bin/echo shipped)
is "$out" "shipped" "the shipped runtime-options.toml runs a container"
TT=$(toml typo "SystemdCgroups = true   # the key is SystemdCgroup" "NoPivotRoot = true # known")
out=$(run "$TT" t1 /bin/echo typo)
is "$out" "typo" "a misspelt key does not fail the container"
like "$(create_line t1)" " --no-pivot( |$)" "the keys around the typo still apply"
ok "the shim log warns about the misspelt key, naming it and its line" \
  grep -q "level=warning msg=\"'t1': unknown key in the runtime options file, ignored: 'SystemdCgroups' (line 2)\"" "$IOB_T/containerd.log"

is "$(shim_wait_gone)" 0 "every shim exits"
ok "no sockets, bundles or mounts left" shim_no_leftovers k1 k2 kd u1 u2 u3 u4 c1 c2 s1 p1 t1

tap_done
