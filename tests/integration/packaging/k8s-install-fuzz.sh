#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/kubernetes/install.sh's edit of config.toml, as a property over
# generated inputs: install then uninstall gives back the bytes exactly,
# whatever install did (edited, left alone, refused).  The inputs are
# TOML-ish, from a seeded generator (FUZZ_SEED, FUZZ_N): version lines,
# imports arrays on one line or several, with trailing commas and
# comments, tables, the installer's own marker lines alone or look-alikes,
# CRLF or mixed line ends, no final newline, empty files; half for
# containerd 1.7 (the block), half for 2.1 (the import).  And where an
# input is TOML (python's tomllib) and install edited it, the result is
# TOML too and carries the handler.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 4
iob_need python3

SEED=${FUZZ_SEED:-3203}
N=${FUZZ_N:-200}
INSTALL=$IOB_TOP/packaging/kubernetes/install.sh
SRC=$IOB_T/src PROC=$IOB_T/proc R=$IOB_T/root
mkdir -p "$SRC/bin" "$PROC" "$IOB_T/in" "$IOB_T/mid" "$IOB_T/bin"
echo "btime 0" >"$PROC/stat"
printf '#!/bin/sh\n' >"$SRC/bin/containerd-shim-iobatch-v2"
chmod 755 "$SRC/bin/containerd-shim-iobatch-v2"

python3 - "$SEED" "$N" "$IOB_T/in" <<'PY'
import random, sys
seed, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(seed)
BEGIN = "# BEGIN iobatch (install.sh; 'install.sh uninstall' removes this block)"
ENDS = ["# END iobatch", "# END iobatch (the line above this block ended the file, without a newline)"]
top = [["version = 2"], ["version = 3"], ["version=2"], ["root = \"/var/lib/containerd\""],
       ["oom_score = -999"], ["# a comment"], ["  # indented, with a tab\tinside"], [""], ["   "],
       ["imports = [\"/etc/containerd/site.toml\"]"], ["imports = []"], ["imports = [ ]"],
       ["imports=[ \"/a.toml\" ,]  # site [x]"], ["imports = ['/etc/containerd/lit.toml']"],
       ["imports = [", "  \"/etc/containerd/b.toml\",", "  # a comment in the array", "]"],
       ["imports = [\"/etc/containerd/conf.d/*.toml\"]"], ["name = \"h\u00e9llo \u2713\""],
       ["disabled_plugins = [\"io.containerd.internal.v1.tracing\"]"], ["x = 1  # added by iobatch"]]
tables = [["[grpc]", "  address = \"/run/containerd/containerd.sock\""], ["[debug]", "\tlevel\t=\t\"info\""],
          ["[plugins.\"io.containerd.grpc.v1.cri\".cni]", "  bin_dir = \"/usr/lib/cni\""],
          ["[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]", "  runtime_type = \"io.containerd.runc.v2\""],
          ["[plugins.\"io.containerd.cri.v1.images\"]", "  snapshotter = \"overlayfs\""],
          ["[[proxy_plugins_list]]", "  name = \"a\"", "  imports = [\"/not/top/level.toml\"]"],
          ["[plugins.\"io.containerd.internal.v1.opt\"]", "  path = \"/var/lib/containerd/opt\"", ""]]
looks = ["#  BEGIN iobatch", "# BEGIN iobatch", "# END iobatch ", "#END iobatch", BEGIN + " ", "# added by iobatch"]
for i in range(n):
    lines = []
    if rnd.random() >= 0.05:
        for t in rnd.sample(top, rnd.randint(0, 4)):
            lines += t
        for t in rnd.sample(tables, rnd.randint(0, 4)):
            lines += t
        for _ in range(rnd.randint(0, 2)):
            lines.insert(rnd.randint(0, len(lines)), rnd.choice(looks))
        r = rnd.random()  # at most one of the exact markers: a pair would be a block
        if r < 0.1:
            lines.insert(rnd.randint(0, len(lines)), BEGIN)
        elif r < 0.2:
            lines.insert(rnd.randint(0, len(lines)), rnd.choice(ENDS))
        if rnd.random() < 0.1:
            rnd.shuffle(lines)
    r = rnd.random()
    ends = ["\r\n" if (r < 0.25 or (r < 0.4 and rnd.random() < 0.5)) else "\n" for _ in lines]
    if lines and rnd.random() < 0.3:
        ends[-1] = rnd.choice(["", "", "\r"])
    with open(f"{out}/{i}", "wb") as f:
        f.write("".join(l + e for l, e in zip(lines, ends)).encode())
PY

# The installer's edits, sourced (v1_edit, v2_edit, strip_ours: FILE to
# FILE, in this process), on every input; the whole installer, install
# then uninstall, on every FUZZ_FULL-th (starting a process costs).  A
# refusal is the installer's exit: each edit runs in a subshell with -e,
# its own setting; the checks here run without it.
export HOST_ROOT=$R IOBATCH_SRC=$SRC PROC HOST_EXEC=env SYSTEMCTL=systemctl
# shellcheck source=packaging/kubernetes/install.sh
. "$INSTALL"
set +e +o pipefail
FULL=${FUZZ_FULL:-20}
printf '#!/bin/sh\ncase "$1" in --version) echo "containerd github.com/containerd/containerd v$FUZZ_CTRD";; esac\n' >"$IOB_T/bin/containerd"
printf '#!/bin/sh\n[ "$1" != show ] || echo MainPID=0\n' >"$IOB_T/bin/systemctl"
printf '#!/bin/sh\n' >"$IOB_T/bin/kubectl"
chmod 755 "$IOB_T"/bin/*
full() { # MODE VERSION
  env PATH="$IOB_T/bin:$PATH" NODE_NAME="" FUZZ_CTRD="$2" "$INSTALL" "$1" 2>>"$IOB_T/install.log"
}
bad="" edited=0 fulls=0
for ((i = 0; i < N; i++)); do
  in=$IOB_T/in/$i
  v=1.7.0 edit=v1_edit
  [ $((i % 2)) = 0 ] || v=2.1.0 edit=v2_edit
  echo "---- $i ($v)" >>"$IOB_T/install.log"
  (set -e; "$edit" "$in" "$IOB_T/mid/$i-$v") 2>>"$IOB_T/install.log"
  if [ $? = 0 ]; then
    edited=$((edited + 1))
    (set -e; strip_ours "$IOB_T/mid/$i-$v" "$IOB_T/out") 2>>"$IOB_T/install.log"
  else
    rm -f "$IOB_T/mid/$i-$v"
    (set -e; strip_ours "$in" "$IOB_T/out") 2>>"$IOB_T/install.log"
  fi
  cmp -s "$in" "$IOB_T/out" || { bad="$bad $i"; cp "$IOB_T/out" "$IOB_T/after-$i"; }
  [ $((i % FULL)) = 0 ] || continue
  fulls=$((fulls + 1))
  rm -rf "$R"
  mkdir -p "$R/etc/containerd"
  cp "$in" "$R/etc/containerd/config.toml"
  full install "$v"
  full uninstall "$v"
  cmp -s "$in" "$R/etc/containerd/config.toml" || { bad="$bad $i(full)"; cp "$R/etc/containerd/config.toml" "$IOB_T/after-$i(full)"; }
done
is "${bad# }" "" "$N inputs (seed $SEED; $fulls through the whole installer): install then uninstall gives the bytes back"
for i in ${bad:-}; do
  diag "input $i:"; od -c "$IOB_T/in/${i%(full)}" | head -8 | sed 's/^/#   /'
  diag "after:"; od -c "$IOB_T/after-$i" 2>&1 | head -8 | sed 's/^/#   /'
done
ok "and install edited some of them ($edited)" test "$edited" -ge $((N / 4))

out=$(python3 - "$IOB_T/in" "$IOB_T/mid" <<'PY'
import os, sys, tomllib
ins, mid = sys.argv[1], sys.argv[2]
unparsed, nohandler, checked = [], [], 0
for name in sorted(os.listdir(mid)):
    i, v = name.split("-")
    try:
        tomllib.loads(open(f"{ins}/{i}", "rb").read().decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        continue  # not TOML before: the node's containerd refuses it, not our edit
    checked += 1
    try:
        c = tomllib.loads(open(f"{mid}/{name}", "rb").read().decode())
    except tomllib.TOMLDecodeError as e:
        unparsed.append(f"{name}: {e}")
        continue
    if v.startswith("1."):
        ok = "iobatch" in c.get("plugins", {}).get("io.containerd.grpc.v1.cri", {}).get("containerd", {}).get("runtimes", {})
    else:
        ok = "/etc/containerd/conf.d/iobatch.toml" in c.get("imports", [])
    if not ok:
        nohandler.append(name)
print(checked)
print(" ".join(unparsed))
print(" ".join(nohandler))
PY
)
mapfile -t res <<<"$out"
is "${res[1]:-}" "" "the ${res[0]:-0} edited inputs that were TOML are TOML after install"
is "${res[2]:-}" "" "and they carry the handler (1.7: runtimes.iobatch; 2.1: the drop-in imported)"

[ "$_tap_failed" -eq 0 ] || tail -40 "$IOB_T/install.log" | sed 's/^/# install.sh: /'
tap_done
