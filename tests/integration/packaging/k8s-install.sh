#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/kubernetes/install.sh against fake host roots: containerd 1.6
# (handler appended to a Debian-style config.toml, checked with the real
# containerd's `config dump`), 2.x (conf.d drop-in + imports line, with and
# without an imports line or a config.toml; the drop-in in config.toml's
# config version, 2 or 3), each run twice to show that
# nothing changes the second time; restart only when asked and something
# its configuration changed (not for new binaries); the node is labelled
# only once a containerd runs that started after the change (a fake /proc
# says when); the containerd version is the node's own (`containerd
# --version`), not the API server's; uninstall takes the label off first,
# restores config.toml byte for byte and leaves the root as it was; it
# never deletes a config.toml the admin changed since the installer wrote
# it (only our lines go), nor an edited drop-in or the admin's runtime
# options; it is a no-op on a node without our files; no API server: the
# install logs it and goes on.  Links: config.toml a relative or an
# absolute link (the host's, read under HOST_ROOT), /etc/containerd a link:
# the target is edited, keeps its mode and owner, the link stays; a link
# out of the host's root or a loop is refused.  Mode 0640 and owner
# 123:456 survive install and uninstall; a file without a final newline
# comes back byte for byte; an edit the node's containerd cannot load
# (`config dump` fails) leaves config.toml alone and fails; a decoy process
# named containerd is neither run nor taken for the node's containerd
# (containerd.service's MainPID, else the socket's listener in PID 1's
# mount namespace).  kubectl, systemctl and containerd are stubs on PATH
# that only log their arguments (labelling, restarting and the node's
# binary are what a fake root cannot show; tests/install/daemonset.sh
# runs it on a booted system).
. "$(dirname "$0")/../lib/common.sh"
tap_plan 106

INSTALL=$IOB_TOP/packaging/kubernetes/install.sh
STUBS=$IOB_T/stubs
mkdir -p "$STUBS"
# Each call logs whether the binaries were still on the host at that moment.
# `systemctl show -p MainPID` (containerd's process, FAKE_MAINPID) is not
# logged: it asks, it changes nothing.  `containerd --config FILE config
# dump` reads FILE on the fake host (HOST_EXEC=env does not enter it) and
# fails when FAKE_DUMP_FAIL is set, as it does on a config it cannot load.
for s in kubectl systemctl containerd; do
  cat >"$STUBS/$s" <<STUB
#!/bin/sh
case "$s \$*" in "systemctl show -p MainPID containerd.service") echo "MainPID=\${FAKE_MAINPID-4242}"; exit 0 ;; esac
echo "$s \$* (binaries: \$([ -e "\$HOST_ROOT/opt/iobatch" ] && echo present || echo gone))" >>"$IOB_T/calls"
case "$s \$*" in
  "containerd --version") echo "containerd github.com/containerd/containerd \${FAKE_CONTAINERD_VERSION:-1.6.20~ds1} 1.6.20~ds1-1+deb12u3" ;;
  "containerd --config "*" config dump")
    [ -f "\$HOST_ROOT\$2" ] || { echo "containerd: open \$2: no such file or directory" >&2; exit 1; }
    [ -z "\${FAKE_DUMP_FAIL:-}" ] || { echo "containerd: failed to load TOML from \$2: toml: line 3: expected '.' or '=', but got '!'" >&2; exit 1; }
    cat "\$HOST_ROOT\$2" ;;
  kubectl*) [ -z "\${NO_API_SERVER:-}" ] || { echo "The connection to the server localhost:8080 was refused" >&2; exit 1; } ;;
  "systemctl restart containerd") # the fake /proc's containerd starts anew
    echo "4242 (containerd) S\$(printf ' 0%.0s' \$(seq 4 21)) \$(( (\$(date +%s) + 1) * \$(getconf CLK_TCK) )) 0 0" >"\$PROC/4242/stat" ;;
esac
STUB
  chmod +x "$STUBS/$s"
done
# A tenant's process named containerd (docker-in-docker, kind): another
# binary, in its own mount namespace, with a socket of the same path.
mkdir -p "$IOB_T/evil"
cat >"$IOB_T/evil/containerd" <<STUB
#!/bin/sh
echo "evil containerd \$*" >>"$IOB_T/calls"
echo "containerd github.com/containerd/containerd v2.1.4 evil"
STUB
chmod +x "$IOB_T/evil/containerd"
SRC=$IOB_T/src
mkdir -p "$SRC/bin"
for p in iobatchd iobatchctl iobatch-hook containerd-shim-iobatch-v2; do cp "$IOB_B/bin/$p" "$SRC/bin/" || bail "build first: $p"; done
cp "$IOB_TOP/packaging/containerd/runtime-options.toml" "$SRC/"

# fake_proc EPOCH [DECOY_EPOCH]: a host /proc whose containerd (PID 4242,
# containerd.service's MainPID, listening on /run/containerd/containerd.sock
# in PID 1's mount namespace) started at EPOCH; with DECOY_EPOCH also a
# decoy (PID 1000, comm containerd, another binary and mount namespace,
# its own socket of the same path) started then.
PROC=$IOB_T/proc
fake_proc_pid() { # PID EPOCH EXE MNTNS SOCKET_INODE
  mkdir -p "$PROC/$1/ns" "$PROC/$1/fd"
  echo containerd >"$PROC/$1/comm"
  echo "$1 (containerd) S$(printf ' 0%.0s' $(seq 4 21)) $(($2 * $(getconf CLK_TCK))) 0 0" >"$PROC/$1/stat"
  ln -s "$3" "$PROC/$1/exe"
  ln -s "mnt:[$4]" "$PROC/$1/ns/mnt"
  ln -s "socket:[$5]" "$PROC/$1/fd/7"
  printf '0000000000000000: 00000002 00000000 00010000 0001 01 %s /run/containerd/containerd.sock\n' "$5" >>"$PROC/1/net/unix"
}
fake_proc() {
  rm -rf "$PROC"
  mkdir -p "$PROC/1/ns" "$PROC/1/net" "$PROC/1/fd"
  echo "btime 0" >"$PROC/stat"
  ln -s "mnt:[4026531841]" "$PROC/1/ns/mnt"
  echo "Num       RefCount Protocol Flags    Type St Inode Path" >"$PROC/1/net/unix"
  [ -z "${2:-}" ] || fake_proc_pid 1000 "$2" "$IOB_T/evil/containerd" 4026532999 31338
  fake_proc_pid 4242 "$1" "$STUBS/containerd" 4026531841 31337
}
fake_proc 1
run() { # ROOT MODE [VAR=VALUE...]
  local root=$1 mode=$2; shift 2
  env PATH="$STUBS:$PATH" HOST_ROOT="$root" IOBATCH_SRC="$SRC" NODE_NAME=node-1 PROC="$PROC" \
    HOST_EXEC=env SYSTEMCTL=systemctl "$@" "$INSTALL" "$mode" 2>>"$IOB_T/install.log"
}
tree_sum() { (cd "$1" && find . -type f -o -type l | sort | while read -r f; do
  if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else echo "$f $(md5sum <"$f")"; fi; done) | md5sum; }
# tree_list ROOT: every file, link and directory with its mode, owner and content
# (/run is not compared: the kubelet's hostPath and the agent's socket)
tree_list() { (cd "$1" && find . -path ./run -prune -o -print | sort | while read -r f; do
  if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; elif [ -d "$f" ]; then echo "$f $(stat -c '%a %u:%g' "$f")/";
  else echo "$f $(stat -c '%a %u:%g' "$f") $(md5sum <"$f")"; fi; done); }
toml() { /usr/bin/python3 -c 'import sys, tomllib, json; c = tomllib.load(open(sys.argv[1], "rb")); print(json.dumps(eval(sys.argv[2], {"c": c})))' "$@"; }
calls() { cat "$IOB_T/calls" 2>/dev/null; : >"$IOB_T/calls"; }

# ---- containerd 1.6, Debian's config.toml (its own CRI table)
A=$IOB_T/a
mkdir -p "$A/etc/containerd" "$A/usr/local/bin" "$A/opt" "$A/var/lib"
# Debian 12's /etc/containerd/config.toml (containerd 1.6.20~ds1-1+deb12u3), as shipped
cat >"$A/etc/containerd/config.toml" <<'TOML'
version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
TOML
orig=$IOB_T/a-orig.toml
cp "$A/etc/containerd/config.toml" "$orig"
tree_list "$A" >"$IOB_T/a-before"
mkdir -p "$A/run/iobatch" && chmod 755 "$A/run/iobatch" # as the kubelet's DirectoryOrCreate makes it
run "$A" install
is "$?" "0" "1.6: install"
is "$(stat -c %a "$A/run/iobatch")" "700" "1.6: the agent's socket directory made 0700"
c=$(cat "$IOB_T/calls")
like "$c" "containerd --version" "1.6: the containerd version is asked of the node's containerd"
[[ "$c" != *"kubectl get"* ]]
is "$?" "0" "1.6: and not of the API server"
ok "1.6: binaries on the host" test -x "$A/opt/iobatch/bin/iobatchd" -a -x "$A/opt/iobatch/bin/iobatch-hook" \
  -a -x "$A/opt/iobatch/bin/containerd-shim-iobatch-v2" -a -x "$A/opt/iobatch/bin/iobatchctl"
is "$(readlink "$A/usr/local/bin/containerd-shim-iobatch-v2")" "/opt/iobatch/bin/containerd-shim-iobatch-v2" \
  "1.6: shim linked into /usr/local/bin"
ok "1.6: runtime options written" cmp -s "$A/etc/iobatch/runtime-options.toml" "$SRC/runtime-options.toml"
ok "1.6: no drop-in (1.6 would replace the CRI table with it)" test ! -e "$A/etc/containerd/conf.d/iobatch.toml"
is "$(head -c "$(stat -c %s "$orig")" "$A/etc/containerd/config.toml" | md5sum)" "$(md5sum <"$orig")" \
  "1.6: config.toml keeps what it had"
containerd --config "$A/etc/containerd/config.toml" config dump >"$IOB_T/dump" 2>"$IOB_T/dump.err"
is "$?" "0" "1.6: containerd 1.6 reads the result (config dump)"
cri='c["plugins"]["io.containerd.grpc.v1.cri"]'
is "$(toml "$IOB_T/dump" "[${cri}['containerd']['runtimes']['iobatch'][k] for k in ('runtime_type', 'options')]")" \
  '["io.containerd.iobatch.v2", {"ConfigPath": "/etc/iobatch/runtime-options.toml"}]' \
  "1.6: handler iobatch with its ConfigPath in the merged config"
is "$(toml "$IOB_T/dump" "${cri}['cni']['bin_dir']")" "$(toml "$orig" "${cri}['cni']['bin_dir']")" \
  "1.6: config.toml's own CRI settings survive (cni bin_dir)"
is "$(toml "$IOB_T/dump" "${cri}['containerd']['runtimes'][${cri}['containerd']['default_runtime_name']]['runtime_type']")" \
  '"io.containerd.runc.v2"' "1.6: the default runtime (runc) is still defined (else the CRI plugin does not load)"
# Why not a drop-in on 1.6: an imported file replaces the whole CRI table.
sed "1a imports = [\"$IOB_T/imported.toml\"]" "$orig" >"$IOB_T/importing.toml"
cp "$IOB_TOP/packaging/containerd/config-v2.toml" "$IOB_T/imported.toml"
containerd --config "$IOB_T/importing.toml" config dump >"$IOB_T/dump2" 2>/dev/null
isnt_bin_dir=$(toml "$IOB_T/dump2" "${cri}['cni']['bin_dir'] != $(toml "$orig" "${cri}['cni']['bin_dir']")")
is "$isnt_bin_dir" "true" "1.6: (why no drop-in) importing the handler instead loses config.toml's cni bin_dir"
c=$(calls)
[[ "$c" != *"label --overwrite"* && "$c" != *"systemctl "* ]]
is "$?" "0" "1.6: not asked to restart: no restart, and no label while containerd runs the old config"
like "$(tail -2 "$IOB_T/install.log")" "restart" "1.6: the log says to restart containerd"
s1=$(tree_sum "$A")
fake_proc $(($(date +%s) + 5))
run "$A" install
is "$?:$(tree_sum "$A")" "0:$s1" "1.6: second run changes nothing"
c=$(calls)
like "$c" "kubectl label --overwrite node node-1 iobatch.io/runtime=true" \
  "1.6: containerd restarted since (by hand): the second run labels the node"
[[ "$c" != *"systemctl "* ]]
is "$?" "0" "1.6: nothing restarted (not asked)"
run "$A" install RESTART_CONTAINERD=true
[[ "$(calls)" != *"systemctl "* ]]
is "$?" "0" "1.6: asked, but nothing changed and containerd runs this configuration: no restart"
fake_proc 1
run "$A" install RESTART_CONTAINERD=true
like "$(calls)" "systemctl restart containerd.*kubectl label --overwrite node node-1" \
  "1.6: asked on a later run while containerd still runs the old configuration: restarted, then labelled"
mkdir -p "$A/var/lib/iobatch" && echo '{}' >"$A/var/lib/iobatch/profiles.json" # the agent's state
run "$A" uninstall
is "$?" "0" "1.6: uninstall"
ok "1.6: config.toml restored byte for byte" cmp "$orig" "$A/etc/containerd/config.toml"
ok "1.6: binaries and link removed" test ! -e "$A/opt/iobatch" -a ! -L "$A/usr/local/bin/containerd-shim-iobatch-v2"
like "$(calls)" "^kubectl label node node-1 iobatch.io/runtime- \(binaries: present\)" \
  "1.6: the label is taken off first, while the binaries are still there"
is "$(tree_list "$A" | diff "$IOB_T/a-before" - | head -5)" "" \
  "1.6: uninstall leaves the root as it was (every path, mode and checksum; not /run)"
s1=$(tree_list "$A" | md5sum)
run "$A" uninstall
is "$?:$(tree_list "$A" | md5sum)" "0:$s1" "uninstall on a node without iobatch's files: exit 0, nothing changes"
like "$(tail -1 "$IOB_T/install.log")" "nothing of iobatch on this node" "and it says so"
calls >/dev/null

# A config.toml with runtimes of its own keeps them and gets no second runc.
H=$IOB_T/h
mkdir -p "$H/etc/containerd"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "crun"\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.crun]\n  runtime_type = "io.containerd.runc.v2"\n' >"$H/etc/containerd/config.toml"
run "$H" install
containerd --config "$H/etc/containerd/config.toml" config dump >"$IOB_T/dump3" 2>&1
is "$(toml "$IOB_T/dump3" "sorted(${cri}['containerd']['runtimes'])")" '["crun", "iobatch"]' \
  "1.6: a config.toml with its own runtimes: ours added, no runc of ours"

# ---- containerd 2.1, config.toml version 3 without imports; restart asked
B=$IOB_T/b
mkdir -p "$B/etc/containerd"
printf 'version = 3\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n' >"$B/etc/containerd/config.toml"
cp "$B/etc/containerd/config.toml" "$IOB_T/b-orig.toml"
run "$B" install FAKE_CONTAINERD_VERSION=2.1.4 RESTART_CONTAINERD=true
is "$?" "0" "2.1: install"
is "$(toml "$B/etc/containerd/config.toml" 'c["imports"]')" '["/etc/containerd/conf.d/iobatch.toml"]' \
  "2.1: config.toml imports the drop-in"
is "$(toml "$B/etc/containerd/config.toml" 'c["plugins"]["io.containerd.cri.v1.images"]["snapshotter"]')" '"overlayfs"' \
  "2.1: and keeps its tables"
is "$(toml "$B/etc/containerd/conf.d/iobatch.toml" '[c["version"], c["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]]')" \
  '[3, "io.containerd.iobatch.v2"]' "2.1: drop-in (version 3) registers io.containerd.iobatch.v2"
c=$(calls)
is "$(grep -c 'systemctl restart containerd' <<<"$c")" "1" "2.1: asked and changed: containerd restarted once"
like "$c" "systemctl restart containerd.*kubectl label --overwrite node node-1" "2.1: then the node is labelled"
s1=$(tree_sum "$B")
run "$B" install FAKE_CONTAINERD_VERSION=v2.1.4 RESTART_CONTAINERD=true
is "$(tree_sum "$B"):$(calls | grep -c 'systemctl ')" "$s1:0" "2.1: second run: no change, no restart"
printf 'x' >>"$SRC/bin/iobatchctl"
run "$B" install FAKE_CONTAINERD_VERSION=v2.1.4 RESTART_CONTAINERD=true
is "$(cmp -s "$SRC/bin/iobatchctl" "$B/opt/iobatch/bin/iobatchctl" && echo copied):$(calls | grep -c 'systemctl ')" \
  "copied:0" "2.1: a new binary is copied without restarting containerd"
run "$B" uninstall FAKE_CONTAINERD_VERSION=v2.1.4
ok "2.1: uninstall restores config.toml" cmp "$IOB_T/b-orig.toml" "$B/etc/containerd/config.toml"
ok "2.1: drop-in removed, and conf.d, which the installer made" test ! -e "$B/etc/containerd/conf.d"

# ---- containerd 2.1 with Debian's config.toml (version 2, as 1.6's
# above): the drop-in is version 2 too (a version 3 one makes containerd
# 2.1 ignore config.toml's own tables: install.sh, dropin; daemonset.sh
# runs it on Debian unstable's 2.1)
V=$IOB_T/v
mkdir -p "$V/etc/containerd"
cp "$orig" "$V/etc/containerd/config.toml"
run "$V" install FAKE_CONTAINERD_VERSION=2.1.9~ds1
is "$?:$(head -1 "$V/etc/containerd/config.toml")" '0:imports = ["/etc/containerd/conf.d/iobatch.toml"]  # added by iobatch' \
  "2.1, Debian's config.toml (version 2): install; config.toml imports the drop-in"
is "$(toml "$V/etc/containerd/conf.d/iobatch.toml" '[c["version"], c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]]')" \
  '[2, "io.containerd.iobatch.v2"]' "2.1, config.toml version 2: the drop-in is version 2 (the CRI's v2 table)"
run "$V" uninstall FAKE_CONTAINERD_VERSION=2.1.9~ds1
ok "2.1, config.toml version 2: uninstall restores config.toml and removes the drop-in and conf.d" \
  eval 'cmp -s "$orig" "$V/etc/containerd/config.toml" && test ! -e "$V/etc/containerd/conf.d"'
calls >/dev/null

# ---- an existing imports line; the conf.d glob; no config.toml
C=$IOB_T/c
mkdir -p "$C/etc/containerd"
printf 'version = 3\nimports = ["/etc/containerd/site.toml"]\n' >"$C/etc/containerd/config.toml"
cp "$C/etc/containerd/config.toml" "$IOB_T/c-orig.toml"
run "$C" install CONTAINERD_VERSION=2.0.0
run "$C" install CONTAINERD_VERSION=2.0.0
is "$(toml "$C/etc/containerd/config.toml" 'c["imports"]')" '["/etc/containerd/conf.d/iobatch.toml", "/etc/containerd/site.toml"]' \
  "imports line: our file added once, first (the admin's imports win over it)"
run "$C" uninstall CONTAINERD_VERSION=2.0.0
ok "imports line: uninstall restores it" cmp "$IOB_T/c-orig.toml" "$C/etc/containerd/config.toml"
D=$IOB_T/d
mkdir -p "$D/etc/containerd"
printf 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n' >"$D/etc/containerd/config.toml"
cp "$D/etc/containerd/config.toml" "$IOB_T/d-orig.toml"
run "$D" install CONTAINERD_VERSION=2.2.0
ok "conf.d glob already imported (2.2 default config): config.toml untouched" cmp "$IOB_T/d-orig.toml" "$D/etc/containerd/config.toml"
E=$IOB_T/e
mkdir -p "$E"
run "$E" install CONTAINERD_VERSION=2.2.0
is "$(toml "$E/etc/containerd/config.toml" '[c["version"], c["imports"]]')" '[3, ["/etc/containerd/conf.d/iobatch.toml"]]' \
  "no config.toml: one is created importing the drop-in"
run "$E" uninstall CONTAINERD_VERSION=2.2.0
ok "no config.toml: uninstall removes the one it created" test ! -e "$E/etc/containerd/config.toml"

# ---- safe uninstall: what the admin changed stays
run "$E" install CONTAINERD_VERSION=2.2.0
printf '\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "native"\n' >>"$E/etc/containerd/config.toml"
printf '# the admin was here\n' >>"$E/etc/containerd/conf.d/iobatch.toml"
printf 'IobatchFailClosed = true\n' >"$E/etc/iobatch/runtime-options.toml"
run "$E" uninstall CONTAINERD_VERSION=2.2.0
is "$(cat "$E/etc/containerd/config.toml" 2>&1)" "$(printf 'version = 3\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "native"')" \
  "created, then edited by the admin: kept, only the installer's imports line removed"
like "$(cat "$IOB_T/install.log")" "config.toml was created by install.sh but changed since" "and the log says why it is kept"
ok "an edited drop-in is kept (nothing imports it any more)" grep -q 'the admin was here' "$E/etc/containerd/conf.d/iobatch.toml"
ok "the admin's runtime options are kept" grep -q IobatchFailClosed "$E/etc/iobatch/runtime-options.toml"
ok "the installer's mark is gone" test ! -e "$E/etc/containerd/.config.toml.created-by-iobatch"
F=$IOB_T/f
mkdir -p "$F/etc/containerd" "$F/usr/local/bin"
run "$F" install
mkdir -p "$F/var/lib/iobatch"
echo '{}' >"$F/var/lib/iobatch/penalties.json"
echo 'mine' >"$F/var/lib/iobatch/notes.txt"
run "$F" uninstall
is "$(ls -A "$F/var/lib/iobatch" | paste -sd' ')" "notes.txt" "/var/lib/iobatch with a file that is not the agent's: only the agent's state goes"
run "$F" install
mkdir -p "$F/var/lib/iobatch" && echo '{}' >"$F/var/lib/iobatch/profiles.json"
run "$F" uninstall KEEP_STATE=true
ok "KEEP_STATE=true keeps the agent's state" test -f "$F/var/lib/iobatch/profiles.json"

# ---- an agent that did not stop left caps, cpu.weight 1 and a frozen
# container: uninstall puts them back with the agent itself (its
# --restore-only, "on the host": /opt/iobatch and --state-dir under the
# fake root, the cgroup files where the journal says), and never deletes a
# journal that still holds entries.
cat >"$STUBS/hostexec" <<'STUB'
#!/usr/bin/env bash
[[ $1 == /opt/iobatch/* ]] || exec "$@"
a=("$HOST_ROOT$1"); shift
while [ $# -gt 0 ]; do
  case $1 in --state-dir) a+=("$1" "$HOST_ROOT$2"); shift 2 ;; *) a+=("$1"); shift ;; esac
done
exec "${a[@]}"
STUB
chmod +x "$STUBS/hostexec"
CG=$IOB_T/cg/kubepods/pod1/ctr1
# crashed JOURNAL_FILE: what a killed agent leaves, for the fake cgroup CG
crashed() {
  mkdir -p "$CG"
  echo "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max" >"$CG/io.max"
  echo 1 >"$CG/cpu.weight"
  [ -d "$CG/cgroup.freeze" ] || echo 1 >"$CG/cgroup.freeze"
  local ino; ino=$(stat -c %i "$CG")
  cat >"$1" <<JSON
{"version": 2, "entries": [
 {"file": "$CG/io.max", "dev": "8:0", "value": "rbps=max wbps=max riops=max wiops=max", "ino": $ino,
  "written": "rbps=1048576 wbps=1048576 riops=max wiops=max"},
 {"file": "$CG/cpu.weight", "dev": "0:0", "value": "100", "ino": $ino, "written": "1"},
 {"file": "$CG/cgroup.freeze", "dev": "0:0", "value": "0", "ino": $ino, "written": "1"}]}
JSON
}
U=$IOB_T/u
mkdir -p "$U/etc/containerd" "$U/usr/local/bin" "$U/var/lib" "$U/opt"
cp "$orig" "$U/etc/containerd/config.toml"
tree_list "$U" >"$IOB_T/u-before"
run "$U" install
mkdir -p "$U/var/lib/iobatch" && chmod 700 "$U/var/lib/iobatch"
crashed "$U/var/lib/iobatch/restore.json"
: >"$IOB_T/install.log"
run "$U" uninstall HOST_EXEC="$STUBS/hostexec"
is "$?" "0" "restore journal: uninstall exits 0"
is "$(head -c1 "$CG/cgroup.freeze")/$(head -c3 "$CG/cpu.weight")/$(head -c41 "$CG/io.max")" \
  "0/100/8:0 rbps=max wbps=max riops=max wiops=max" \
  "restore journal: uninstall thaws the frozen container, puts back cpu.weight and the cap"
like "$(cat "$IOB_T/install.log")" "restored '$CG/cgroup.freeze' 0:0 to '0'" "and the log names what was put back"
is "$(tree_list "$U" | diff "$IOB_T/u-before" - | head -5)" "" \
  "restore journal put back: the journal and everything else of iobatch is gone"
# A thaw that cannot be done (a directory where cgroup.freeze is: EISDIR)
run "$U" install
mkdir -p "$U/var/lib/iobatch" && chmod 700 "$U/var/lib/iobatch"
rm -f "$CG/cgroup.freeze" && mkdir "$CG/cgroup.freeze"
crashed "$U/var/lib/iobatch/restore.json"
: >"$IOB_T/install.log"
run "$U" uninstall HOST_EXEC="$STUBS/hostexec"
is "$?" "1" "a thaw that fails: uninstall exits 1"
ok "the journal is kept with the entry it could not put back" grep -q "$CG/cgroup.freeze" "$U/var/lib/iobatch/restore.json"
ok "and the agent that can replay it" test -x "$U/opt/iobatch/bin/iobatchd"
like "$(cat "$IOB_T/install.log")" "restore.json kept: iobatchd --restore-only \(exit status 1\)" "and the log says so"
like "$(cat "$IOB_T/install.log")" "not restored: '$CG/cgroup.freeze' 0:0 to '0'" "naming the value not put back"
ok "the handler is gone all the same" cmp "$orig" "$U/etc/containerd/config.toml"
# mended: the next uninstall (the cleanup pod restarted) finishes
rmdir "$CG/cgroup.freeze" && echo 1 >"$CG/cgroup.freeze"
run "$U" uninstall HOST_EXEC="$STUBS/hostexec"
is "$?/$(head -c1 "$CG/cgroup.freeze")" "0/0" "mended: the next uninstall thaws it and exits 0"
is "$(tree_list "$U" | diff "$IOB_T/u-before" - | head -5)" "" \
  "and leaves nothing of iobatch behind"

# ---- a node with the .deb's files and none of install.sh's: untouched
J=$IOB_T/j
mkdir -p "$J/etc/iobatch" "$J/var/lib/iobatch" "$J/etc/containerd"
cp "$SRC/runtime-options.toml" "$J/etc/iobatch/"
echo '{}' >"$J/var/lib/iobatch/profiles.json"
cp "$orig" "$J/etc/containerd/config.toml"
tree_list "$J" >"$IOB_T/j-before"
run "$J" uninstall
is "$(tree_list "$J" | diff "$IOB_T/j-before" - | head -5)" "" \
  "a node with the .deb's runtime options and agent state, not installed by install.sh: uninstall leaves them"

# ---- no API server: the install logs it and goes on
G=$IOB_T/g
mkdir -p "$G/etc/containerd" "$G/usr/local/bin"
: >"$IOB_T/install.log"
calls >/dev/null
run "$G" install RESTART_CONTAINERD=true NO_API_SERVER=1
is "$?" "0" "no API server: install still exits 0"
ok "no API server: the handler is registered anyway" grep -q 'runtimes.iobatch\]' "$G/etc/containerd/config.toml"
like "$(cat "$IOB_T/install.log")" "cannot label node node-1 iobatch.io/runtime=true \(no API server answered\?\).*refused; going on" \
  "no API server: the log says the node is not labelled"
run "$G" uninstall NO_API_SERVER=1
is "$?:$(ls "$G/opt" 2>&1)" "0:" "no API server: uninstall still removes everything"

# ---- links: followed as the host follows them, the target edited in place
# (bytes, mode and owner kept), the link left a link
own() { stat -c '%a %u:%g' "$1"; }
BEGIN_LINE="# BEGIN iobatch (install.sh; 'install.sh uninstall' removes this block)"
K=$IOB_T/k
mkdir -p "$K/etc/containerd" "$K/srv/etc"
cp "$orig" "$K/srv/etc/containerd.toml"
chown 123:456 "$K/srv/etc/containerd.toml" && chmod 640 "$K/srv/etc/containerd.toml"
ln -s ../../srv/etc/containerd.toml "$K/etc/containerd/config.toml"
run "$K" install
is "$?:$(readlink "$K/etc/containerd/config.toml")" "0:../../srv/etc/containerd.toml" \
  "relative link: install, and config.toml stays the link it was"
ok "relative link: its target gets the handler" grep -qxF "$BEGIN_LINE" "$K/srv/etc/containerd.toml"
is "$(own "$K/srv/etc/containerd.toml")" "640 123:456" "relative link: the target keeps its mode and owner (not the link's 777)"
run "$K" uninstall
is "$?:$(readlink "$K/etc/containerd/config.toml"):$(own "$K/srv/etc/containerd.toml")" \
  "0:../../srv/etc/containerd.toml:640 123:456" "relative link: uninstall keeps the link, the mode and the owner"
ok "relative link: uninstall restores the target byte for byte" cmp "$orig" "$K/srv/etc/containerd.toml"

L=$IOB_T/l
mkdir -p "$L/etc/containerd" "$L/srv/etc" "$L/usr/local/bin" "$L/opt"
cp "$orig" "$L/srv/etc/containerd.toml"
ln -s /srv/etc/containerd.toml "$L/etc/containerd/config.toml"
tree_list "$L" >"$IOB_T/l-before"
run "$L" install
is "$?:$(readlink "$L/etc/containerd/config.toml")" "0:/srv/etc/containerd.toml" \
  "absolute link (its target is under HOST_ROOT): install, and the link stays"
is "$(head -c "$(stat -c %s "$orig")" "$L/srv/etc/containerd.toml" | md5sum):$(grep -cxF "$BEGIN_LINE" "$L/srv/etc/containerd.toml")" \
  "$(md5sum <"$orig"):1" "absolute link: the target keeps the admin's settings and gets the handler (no bare config)"
run "$L" uninstall
is "$(tree_list "$L" | diff "$IOB_T/l-before" - | head -5)" "" \
  "absolute link: uninstall keeps config.toml and restores its target (every path, mode, owner, checksum)"

# /etc/containerd itself a link out of the way (2.x: the drop-in, conf.d,
# config.toml and the created-mark all go through it).  The target is
# absolute: outside HOST_ROOT it names a directory of this machine, which
# is removed if an installer wrote there.
outside=/srv/$(basename "$IOB_T")
at_exit "rm -rf '$outside'"
M=$IOB_T/m
mkdir -p "$M$outside/containerd" "$M/etc" "$M/usr/local/bin" "$M/opt"
printf 'version = 3\n' >"$M$outside/containerd/config.toml"
chown 123:456 "$M$outside/containerd/config.toml" && chmod 640 "$M$outside/containerd/config.toml"
ln -s "$outside/containerd" "$M/etc/containerd"
tree_list "$M" >"$IOB_T/m-before"
run "$M" install CONTAINERD_VERSION=2.1.4
is "$?:$(toml "$M$outside/containerd/config.toml" 'c["imports"]'):$(own "$M$outside/containerd/config.toml")" \
  '0:["/etc/containerd/conf.d/iobatch.toml"]:640 123:456' "/etc/containerd a link: config.toml edited through it, mode and owner kept"
ok "/etc/containerd a link: the drop-in is in its target, under HOST_ROOT" test -f "$M$outside/containerd/conf.d/iobatch.toml"
ok "/etc/containerd a link: nothing written outside HOST_ROOT" test ! -e "$outside"
run "$M" uninstall CONTAINERD_VERSION=2.1.4
is "$(tree_list "$M" | diff "$IOB_T/m-before" - | head -5)" "" \
  "/etc/containerd a link: uninstall leaves the root as it was"

N=$IOB_T/n
mkdir -p "$N/etc/containerd"
ln -s ../../../../../../../../../../etc/iobatch-escape.toml "$N/etc/containerd/config.toml"
run "$N" install
is "$?:$(readlink "$N/etc/containerd/config.toml")" "1:../../../../../../../../../../etc/iobatch-escape.toml" \
  "a link that leaves the host's root: refused, left alone"
like "$(tail -1 "$IOB_T/install.log")" "/etc/containerd/config.toml.*leaves the host's root" "and the error names the path"
ln -sfn config.toml "$N/etc/containerd/config.toml"
run "$N" install
is "$?:$(readlink "$N/etc/containerd/config.toml")" "1:config.toml" "a link that loops: refused, left alone"
like "$(tail -1 "$IOB_T/install.log")" "/etc/containerd/config.toml.*loop" "and the error names the path"

# ---- mode and owner of a regular config.toml (1.6: our block; 2.x: our import)
for v in 1.6.20 2.1.4; do
  O=$IOB_T/o-$v
  mkdir -p "$O/etc/containerd"
  if [ "$v" = 1.6.20 ]; then cp "$orig" "$O/etc/containerd/config.toml"; else cp "$IOB_T/b-orig.toml" "$O/etc/containerd/config.toml"; fi
  chown 123:456 "$O/etc/containerd/config.toml" && chmod 640 "$O/etc/containerd/config.toml"
  cp -p "$O/etc/containerd/config.toml" "$IOB_T/o-orig"
  run "$O" install CONTAINERD_VERSION=$v
  is "$?:$(own "$O/etc/containerd/config.toml")" "0:640 123:456" "$v: install keeps config.toml's mode 0640 and owner 123:456"
  run "$O" uninstall CONTAINERD_VERSION=$v
  is "$(own "$O/etc/containerd/config.toml"):$(cmp "$IOB_T/o-orig" "$O/etc/containerd/config.toml" && echo same)" \
    "640 123:456:same" "$v: uninstall keeps them too, and the bytes"
done

# ---- a config.toml without a final newline round-trips byte for byte
P=$IOB_T/p
mkdir -p "$P/etc/containerd"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = "/usr/lib/cni"' >"$P/etc/containerd/config.toml"
cp "$P/etc/containerd/config.toml" "$IOB_T/p-orig"
run "$P" install
is "$?:$(grep -cxF "$BEGIN_LINE" "$P/etc/containerd/config.toml")" "0:1" \
  "no final newline (1.6): the BEGIN marker is a line of its own"
run "$P" uninstall
ok "no final newline (1.6): uninstall restores the bytes, the missing newline too" cmp "$IOB_T/p-orig" "$P/etc/containerd/config.toml"
printf 'version = 3' >"$P/etc/containerd/config.toml"
run "$P" install CONTAINERD_VERSION=2.1.4
is "$?:$(toml "$P/etc/containerd/config.toml" 'c["imports"]')" '0:["/etc/containerd/conf.d/iobatch.toml"]' \
  "no final newline (2.x): the drop-in is imported"
run "$P" uninstall CONTAINERD_VERSION=2.1.4
is "$(od -c "$P/etc/containerd/config.toml" | head -2)" "$(printf 'version = 3' | od -c | head -2)" \
  "no final newline (2.x): uninstall restores the bytes"

# ---- the edited config is checked by the host's containerd first
Q=$IOB_T/q
mkdir -p "$Q/etc/containerd"
cp "$orig" "$Q/etc/containerd/config.toml"
calls >/dev/null
run "$Q" install FAKE_DUMP_FAIL=1
is "$?" "1" "containerd cannot load the edited config: install fails"
ok "and config.toml is left as it was" cmp "$orig" "$Q/etc/containerd/config.toml"
like "$(tail -3 "$IOB_T/install.log")" "config dump.*failed to load TOML" "and the error says why"
is "$(ls -A "$Q/etc/containerd")" "config.toml" "and nothing of the candidate is left"
run "$Q" install
like "$(calls)" "containerd --config /etc/containerd/config.toml.* config dump" \
  "the check runs on the host's path of the edited file, next to config.toml"

# ---- a decoy process named containerd is not taken for the node's
R=$IOB_T/r
mkdir -p "$R/etc/containerd"
cp "$orig" "$R/etc/containerd/config.toml"
fake_proc 1 $(($(date +%s) + 60))
calls >/dev/null
run "$R" install
c=$(calls)
[[ "$c" != *"evil"* ]]
is "$?" "0" "decoy containerd: its binary is not run (the version is asked of containerd.service's)"
[[ "$c" != *"label --overwrite"* ]]
is "$?" "0" "decoy containerd, newer than the config: the node is not labelled (containerd.service's is older)"
run "$R" install FAKE_MAINPID=0
c=$(calls)
[[ "$c" != *"evil"* && "$c" != *"label --overwrite"* ]]
is "$?" "0" "no containerd.service: the socket's listener in the host's mount namespace is found, not the decoy"
fake_proc $(($(date +%s) + 60)) 1
run "$R" install FAKE_MAINPID=0
like "$(calls)" "kubectl label --overwrite node node-1" "no containerd.service: the socket's listener, newer, gets the node labelled"
rm -f "$PROC/1/net/unix"
: >"$IOB_T/install.log"
run "$R" install FAKE_MAINPID=0
[[ "$(calls)" != *"label --overwrite"* ]]
is "$?" "0" "neither containerd.service nor the socket: not labelled"
like "$(cat "$IOB_T/install.log")" "cannot find the node's containerd" "and the log says so"
fake_proc 1

[ "$_tap_failed" -eq 0 ] || sed 's/^/# install.sh: /' "$IOB_T/install.log"
tap_done
