#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shim suites again with crun as the runtime binary (binary_name), given
# the way containerd's CRI plugin and `ctr --runtime-config-path` give it: a
# runtimeoptions ConfigPath naming a TOML file of runc options.
#
# crun refuses cgroup v1/v2 hybrid hosts ("cgroups in hybrid mode not
# supported"); there the suite is skipped (see README, "Using the shim") and
# runs in the cgroup v2 VM instead.
dir=$(cd "$(dirname "$0")" && pwd)
source "$dir/../lib/common.sh"

suites=(shim-run shim-task shim-tty shim-restart)
if ! command -v crun >/dev/null; then
  echo "1..1"; echo "not ok 1 - crun is not installed"; exit 1
fi
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] &&
  [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
  echo "1..1"
  skip "shim suites with crun" "crun 1.8 refuses cgroup v1/v2 hybrid hosts (cgroups in hybrid mode not supported); run in the cgroup v2 VM"
  exit 0
fi

cfg=$IOB_T/crun.toml
cat >"$cfg" <<TOML
# runc options for io.containerd.iobatch.v2
BinaryName = "crun"
Root = "$IOB_T/crun-root"
TOML

n=0 failed=0
for t in "${suites[@]}"; do
  out=$IOB_T/$t.out
  SHIM_RUNOPTS="--runtime-config-path $cfg" bash "$dir/$t.sh" >"$out" 2>&1
  rc=$?
  bad=0
  while IFS= read -r line; do
    case "$line" in
    "ok "* | "not ok "*)
      n=$((n + 1))
      st=ok
      [[ "$line" == "not ok "* ]] && { st="not ok"; bad=1; }
      echo "$st $n - crun/$t: ${line#* - }"
      ;;
    1..*) ;;
    *) echo "# $line" ;;
    esac
  done <"$out"
  if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
    n=$((n + 1)); echo "not ok $n - crun/$t exited with status $rc"
  fi
  # crun kept its state under our root: it really was crun.
  [ "$bad" -eq 0 ] && [ "$rc" -eq 0 ] || failed=1
done
n=$((n + 1))
if [ -d "$IOB_T/crun-root" ]; then echo "ok $n - crun's state dir was used"; else echo "not ok $n - crun's state dir was used"; failed=1; fi
echo "1..$n"
[ "$failed" -eq 0 ]
