#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/containerd/containerd-start, the .deb drop-in's ExecStart: it
# runs the ExecStart in force without the drop-in (the unit file and the
# admin's drop-ins, as `systemctl show -p FragmentPath -p DropInPaths`
# lists them) on the generated configuration: an admin override with flags
# of its own, its own --config and a containerd in /usr/local/bin keeps all
# three.  Anything it cannot handle (an ExecStart with quotes, no unit to
# read, a configuration it cannot write, a config that defines iobatch
# already) starts containerd as the unit says, with one line saying why.
# systemctl is a stub answering from files; the containerd the unit names
# is a stub that records how it was started and hands `config dump` to
# Debian's containerd (the generator's check).
# Then containerd-setup, the postinst's choice between that drop-in and a
# conf.d one, by the version of the unit's containerd
# (containerd-start --print-command): 1.7 the unit drop-in; 2.x with a
# config importing conf.d the conf.d drop-in alone; remove takes either
# away, and the directories it made.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 21
iob_need containerd python3
START=$IOB_TOP/packaging/containerd/containerd-start
GEN=$IOB_TOP/packaging/containerd/containerd-config
DROPIN=$IOB_TOP/packaging/containerd/containerd.service.d/zz-iobatch.conf
[ -x "$START" ] || bail "$START is not executable"
D=$IOB_T/cs
mkdir -p "$D/usr/local/bin" "$D/usr/bin" "$D/unit" "$D/run"
for b in usr/local/bin usr/bin; do
  cat >"$D/$b/containerd" <<STUB
#!/bin/sh
case "\$*" in *" config dump") exec /usr/bin/containerd "\$@" ;; esac
[ "\$*" = --version ] && { echo "containerd github.com/containerd/containerd \${FAKE_VERSION:-1.6.20~ds1} x"; exit 0; }
echo "\$0\${1:+ \$*}" >"$D/ran"
STUB
  chmod +x "$D/$b/containerd"
done
cat >"$D/systemctl" <<'STUB'
#!/bin/sh
[ -z "${FAKE_NO_UNIT:-}" ] || exit 1
case "$*" in
  "show -p FragmentPath --value containerd.service") echo "$FAKE_FRAGMENT" ;;
  "show -p DropInPaths --value containerd.service") echo "$FAKE_DROPINS" ;;
  *) exit 1 ;;
esac
STUB
chmod +x "$D/systemctl"
# Debian's unit, the admin's override (systemctl edit), iobatch's drop-in.
printf '[Unit]\nDescription=containerd\n\n[Service]\nExecStartPre=-/sbin/modprobe overlay\nExecStart=%s\nType=notify\n' \
  "$D/usr/bin/containerd" >"$D/unit/containerd.service"
printf '[Service]\nExecStart=\nExecStart=%s --log-level debug --config %s\n' \
  "$D/usr/local/bin/containerd" "$D/admin.toml" >"$D/unit/override.conf"
cp "$DROPIN" "$D/unit/zz-iobatch.conf"
printf 'version = 2\n\n[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n' >"$D/admin.toml"
OUT=$D/run/iobatch-containerd/config.toml

# start [env...]: run the starter; RAN is how containerd was started, MSG
# its standard error.
start() {
  rm -f "$D/ran"
  MSG=$(env SYSTEMCTL="$D/systemctl" IOBATCH_CONTAINERD_CONFIG="$GEN" IOBATCH_CONTAINERD_OUT="$OUT" \
    CONTAINERD_FALLBACK="$D/usr/bin/containerd" FAKE_FRAGMENT="$D/unit/containerd.service" \
    FAKE_DROPINS="$D/unit/override.conf $D/unit/zz-iobatch.conf" "$@" "$START" 2>&1)
  RAN=$(cat "$D/ran" 2>/dev/null)
}
key() { python3 -c 'import sys, tomllib; c = tomllib.load(open(sys.argv[1], "rb")); print('"$2"')' "$1" 2>&1; }

is "$(grep -c '/usr/bin/containerd' "$DROPIN")" "0" "the drop-in names no containerd binary"
ok "and no ExecStartPre (a failure there would keep containerd down)" bash -c "! grep -q '^ExecStartPre' '$DROPIN'"

start
is "$RAN" "$D/usr/local/bin/containerd --config $OUT --log-level debug" \
  "admin override: its containerd in /usr/local/bin, its flags, on the generated config"
is "$(key "$OUT" 'c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]')" \
  "io.containerd.iobatch.v2" "the generated config has the handler"
is "$(key "$OUT" 'c["plugins"]["io.containerd.grpc.v1.cri"]["restrict_oom_score_adj"]')" "True" \
  "built from the admin's --config, not /etc/containerd/config.toml"

start FAKE_DROPINS="$D/unit/zz-iobatch.conf"
is "$RAN" "$D/usr/bin/containerd --config $OUT" "no override: the unit file's own ExecStart"

printf '[Service]\nExecStart=\nExecStart=%s -c=%s\n' "$D/usr/local/bin/containerd" "$D/admin.toml" >"$D/unit/override.conf"
start
is "$RAN" "$D/usr/local/bin/containerd --config $OUT" "-c=FILE is the admin's config too, replaced"

# fail open
mkdir -p "$D/ro" && : >"$D/ro/run"
start IOBATCH_CONTAINERD_OUT="$D/ro/run/config.toml"
is "$RAN" "$D/usr/local/bin/containerd -c=$D/admin.toml" "cannot write the config: containerd starts as the unit says"
like "$MSG" "cannot write '$D/ro/run/config.toml': containerd starts on '$D/admin.toml' as the unit says" "with one line saying why"

printf '[Service]\nExecStart=\nExecStart=%s --log-level "debug"\n' "$D/usr/local/bin/containerd" >"$D/unit/override.conf"
start
is "$RAN" "$D/usr/bin/containerd" "an ExecStart with quotes: containerd starts, on its own configuration"
like "$MSG" "cannot parse containerd.service's ExecStart" "with one line saying why"

printf '[Service]\nExecStart=%s\n' "$D/usr/local/bin/containerd" >"$D/unit/override.conf"
start
is "$RAN" "$D/usr/bin/containerd" "two ExecStart commands: containerd starts, on its own configuration"

start FAKE_NO_UNIT=1
is "$RAN" "$D/usr/bin/containerd" "no unit to read: containerd starts, on its own configuration"
like "$MSG" "cannot find containerd.service's unit file" "with one line saying why"

printf '[Service]\nExecStart=\nExecStart=%s --config %s\n' "$D/usr/local/bin/containerd" "$D/has.toml" >"$D/unit/override.conf"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch]\n  runtime_type = "io.containerd.runc.v2"\n' >"$D/has.toml"
start
is "$RAN" "$D/usr/local/bin/containerd --config $D/has.toml" "a config that defines iobatch: the admin's own file, as the unit says"
like "$MSG" "already defines a runtime named iobatch" "with the generator's line saying why"

# ---- containerd-setup
SETUP=$IOB_TOP/packaging/containerd/containerd-setup
printf '[Service]\nExecStart=\nExecStart=%s --config %s\n' "$D/usr/local/bin/containerd" "$D/admin.toml" >"$D/unit/override.conf"
setup() { # setup install|remove [env...]: MSG its output
  local m=$1
  shift
  MSG=$(env SYSTEMCTL="$D/systemctl" FAKE_FRAGMENT="$D/unit/containerd.service" \
    FAKE_DROPINS="$D/unit/override.conf" IOBATCH_CONTAINERD_START="$START" IOBATCH_DROPIN_TEMPLATE="$DROPIN" \
    IOBATCH_UNITDIR="$D/lib" IOBATCH_CONFD="$D/conf.d" IOBATCH_STATE_DIR="$D/state" "$@" "$SETUP" "$m" 2>&1)
}
is "$(env SYSTEMCTL="$D/systemctl" FAKE_FRAGMENT="$D/unit/containerd.service" FAKE_DROPINS="$D/unit/override.conf" \
  "$START" --print-command | paste -sd' ')" "$D/usr/local/bin/containerd $D/admin.toml" \
  "containerd-start --print-command: the unit's containerd and its config"
setup install FAKE_VERSION=1.7.24~ds1
is "$(cmp -s "$DROPIN" "$D/lib/containerd.service.d/zz-iobatch.conf" && echo dropin):$(ls -A "$D/conf.d" 2>&1 | wc -l)" \
  "dropin:1" "setup, containerd 1.7: the unit drop-in, no conf.d"
like "$MSG" "containerd 1.7.24 \($D/usr/local/bin/containerd, '$D/admin.toml'\): the handler is added by the unit drop-in" \
  "and one line says so, naming the unit's containerd"
sed -i "1i imports = [\"$D/conf.d/*.toml\"]" "$D/admin.toml"
setup install FAKE_VERSION=2.1.9~ds1
is "$([ -e "$D/lib/containerd.service.d" ] && echo dropin):$(key "$D/conf.d/iobatch.toml" '[c["version"], c["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["iobatch"]["runtime_type"]]')" \
  ":[2, 'io.containerd.iobatch.v2']" \
  "setup, containerd 2.x importing conf.d: conf.d/iobatch.toml in the config's version 2, the unit drop-in and its directory gone"
setup remove
ok "setup remove: conf.d (which it made) and its marks gone" test ! -e "$D/conf.d" -a -z "$(ls -A "$D/state")"
tap_done
