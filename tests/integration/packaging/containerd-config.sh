#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/containerd/containerd-config, the drop-in's ExecStartPre: the
# admin's config.toml of each version (1, 2, 3, none, all comments) gets
# the CRI runtime handler "iobatch" where that version wants it, checked
# with Debian's containerd (`config dump`: its own parser), the default
# runtime runc kept (a runtimes table alone replaces it), and, for version
# 3 (containerd 2.x, not installable here), with python's tomllib; a config
# that (with its imports) already has the handler, that containerd cannot
# load, or of an unknown version is used unchanged with one
# line saying why; one in a newer version than this containerd reads is
# used unchanged too.  The admin's file is never written.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 29
iob_need containerd python3 sha256sum
GEN=$IOB_TOP/packaging/containerd/containerd-config
[ -x "$GEN" ] || bail "$GEN is not executable"
D=$IOB_T/cc
mkdir -p "$D"

# gen NAME [env...]: run the generator on $D/NAME.toml into $D/NAME.out;
# sets MSG (its standard error) and RC.
gen() {
  local n=$1
  shift
  MSG=$(env "$@" "$GEN" "$D/$n.toml" "$D/out/$n.toml" 2>&1)
  RC=$?
}
# dumped NAME: containerd's view of the result, the iobatch runtime's keys.
handler() {
  containerd --config "$D/out/$1.toml" config dump 2>/dev/null | python3 -c '
import sys, tomllib
c = tomllib.loads(sys.stdin.read())
r = c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]
print(r["runtime_type"], r["pod_annotations"], r["container_annotations"], r["options"]["ConfigPath"])' 2>&1
}
WANT='io.containerd.iobatch.v2 ['"'"'io.iobatch.*'"'"'] ['"'"'io.iobatch.*'"'"'] /etc/iobatch/runtime-options.toml'
dumpkey() { # NAME PYEXPR: a value from containerd's view of the result
  containerd --config "$D/out/$1.toml" config dump 2>/dev/null |
    python3 -c 'import sys, tomllib; c = tomllib.loads(sys.stdin.read()); print('"$2"')' 2>&1
}
unchanged() { cmp -s "$D/$1.toml" "$D/out/$1.toml"; }

# ---- Debian 12's own /etc/containerd/config.toml (version 2)
cat >"$D/debian.toml" <<'EOF'
version = 2

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
EOF
sum=$(sha256sum "$D/debian.toml")
gen debian
is "$RC" 0 "v2 (Debian's config.toml): exit 0"
like "$MSG" "config version 2\) with the CRI runtime handler iobatch" "v2: one line says what was written"
is "$(handler debian)" "$WANT" "v2: containerd sees the iobatch handler with its annotations and options"
is "$(dumpkey debian 'c["plugins"]["io.containerd.grpc.v1.cri"]["cni"]["bin_dir"]')" "/usr/lib/cni" \
  "v2: the admin's settings are kept"
is "$(dumpkey debian 'c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["default_runtime_name"], c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]["runtime_type"]')" \
  "runc io.containerd.runc.v2" "v2: the default runtime runc is still there (a runtimes table would replace it)"
is "$(sha256sum "$D/debian.toml")" "$sum" "the admin's file is not written"
is "$(stat -c %a "$D/out/debian.toml")" "600" "the result is mode 0600"

# ---- version 1: no version line, plugins.cri
cat >"$D/v1.toml" <<'EOF'
root = "/var/lib/containerd"
[plugins.cri]
  sandbox_image = "example.org/pause:3.6"
  [plugins.cri.containerd]
    snapshotter = "native"
EOF
gen v1
is "$RC" 0 "v1: exit 0"
like "$MSG" "config version 1\)" "v1: read as version 1"
is "$(handler v1)" "$WANT" "v1: containerd sees the handler under plugins.cri"
is "$(dumpkey v1 'c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["snapshotter"], c["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"]')" \
  "native example.org/pause:3.6" "v1: the admin's settings are kept"

# ---- no file, an all-comment file, no final newline
gen missing
is "$RC:$(grep -c '^version = 2$' "$D/out/missing.toml")" "0:1" "no config.toml: version 2 with the handler"
is "$(handler missing)" "$WANT" "no config.toml: containerd sees the handler"
is "$(dumpkey missing 'c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]["runtime_type"]')" \
  "io.containerd.runc.v2" "no config.toml: and runc"
printf '# a comment\n\n   # another\n' >"$D/comments.toml"
gen comments
is "$(handler comments)" "$WANT" "an all-comment config.toml: containerd sees the handler"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "x/p:1"' >"$D/nonl.toml"
gen nonl
is "$(dumpkey nonl 'c["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"], c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]')" \
  "x/p:1 io.containerd.iobatch.v2" "no final newline: both the admin's key and the handler"

# ---- version 3 (containerd 2.x): checked with tomllib (no 2.x here)
cat >"$D/v3.toml" <<'EOF'
version = 3
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "runc"
EOF
gen v3 CONTAINERD=/nonexistent
is "$RC" 0 "v3 (no containerd to check with): exit 0"
python3 - "$D/out/v3.toml" >"$D/v3.py" 2>&1 <<'PY'
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
assert c["version"] == 3
rt = c["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]
assert rt["default_runtime_name"] == "runc"
r = rt["runtimes"]["iobatch"]
assert r["runtime_type"] == "io.containerd.iobatch.v2", r
assert r["pod_annotations"] == ["io.iobatch.*"] and r["container_annotations"] == ["io.iobatch.*"], r
assert r["options"]["ConfigPath"] == "/etc/iobatch/runtime-options.toml", r
assert c["plugins"]["io.containerd.cri.v1.images"]["snapshotter"] == "overlayfs"
PY
is "$?" 0 "v3: the handler under io.containerd.cri.v1.runtime, the admin's keys kept" || sed 's/^/# /' "$D/v3.py"
out=$("$GEN" "$D/v3.toml" "$D/out/v3b.toml" 2>&1)
like "$?:$out" "^0:.*config version 3, which this containerd reads as version 2 .*used unchanged" \
  "v3 with containerd 1.6 (it reads it as version 2, without the v3 tables): used unchanged"

# ---- used unchanged, with a reason
cat >"$D/has.toml" <<'EOF'
version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch]
  runtime_type = "io.containerd.iobatch.v2"
EOF
gen has
ok "a config that defines runtimes.iobatch: used unchanged" unchanged has
like "$RC:$MSG" "^0:.*already defines a runtime named iobatch: used unchanged" "and the line says why"
cat >"$D/bad.toml" <<'EOF'
version = 2
[plugins."io.containerd.grpc.v1.cri"
  sandbox_image = = "x"
EOF
gen bad
ok "malformed TOML: used unchanged" unchanged bad
like "$RC:$MSG" "^0:.*containerd cannot load '$D/bad.toml' .*used unchanged" "and the line says containerd cannot load it"
printf 'version = 9\n' >"$D/v9.toml"
gen v9 CONTAINERD=/nonexistent
like "$RC:$MSG" "^0:.*config version '9', which this script does not know: used unchanged" "an unknown version: used unchanged"
ok "and the file is the admin's" unchanged v9
# The CRI table as an inline table: a table cannot be added to its text,
# but containerd's view of it takes one.
cat >"$D/inline.toml" <<'EOF'
version = 2
[plugins]
  "io.containerd.grpc.v1.cri" = { sandbox_image = "x/p:1" }
EOF
gen inline
is "$(dumpkey inline 'c["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"], c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]')" \
  "x/p:1 io.containerd.iobatch.v2" "an inline CRI table: the handler is added to containerd's view of it"
printf 'version = 2\nimports = ["%s"]\n' "$D/imported.toml" >"$D/imports.toml"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch]\n  runtime_type = "x"\n' >"$D/imported.toml"
gen imports
ok "a config that imports a file defining runtimes.iobatch: used unchanged" unchanged imports
like "$RC:$MSG" "^0:.*with what it imports\) already defines a runtime named iobatch" "and the line says so"
out=$("$GEN" "$D/debian.toml" "$D/debian.toml/x/out.toml" 2>&1)
like "$?:$out" "^1:.*cannot create '$D/debian.toml/x'" "an OUT it cannot write: exit 1 naming it"
tap_done
