#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every tool a test, a benchmark or the demo asks for comes from a package
# that scripts/install-deps.sh installs: named in its PKGS, pulled in by
# one of them (Depends, Pre-Depends), or on every Debian system (Essential
# or of priority required).  A tool that is only
# on the machine by chance passes `iob_need` here and fails on a fresh one,
# so a green run here would hide it: this check finds it first.
#
# The tools are read by tests/deps-check.py from the scripts under tests/
# and bench/ (the demo is tests/demo.sh).  Each must be installed
# (this runs after install-deps.sh) and its file owned by an allowed
# package (dpkg -S).
#
# DEPS_SCRIPT=FILE checks against another install-deps.sh, DEPS_TOOLS="A B"
# only those tools.  The last check runs itself on a copy without socat and
# must fail, so the check is known to be able to fail.
cd "$(dirname "$0")/.." || exit 1
DEPS_SCRIPT=${DEPS_SCRIPT:-scripts/install-deps.sh}

# own_programs: what the Makefile builds into bin/ (PROGRAMS in module.mk)
own_programs() { sed -n 's,^PROGRAMS += bin/,,p' ./*/module.mk; }
tools() { own_programs | python3 tests/deps-check.py tests bench; }

# The packages install-deps.sh puts on the machine.
allowed() {
  local PKGS=()
  eval "$(sed -n '/^PKGS=(/,/^)/p' "$DEPS_SCRIPT")"
  [ ${#PKGS[@]} -gt 0 ] || { echo "deps-check: no PKGS=( ) list in '$DEPS_SCRIPT'" >&2; return 1; }
  {
    printf '%s\n' "${PKGS[@]}"
    apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances "${PKGS[@]}" 2>/dev/null |
      sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \([^<> ]*\)$/\2/p; s/^\([a-z0-9][^ ]*\)$/\1/p'
    # Essential, or of priority required: on every Debian system (what
    # debootstrap and mmdebstrap's minbase install)
    dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' | awk '$2 == "yes" || $3 == "required" { print $1 }'
  } | sed 's/:.*//' | sort -u
}

if [ -n "${DEPS_TOOLS:-}" ]; then read -ra TOOLS <<<"$DEPS_TOOLS"; else mapfile -t TOOLS < <(tools); fi
# Looked up where Debian's packages put them: a tool found first in
# /usr/local or a user's PATH (pyenv, say) is not what a fresh machine has.
SYSPATH=/usr/sbin:/usr/bin:/sbin:/bin
ALLOWED=$(allowed) || exit 1
self_test=0
[ "${DEPS_SELF_TEST:-1}" = 1 ] && self_test=1
# candidates PATH: the names dpkg may know it by (links, /usr-merge)
candidates() {
  local c
  for c in "$1" "$(readlink -f "$1")"; do printf '%s\n' "$c" "${c#/usr}" "/usr$c"; done
}
declare -A OWNER=()
for t in "${TOOLS[@]}"; do
  path=$(PATH=$SYSPATH command -v "$t") && [ "${path#/}" != "$path" ] && candidates "$path"
done | sort -u >"${TMPDIR:-/tmp}/deps-check.$$"
# One dpkg -S for all (0.3 s a call): "pkg[:arch][, pkg2]: /path"
while IFS= read -r line; do
  p=${line#*: } pkg=${line%%: *}
  pkg=${pkg%%,*}
  OWNER[$p]=${pkg%%:*}
done < <(xargs -r dpkg -S <"${TMPDIR:-/tmp}/deps-check.$$" 2>/dev/null | grep -v '^diversion ')
rm -f "${TMPDIR:-/tmp}/deps-check.$$"
# owner PATH: the package that ships PATH
owner() {
  local c
  while IFS= read -r c; do
    [ -n "${OWNER[$c]:-}" ] && { echo "${OWNER[$c]}"; return 0; }
  done < <(candidates "$1")
  return 1
}

echo "1..$((${#TOOLS[@]} + self_test))"
n=0 bad=0
for t in "${TOOLS[@]}"; do
  n=$((n + 1))
  if ! path=$(PATH=$SYSPATH command -v "$t"); then
    echo "not ok $n - $t: not installed; add the package that provides it to $DEPS_SCRIPT"
    bad=1
    continue
  fi
  case $path in /*) ;; *)
    echo "ok $n - $t: a shell builtin"
    continue
    ;;
  esac
  if ! pkg=$(owner "$path"); then
    echo "not ok $n - $t: '$path' belongs to no Debian package (installed by hand?)"
    bad=1
  elif grep -qxF "$pkg" <<<"$ALLOWED"; then
    echo "ok $n - $t: $pkg"
  else
    echo "not ok $n - $t: its package '$pkg' is not installed by $DEPS_SCRIPT"
    bad=1
  fi
done
if [ "$self_test" = 1 ]; then
  n=$((n + 1))
  tmp=$(mktemp)
  sed '/^PKGS=(/,/^)/s/\bsocat\b//' scripts/install-deps.sh >"$tmp"
  if DEPS_SCRIPT=$tmp DEPS_SELF_TEST=0 DEPS_TOOLS=socat "$0" | grep -q '^not ok .* socat: '; then
    echo "ok $n - without socat in install-deps.sh this check fails"
  else
    echo "not ok $n - this check still passes with socat taken out of install-deps.sh"
    bad=1
  fi
  rm -f "$tmp"
fi
exit "$bad"
