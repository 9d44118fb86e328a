#!/usr/bin/env bash
# packaging/kubernetes/install.sh against fake host roots: containerd 1.6
# (handler appended to a Debian-style config.toml, checked with the real
# containerd's `config dump`), 2.x (conf.d drop-in + imports line, with and
# without an imports line or a config.toml), each run twice to show that
# nothing changes the second time; restart only when asked and something
# its configuration changed (not for new binaries); the node is labelled
# only once a containerd runs that started after the change (a fake /proc
# says when); uninstall restores config.toml byte for byte.  kubectl and
# systemctl are stubs on PATH that only log their arguments (labelling and
# restarting are the two things a fake root cannot show).
. "$(dirname "$0")/lib.sh"
tap_plan 35

INSTALL=$IOB_TOP/packaging/kubernetes/install.sh
STUBS=$IOB_T/stubs
mkdir -p "$STUBS"
for s in kubectl systemctl; do
  cat >"$STUBS/$s" <<STUB
#!/bin/sh
echo "$s \$*" >>"$IOB_T/calls"
case "\$*" in *containerRuntimeVersion*) printf '%s' "\${FAKE_RUNTIME_VERSION:-containerd://1.6.20}" ;; esac
STUB
  chmod +x "$STUBS/$s"
done
SRC=$IOB_T/src
mkdir -p "$SRC/bin"
for p in iobatchd iobatchctl iobatch-hook containerd-shim-iobatch-v2; do cp "$IOB_B/bin/$p" "$SRC/bin/" || bail "build first: $p"; done
cp "$IOB_TOP/packaging/containerd/runtime-options.toml" "$SRC/"

# fake_proc EPOCH: a host /proc whose containerd started at EPOCH
PROC=$IOB_T/proc
fake_proc() {
  rm -rf "$PROC"
  mkdir -p "$PROC/4242"
  echo "btime 0" >"$PROC/stat"
  echo containerd >"$PROC/4242/comm"
  echo "4242 (containerd) S$(printf ' 0%.0s' $(seq 4 21)) $(($1 * $(getconf CLK_TCK))) 0 0" >"$PROC/4242/stat"
}
fake_proc 1
run() { # ROOT MODE [VAR=VALUE...]
  local root=$1 mode=$2; shift 2
  env PATH="$STUBS:$PATH" HOST_ROOT="$root" IOBATCH_SRC="$SRC" NODE_NAME=node-1 PROC="$PROC" \
    SYSTEMCTL=systemctl "$@" "$INSTALL" "$mode" 2>>"$IOB_T/install.log"
}
tree_sum() { (cd "$1" && find . -type f -o -type l | sort | while read -r f; do
  if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else echo "$f $(md5sum <"$f")"; fi; done) | md5sum; }
toml() { /usr/bin/python3 -c 'import sys, tomllib, json; c = tomllib.load(open(sys.argv[1], "rb")); print(json.dumps(eval(sys.argv[2], {"c": c})))' "$@"; }
calls() { cat "$IOB_T/calls" 2>/dev/null; : >"$IOB_T/calls"; }

# ---- containerd 1.6, Debian's config.toml (its own CRI table)
A=$IOB_T/a
mkdir -p "$A/etc/containerd"
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
run "$A" install
is "$?" "0" "1.6: install"
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
# Why not a drop-in on 1.6: an imported file replaces the whole CRI table.
sed "1a imports = [\"$IOB_T/imported.toml\"]" "$orig" >"$IOB_T/importing.toml"
cp "$IOB_TOP/packaging/containerd/config-v2.toml" "$IOB_T/imported.toml"
containerd --config "$IOB_T/importing.toml" config dump >"$IOB_T/dump2" 2>/dev/null
isnt_bin_dir=$(toml "$IOB_T/dump2" "${cri}['cni']['bin_dir'] != $(toml "$orig" "${cri}['cni']['bin_dir']")")
is "$isnt_bin_dir" "true" "1.6: (why no drop-in) importing the handler instead loses config.toml's cni bin_dir"
c=$(calls)
[[ "$c" != *"label --overwrite"* && "$c" != *systemctl* ]]
is "$?" "0" "1.6: not asked to restart: no restart, and no label while containerd runs the old config"
like "$(tail -2 "$IOB_T/install.log")" "restart" "1.6: the log says to restart containerd"
s1=$(tree_sum "$A")
fake_proc $(($(date +%s) + 5))
run "$A" install
is "$?:$(tree_sum "$A")" "0:$s1" "1.6: second run changes nothing"
c=$(calls)
like "$c" "kubectl label --overwrite node node-1 iobatch.io/runtime=true" \
  "1.6: containerd restarted since (by hand): the second run labels the node"
[[ "$c" != *systemctl* ]]
is "$?" "0" "1.6: nothing restarted (not asked)"
fake_proc 1
run "$A" install RESTART_CONTAINERD=true
[[ "$(calls)" != *systemctl* ]]
is "$?" "0" "1.6: asked, but nothing changed: no restart"
run "$A" uninstall
is "$?" "0" "1.6: uninstall"
ok "1.6: config.toml restored byte for byte" cmp "$orig" "$A/etc/containerd/config.toml"
ok "1.6: binaries and link removed" test ! -e "$A/opt/iobatch" -a ! -L "$A/usr/local/bin/containerd-shim-iobatch-v2"
like "$(calls)" "kubectl label node node-1 iobatch.io/runtime-" "1.6: label removed"

# ---- containerd 2.1, config.toml version 3 without imports; restart asked
B=$IOB_T/b
mkdir -p "$B/etc/containerd"
printf 'version = 3\n\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n' >"$B/etc/containerd/config.toml"
cp "$B/etc/containerd/config.toml" "$IOB_T/b-orig.toml"
run "$B" install FAKE_RUNTIME_VERSION=containerd://2.1.4 RESTART_CONTAINERD=true
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
run "$B" install FAKE_RUNTIME_VERSION=containerd://2.1.4 RESTART_CONTAINERD=true
is "$(tree_sum "$B"):$(calls | grep -c systemctl)" "$s1:0" "2.1: second run: no change, no restart"
printf 'x' >>"$SRC/bin/iobatchctl"
run "$B" install FAKE_RUNTIME_VERSION=containerd://2.1.4 RESTART_CONTAINERD=true
is "$(cmp -s "$SRC/bin/iobatchctl" "$B/opt/iobatch/bin/iobatchctl" && echo copied):$(calls | grep -c systemctl)" \
  "copied:0" "2.1: a new binary is copied without restarting containerd"
run "$B" uninstall FAKE_RUNTIME_VERSION=containerd://2.1.4
ok "2.1: uninstall restores config.toml" cmp "$IOB_T/b-orig.toml" "$B/etc/containerd/config.toml"
ok "2.1: drop-in removed" test ! -e "$B/etc/containerd/conf.d/iobatch.toml"

# ---- an existing imports line; the conf.d glob; no config.toml
C=$IOB_T/c
mkdir -p "$C/etc/containerd"
printf 'version = 3\nimports = ["/etc/containerd/site.toml"]\n' >"$C/etc/containerd/config.toml"
cp "$C/etc/containerd/config.toml" "$IOB_T/c-orig.toml"
run "$C" install CONTAINERD_VERSION=2.0.0
run "$C" install CONTAINERD_VERSION=2.0.0
is "$(toml "$C/etc/containerd/config.toml" 'c["imports"]')" '["/etc/containerd/site.toml", "/etc/containerd/conf.d/iobatch.toml"]' \
  "imports line: our file appended once"
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

[ "$_tap_failed" -eq 0 ] || sed 's/^/# install.sh: /' "$IOB_T/install.log"
tap_done
