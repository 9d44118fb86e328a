#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch node installer (the DaemonSet's init container, iobatch-deploy.yaml;
# the pattern of kata-deploy).  Modes:
#   install.sh install    copy the binaries to the host, register the runtime
#                         handler "iobatch" with containerd, label the node
#   install.sh uninstall  take the label off, then undo the rest
#                         (iobatch-cleanup.yaml); a no-op on a node that has
#                         none of iobatch's files
# Environment:
#   HOST_ROOT=/host             where the host's / is mounted
#   IOBATCH_SRC=/opt/iobatch    what to copy: bin/ (and lib/ if present)
#   NODE_NAME                   the node to label (downward API); empty: no label
#   NODE_LABEL=iobatch.io/runtime   set to "true" (the RuntimeClass selects on it)
#   RESTART_CONTAINERD=false    true: restart containerd when its config changed
#   CONTAINERD_VERSION          e.g. 1.7.2; default: asked of the node's own
#                               containerd (`containerd --version` of the
#                               running process's binary, through HOST_EXEC)
#   HOST_EXEC                   how to run a host binary (default: nsenter
#                               into PID 1's mount namespace; needs hostPID)
#   SYSTEMCTL                   how to reach the host's systemd (default:
#                               HOST_EXEC systemctl)
#   PROC=/proc                  the host's /proc (the pod has hostPID)
#   KEEP_STATE=false            uninstall: true keeps the agent's state
#                               (/var/lib/iobatch: learned profiles, penalties)
# Uninstall first puts back what the agent's restore journal holds
# (`iobatchd --restore-only` on the host); a journal it could not empty
# stays, with /opt/iobatch, and uninstall exits 1 saying so.
# Paths on the host are resolved as the host resolves them: a link's
# absolute target is the host's, so it is read under HOST_ROOT; a link
# that climbs above the host's / or loops is refused.  A file the installer
# edits is edited where its links lead, keeps its mode and its owner, and
# a link stays a link.  An edited containerd configuration is loaded by the
# node's containerd (`config dump`) before it replaces the live one.
# containerd's process is containerd.service's MainPID, else the one that
# listens on /run/containerd/containerd.sock in PID 1's mount namespace;
# never a process found by its name, which any tenant can choose.
#
# Idempotent: a second run changes nothing and restarts nothing.  The node
# is labelled only once containerd runs with the handler: restarted here,
# or started after its configuration last changed; else the log says to
# restart containerd, and the next run (a pod restart) labels it.  The
# label is the one call to the API server (kubectl, the pod's service
# account); when none answers, the log says so and the install goes on
# (the RuntimeClass then finds no node: nothing is scheduled there).
#
# Safe uninstall: a config.toml the installer created is deleted only when
# it still is, byte for byte, what the installer wrote (its sha256 is kept
# in CREATED_MARK); one the admin changed since, like one that existed
# before, loses only the installer's lines and stays.  The drop-in goes
# only when it is the installer's own text.
#
# containerd: 2.x merges an imported file into config.toml, so the handler
# goes into /etc/containerd/conf.d/iobatch.toml, in config.toml's config
# version (2 or 3: dropin, says why), and config.toml imports it (containerd >= 2.2
# imports conf.d only when config.toml says so, as the one `containerd
# config default` writes does).  1.6/1.7 let an imported file
# replace config.toml's whole CRI table, so there the handler is appended to
# config.toml itself between two marker lines (kata-deploy edits config.toml
# for containerd < 2.0 too).  Every edit has an exact inverse, so that
# uninstall gives back the bytes that were there: the block is whole lines
# after the last one (a file without a final newline gets one, and the END
# line says so); our drop-in goes first in an imports array ('"...", '
# right after its "[", a trailing comma being valid TOML), or a line of its
# own at the top of the file.
set -euo pipefail

HOST_ROOT=${HOST_ROOT:-/host}
IOBATCH_SRC=${IOBATCH_SRC:-/opt/iobatch}
NODE_NAME=${NODE_NAME:-}
NODE_LABEL=${NODE_LABEL:-iobatch.io/runtime}
RESTART_CONTAINERD=${RESTART_CONTAINERD:-false}
HOST_EXEC=${HOST_EXEC:-nsenter --target 1 --mount --}
SYSTEMCTL=${SYSTEMCTL:-$HOST_EXEC systemctl}
PROC=${PROC:-/proc}
KEEP_STATE=${KEEP_STATE:-false}

DEST=/opt/iobatch            # on the host
SHIM=containerd-shim-iobatch-v2
SHIM_LINK=/usr/local/bin/$SHIM
CONF=/etc/containerd/config.toml
DROPIN=/etc/containerd/conf.d/iobatch.toml
OPTIONS=/etc/iobatch/runtime-options.toml
# The sha256 of the config.toml the installer created (none: it existed).
CREATED_MARK=/etc/containerd/.config.toml.created-by-iobatch
CONFD_MARK=.created-by-iobatch # in conf.d/: the installer made the directory
RUN_DIR=/run/iobatch         # the agent's socket directory: root's, 0700
STATE_DIR=/var/lib/iobatch   # the agent's state_dir (iobatch-deploy.yaml)
STATE_FILES="profiles.json penalties.json restore.json iobatchd.lock"
BEGIN_MARK="# BEGIN iobatch (install.sh; 'install.sh uninstall' removes this block)"
END_MARK="# END iobatch"
END_MARK_NOEOL="# END iobatch (the line above this block ended the file, without a newline)"
IMPORT_TAG="# added by iobatch"
IMPORT_LINE="imports = [\"$DROPIN\"]  $IMPORT_TAG"
CTRD_SOCK=/run/containerd/containerd.sock
SYMLOOP_MAX=40 # the kernel's limit on links followed in one lookup

changed=0      # anything written
conf_changed=0 # containerd's configuration written
restarted=0
log() { echo "iobatch-install: $*" >&2; }
die() { log "$*"; exit 1; }

# real PATH: the host's PATH with every link in it followed as the host
# follows it, in REPLY (a host path).  The host's / is HOST_ROOT here, so an
# absolute target is looked up under it; ".." above the host's / and loops
# are refused, naming PATH.  No subshell: the refusal ends the installer.
real() {
  local want=$1 got="" rest=${1#/} comp link hops=0
  while [ -n "$rest" ]; do
    comp=${rest%%/*}
    if [ "$comp" = "$rest" ]; then rest=""; else rest=${rest#*/}; fi
    case $comp in
      "" | .) continue ;;
      ..)
        [ -n "$got" ] || die "cannot resolve '$want': a link in it leaves the host's root (${link:-..})"
        got=${got%/*}
        continue ;;
    esac
    if [ -L "$HOST_ROOT$got/$comp" ]; then
      hops=$((hops + 1))
      [ "$hops" -le "$SYMLOOP_MAX" ] || die "cannot resolve '$want': its links loop ($got/$comp)"
      link=$(readlink "$HOST_ROOT$got/$comp")
      case $link in /*) got="" ;; esac
      rest=${link#/}${rest:+/$rest}
    else
      got=$got/$comp
    fi
  done
  REPLY=${got:-/}
}
# hr VAR PATH: VAR = where the host's PATH really is, under HOST_ROOT.
hr() {
  real "$2"
  printf -v "$1" '%s' "$HOST_ROOT$REPLY"
}
# hr_link VAR PATH: the same for PATH's directory only; PATH itself may be
# a link, one of ours (the shim's) or one to keep.
hr_link() {
  real "$(dirname "$2")"
  printf -v "$1" '%s' "$HOST_ROOT${REPLY%/}/$(basename "$2")"
}
is_link() {
  local _l
  hr_link _l "$1"
  [ -L "$_l" ]
}

# write_file SRC NAME REAL MODE OWNER [CHECK]: REAL (NAME resolved) gets
# SRC's bytes, MODE and OWNER (empty: ours), unless it has them already.
# Through a new file next to it renamed over it: atomic (a running shim
# keeps its inode, containerd never reads half a config).  CHECK, given,
# must accept the new file (its host path) before it replaces REAL.  cp +
# chmod: busybox, the image's userland, has no install(1).
write_file() {
  local src=$1 name=$2 dst=$3 mode=$4 owner=$5 check=${6:-} new=$3.iobatch-new cur
  if [ -e "$dst" ] && [ ! -f "$dst" ]; then die "cannot write '$name': '${dst#"$HOST_ROOT"}' is not a regular file"; fi
  if [ -f "$dst" ] && cmp -s "$src" "$dst"; then
    cur=$(stat -c '%a %u:%g' "$dst")
    if [ "${cur% *}" = "$mode" ] && { [ -z "$owner" ] || [ "${cur#* }" = "$owner" ]; }; then return 0; fi
  fi
  [ -d "${dst%/*}" ] || mkdir -p "${dst%/*}"
  if [ -e "$new" ] || [ -L "$new" ]; then rm -f "$new"; fi
  cp "$src" "$new"
  [ -z "$owner" ] || chown "$owner" "$new"
  chmod "$mode" "$new" # after chown, which clears the set-id bits
  if [ -n "$check" ] && ! "$check" "${new#"$HOST_ROOT"}"; then
    rm -f "$new"
    die "not writing '$name': the node's containerd cannot load it (left as it was)"
  fi
  mv -f "$new" "$dst"
  if [ "${dst#"$HOST_ROOT"}" = "$name" ]; then log "wrote $name"; else log "wrote $name (at ${dst#"$HOST_ROOT"})"; fi
  changed=1
}
# put SRC DST MODE: the installer's own files (binaries): MODE, root's.
put() {
  local r
  hr r "$2"
  write_file "$1" "$2" "$r" "$3" ""
}
# edit SRC DST [CHECK]: a file that may be the admin's too keeps the mode
# and owner it has (a new one: 0644, root's).
edit() {
  local r mode=644 owner="" cur
  hr r "$2"
  if [ -e "$r" ]; then
    cur=$(stat -c '%a %u:%g' "$r")
    mode=${cur% *} owner=${cur#* }
  fi
  write_file "$1" "$2" "$r" "$mode" "$owner" "${3:-}"
}
# write_text DST [CHECK] <<<text
write_text() {
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  edit "$tmp" "$1" "${2:-}"
  rm -f "$tmp"
}

# containerd_find: CTRD_PID, the node's containerd ("" if none found):
# containerd.service's MainPID, else the process that listens on its
# socket in PID 1's mount namespace (/proc/1/net/unix names the socket's
# inode, /proc/PID/fd the process holding it; a tenant's containerd, in
# docker-in-docker or kind, has a socket of that path too, but in its own
# mount namespace).  CTRD_EXE: its binary as the host names it, else
# "containerd" on the host's PATH.
CTRD_PID="" CTRD_EXE=""
containerd_find() {
  local pid ino mnt p
  pid=$($SYSTEMCTL show -p MainPID containerd.service 2>/dev/null | sed -n 's/^MainPID=//p') || pid=""
  if [ -n "$pid" ] && [ "$pid" != 0 ] && [ -d "$PROC/$pid" ]; then
    CTRD_PID=$pid
  else
    mnt=$(readlink "$PROC/1/ns/mnt" 2>/dev/null) || mnt=""
    # One ls for every process: with several directories (there are
    # always: PID 1's, the kernel threads') it heads each one "DIR/:".
    for ino in $(awk -v s="$CTRD_SOCK" '$8 == s { print $7 }' "$PROC/1/net/unix" 2>/dev/null); do
      for p in $(ls -l "$PROC"/[0-9]*/fd/ 2>/dev/null | awk -v want="-> socket:[$ino]" '
          /:$/ { n = split($0, a, "/"); pid = a[n - 2] }
          substr($0, length($0) - length(want) + 1) == want { print pid }' | sort -u); do
        if [ -n "$mnt" ] && [ "$(readlink "$PROC/$p/ns/mnt" 2>/dev/null)" = "$mnt" ]; then
          CTRD_PID=$p
          break 2
        fi
      done
    done
  fi
  if [ -z "$CTRD_PID" ]; then
    log "cannot find the node's containerd (no MainPID of containerd.service, nothing in the host's mount namespace listens on $CTRD_SOCK): taken as not running"
  fi
  CTRD_EXE=$(readlink "$PROC/$CTRD_PID/exe" 2>/dev/null) || CTRD_EXE=""
  [ -n "$CTRD_PID" ] || CTRD_EXE=""
  case $CTRD_EXE in */containerd) ;; *) CTRD_EXE=containerd ;; esac # not "... (deleted)"
}
# host_containerd ARGS...: the node's containerd binary, run on the host
host_containerd() {
  PATH=$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin $HOST_EXEC "$CTRD_EXE" "$@"
}

# containerd_check FILE: the node's containerd loads FILE (a host path),
# when that binary can be run at all (CTRD_RUNS; else said once).
CTRD_RUNS=""
containerd_check() {
  local out
  if [ -z "$CTRD_RUNS" ]; then
    if host_containerd --version >/dev/null 2>&1; then CTRD_RUNS=yes; else
      CTRD_RUNS=no
      log "cannot run the node's containerd ($CTRD_EXE through '$HOST_EXEC'): its configuration is written unchecked"
    fi
  fi
  [ "$CTRD_RUNS" = yes ] || return 0
  if ! out=$(host_containerd --config "$1" config dump 2>&1 >/dev/null); then
    log "$CTRD_EXE --config $1 config dump: ${out//$'\n'/ }"
    return 1
  fi
}

# The node's containerd version, from the node itself: `containerd
# --version` ("containerd github.com/containerd/containerd 1.6.20~ds1 ...",
# "containerd containerd.io v2.1.4 ...") of the running binary, else of the
# one on the host's PATH.
containerd_major() {
  local v=${CONTAINERD_VERSION:-} out w
  if [ -z "$v" ]; then
    out=$(host_containerd --version 2>&1) ||
      die "cannot run the node's containerd --version ($CTRD_EXE through '$HOST_EXEC'): $out; set CONTAINERD_VERSION"
    for w in $out; do
      if [[ "$w" =~ ^v?[0-9]+\.[0-9]+ ]]; then v=$w; break; fi
    done
    log "the node's containerd: $CTRD_EXE says '$out'"
  fi
  v=${v#containerd://}
  v=${v#v}
  [[ "$v" =~ ^[0-9]+\.[0-9]+ ]] || die "cannot tell the containerd version ('${v}'): set CONTAINERD_VERSION"
  echo "${v%%.*}"
}

# created: remember that the installer created config.toml, and what it wrote.
created() {
  local conf mark
  hr conf "$CONF"
  hr mark "$CREATED_MARK"
  sha256sum <"$conf" | cut -d' ' -f1 >"$mark"
}

# conf_version FILE: FILE's config version ("version = N" before the
# first table), or "none".
conf_version() {
  awk '/^[ \t]*\[/ { exit }
    /^[ \t]*version[ \t]*=/ { v = $0; sub(/^[^=]*=[ \t]*/, "", v); sub(/[ \t]*(#.*)?\r?$/, "", v); print v; found = 1; exit }
    END { if (!found) print "none" }' "$1"
}
# dropin VERSION: the drop-in's text in config version VERSION (2 or 3),
# which is config.toml's.  A version 3 drop-in imported by a version 2
# config.toml (Debian's own, up to its containerd 2.1) breaks that file:
# containerd 2.1 merges the two before migrating, the merged config is
# version 3, and config.toml's version 2 tables are ignored ("Ignoring
# unknown key"): on Debian unstable's 2.1.9 its sandbox_image,
# restrict_oom_score_adj and CNI bin_dir were gone.  Later 2.x refused such
# a drop-in (containerd PR 12891, "drop-in config version 3 higher than
# root config version 2"), then migrated each file before merging (PR
# 13939 reverted the refusal).  A drop-in in config.toml's version is
# migrated with it on each of them (tests/install/daemonset.sh).
dropin() {
  local t='plugins."io.containerd.cri.v1.runtime"'
  [ "$1" = 3 ] || t='plugins."io.containerd.grpc.v1.cri"'
  cat <<TOML
# Written by iobatch's install.sh: the CRI runtime handler "iobatch".
version = $1

[$t.containerd.runtimes.iobatch]
  runtime_type = "io.containerd.iobatch.v2"
  pod_annotations = ["io.iobatch.*"]
  container_annotations = ["io.iobatch.*"]
  [$t.containerd.runtimes.iobatch.options]
    ConfigPath = "/etc/iobatch/runtime-options.toml"
TOML
}

# block_v2 with-runc|"" END: containerd 1.6/1.7 decode a runtimes table over the
# built-in one, not into it: a config.toml that names no runtime of its own
# loses the default "runc" once it names "iobatch", and the CRI plugin then
# refuses to load ("no corresponding runtime configured in
# containerd.runtimes for default_runtime_name"; seen on Debian 12's
# containerd 1.6.20, tests/install/daemonset.sh).  Such a file gets runc
# back, as containerd's default defines it, inside our block.  END is the
# last line (END_MARK, or END_MARK_NOEOL after a file without a final newline).
block_v2() {
  local cri='[plugins."io.containerd.grpc.v1.cri".containerd.runtimes'
  printf '%s\n' "$BEGIN_MARK"
  [ "$1" != with-runc ] || printf '%s\n' "$cri.runc]" '  runtime_type = "io.containerd.runc.v2"'
  printf '%s\n' "$cri.iobatch]" '  runtime_type = "io.containerd.iobatch.v2"' \
    '  pod_annotations = ["io.iobatch.*"]' '  container_annotations = ["io.iobatch.*"]' \
    "  $cri.iobatch.options]" '    ConfigPath = "/etc/iobatch/runtime-options.toml"' "$2"
}

# has_block FILE: FILE holds our block, BEGIN to END, whole.
has_block() {
  awk -v b="$BEGIN_MARK" -v e="$END_MARK" -v e2="$END_MARK_NOEOL" '
    $0 == b { open = 1 } open && ($0 == e || $0 == e2) { found = 1; exit } END { exit !found }' "$1"
}
# ends_open FILE: FILE is not empty and has no final newline.
ends_open() { [ -n "$(tail -c 1 "$1")" ]; }
# AWK_OUT: awk functions that print each line but the last at once, and
# the last (in END) with a newline only if the input had one (awk itself
# ends every line with one): out(LINE), out_end(NEWLINE).
AWK_OUT='
  function out(s) { if (have) print prev; prev = s; have = 1 }
  function out_end(nl) { if (have) printf "%s%s", prev, nl ? "\n" : "" }'
# top_imports FILE: the top-level imports line (before any table), if any.
top_imports() {
  awk '/^[ \t]*\[/ { exit } /^[ \t]*imports[ \t]*=/ { print; exit }' "$1"
}

# containerd 2.x: the drop-in, in config.toml's version, and config.toml
# importing it.
configure_v2plus() {
  local conf confd tmp version=3
  # conf.d made here goes again on uninstall (a marker says so; containerd
  # imports only *.toml from it).
  hr confd "$(dirname "$DROPIN")"
  if [ ! -d "$confd" ]; then
    mkdir -p "$confd"
    : >"$confd/$CONFD_MARK"
  fi
  hr conf "$CONF"
  if [ -f "$conf" ] && [ "$(conf_version "$conf")" = 2 ]; then version=2; fi
  write_text "$DROPIN" containerd_check < <(dropin "$version")
  if [ ! -e "$conf" ]; then
    write_text "$CONF" containerd_check < <(printf 'version = 3\n%s\n' "$IMPORT_LINE")
    created
    return
  fi
  [ -f "$conf" ] || die "cannot edit '$CONF': not a regular file"
  tmp=$(mktemp)
  if v2_edit "$conf" "$tmp"; then edit "$tmp" "$CONF" containerd_check; fi
  rm -f "$tmp"
}
# v2_edit IN OUT: OUT is IN importing the drop-in; 2: IN imports it already.
v2_edit() {
  local line noeol=0
  line=$(top_imports "$1")
  # Already imported: our file, or the conf.d glob.
  case $line in *'"/etc/containerd/conf.d/*.toml"'* | *"\"$DROPIN\""*) return 2 ;; esac
  if [ -z "$line" ]; then
    # Line 1 is always top level (top-level keys come before the first table).
    { printf '%s\n' "$IMPORT_LINE"; cat "$1"; } >"$2"
    return 0
  fi
  if ends_open "$1"; then noeol=1; fi
  awk -v ours="\"$DROPIN\", " -v noeol=$noeol "$AWK_OUT"'
    done || /^[ \t]*\[/ { done = 1; out($0); next }
    match($0, /^[ \t]*imports[ \t]*=[ \t]*\[/) { $0 = substr($0, 1, RLENGTH) ours substr($0, RLENGTH + 1); done = 1 }
    { out($0) }
    END { out_end(!noeol) }' "$1" >"$2"
  cmp -s "$1" "$2" && die "cannot add \"$DROPIN\" to $CONF's imports: not an array ($line)"
  return 0
}

# containerd 1.6/1.7: the handler inside config.toml (version 2).
configure_v1() {
  local conf tmp
  hr conf "$CONF"
  if [ ! -e "$conf" ]; then
    write_text "$CONF" containerd_check < <(echo "version = 2"; echo; block_v2 with-runc "$END_MARK")
    created
    return
  fi
  [ -f "$conf" ] || die "cannot edit '$CONF': not a regular file"
  tmp=$(mktemp)
  if v1_edit "$conf" "$tmp"; then edit "$tmp" "$CONF" containerd_check; fi
  rm -f "$tmp"
}
# v1_edit IN OUT: OUT is IN with our block; 2: nothing to add.
v1_edit() {
  local runc=with-runc
  has_block "$1" && return 2
  grep -Eq '^[[:space:]]*version[[:space:]]*=[[:space:]]*2' "$1" ||
    die "$CONF is not 'version = 2'; merge packaging/containerd/config-v2.toml by hand"
  if grep -Fq 'containerd.runtimes.iobatch]' "$1"; then
    log "$CONF already defines runtimes.iobatch; left alone"
    return 2
  fi
  grep -Eq '^[[:space:]]*\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.' "$1" && runc=""
  if ends_open "$1"; then
    { cat "$1"; echo; block_v2 "$runc" "$END_MARK_NOEOL"; } >"$2"
  else
    { cat "$1"; block_v2 "$runc" "$END_MARK"; } >"$2"
  fi
}

install_files() {
  local f link opts run
  [ -x "$IOBATCH_SRC/bin/$SHIM" ] || die "no $IOBATCH_SRC/bin/$SHIM"
  for f in "$IOBATCH_SRC"/bin/*; do put "$f" "$DEST/bin/$(basename "$f")" 755; done
  if [ -d "$IOBATCH_SRC/lib" ]; then
    for f in "$IOBATCH_SRC"/lib/*; do put "$f" "$DEST/lib/$(basename "$f")" 644; done
  fi
  # containerd looks the shim up on its PATH.
  hr_link link "$SHIM_LINK"
  if [ "$(readlink "$link" 2>/dev/null)" != "$DEST/bin/$SHIM" ]; then
    mkdir -p "$(dirname "$link")"
    ln -sfn "$DEST/bin/$SHIM" "$link"
    log "linked $SHIM_LINK"
    changed=1
  fi
  # The admin's copy wins: written only when absent.
  hr opts "$OPTIONS"
  if [ ! -e "$opts" ] && [ -f "$IOBATCH_SRC/runtime-options.toml" ]; then
    edit "$IOBATCH_SRC/runtime-options.toml" "$OPTIONS"
  fi
  # The kubelet made the hostPath 0755 (DirectoryOrCreate); iobatchd wants
  # its socket directory root's and 0700.
  hr run "$RUN_DIR"
  mkdir -p "$run"
  if [ "$(stat -c %a "$run")" != 700 ]; then
    chmod 0700 "$run"
    log "made $RUN_DIR 0700"
  fi
}

# Binaries need no restart (each container starts a new shim); the
# configuration does: when this run changed it, or (install) when no
# containerd runs that started after it last changed (an earlier run wrote
# it without RESTART_CONTAINERD; the admin then sets it to true).
restart_containerd() {
  local why="" conf dropin
  hr conf "$CONF"
  hr dropin "$DROPIN"
  if [ "$conf_changed" = 1 ]; then
    why="containerd's configuration changed"
  elif [ "${1:-}" = install ] && ! containerd_newer_than "$conf" "$dropin"; then
    why="containerd runs a configuration older than the handler's"
  fi
  [ -n "$why" ] || return 0
  if [ "$RESTART_CONTAINERD" = true ]; then
    log "$why: restarting containerd"
    $SYSTEMCTL restart containerd
    restarted=1
  else
    log "$why; restart containerd for it to take effect (or RESTART_CONTAINERD=true)"
  fi
}

# Does the node's containerd (CTRD_PID) run, started after FILES last changed?
# Start time: btime (/proc/stat) + field 22 of /proc/PID/stat in clock ticks.
containerd_newer_than() {
  local newest=0 f m btime tck start
  [ -n "$CTRD_PID" ] || return 1
  for f in "$@"; do
    [ -e "$f" ] || continue
    m=$(stat -c %Y "$f")
    [ "$m" -gt "$newest" ] && newest=$m
  done
  btime=$(awk '$1 == "btime" { print $2 }' "$PROC/stat" 2>/dev/null) || return 1
  [ -n "$btime" ] || return 1
  tck=$(getconf CLK_TCK 2>/dev/null) || tck=100 # USER_HZ; busybox has no getconf
  # fields after "(comm) ": state is field 3, starttime field 22
  start=$(sed 's/^.*) //' "$PROC/$CTRD_PID/stat" 2>/dev/null | awk '{ print $20 }')
  [ -n "$start" ] || return 1
  [ $((btime + start / tck)) -ge "$newest" ]
}

# label_node VALUE, or "-" to remove.  The one API call: when no API server
# answers, say so and go on (the label is what schedules pods here, not
# what makes the node work).
label_node() {
  local out what args
  [ -n "$NODE_NAME" ] || return 0
  if [ "$1" = - ]; then
    what="take the label $NODE_LABEL off node $NODE_NAME"
    args=(label node "$NODE_NAME" "$NODE_LABEL-")
  else
    what="label node $NODE_NAME $NODE_LABEL=$1"
    args=(label --overwrite node "$NODE_NAME" "$NODE_LABEL=$1")
  fi
  # timeout(1), not --request-timeout: kubectl (1.20 at least) then
  # ignores the in-cluster configuration and asks localhost:8080.
  if out=$(timeout 60 kubectl "${args[@]}" 2>&1 | tail -1); then
    log "$what: done"
  else
    log "cannot $what (no API server answered?): ${out//$'\n'/ }; going on"
  fi
  return 0
}

do_install() {
  local major before conf dropin
  # A link that cannot be followed stops the installer before it writes.
  hr conf "$CONF"
  hr dropin "$DROPIN"
  install_files
  containerd_find
  major=$(containerd_major)
  before=$changed
  changed=0
  if [ "$major" -ge 2 ]; then configure_v2plus; else configure_v1; fi
  conf_changed=$changed
  changed=$((before | changed))
  restart_containerd install
  hr conf "$CONF"
  hr dropin "$DROPIN"
  if [ "$restarted" = 1 ] || containerd_newer_than "$conf" "$dropin"; then
    log "containerd serves the handler iobatch"
    label_node true
  else
    log "not labelling the node: no containerd runs with this configuration yet (restart it)"
  fi
  log "installed (changed=$changed)"
}

# strip_ours FILE OUT: FILE without what configure_* added, the exact
# inverse of each edit: a whole block (BEGIN to END, the last BEGIN before
# an END: a lone marker-like line of the admin's stays), our line, our
# entry first in the top-level imports array; and a line the installer's
# earlier versions tagged.  The last line has a newline if FILE's had one,
# and not if it was the END of a block that says it added one.
strip_ours() {
  local noeol=0
  if ends_open "$1"; then noeol=1; fi
  awk -v b="$BEGIN_MARK" -v e="$END_MARK" -v e2="$END_MARK_NOEOL" -v line="$IMPORT_LINE" \
    -v ours="\"$DROPIN\", " -v q="\"$DROPIN\"" -v tag="$IMPORT_TAG" -v noeol=$noeol "$AWK_OUT"'
    function cut(s, w, i) { i = index(s, w); return i ? substr(s, 1, i - 1) substr(s, i + length(w)) : s }
    function emit(s) {
      if (s == line) return
      if (!top && s ~ /^[ \t]*\[/) top = 1
      if (!top && match(s, /^[ \t]*imports[ \t]*=[ \t]*\[/) && substr(s, RLENGTH + 1, length(ours)) == ours)
        s = substr(s, 1, RLENGTH) substr(s, RLENGTH + 1 + length(ours))
      if (length(s) > length(tag) && substr(s, length(s) - length(tag) + 1) == tag && index(s, q)) {
        s = cut(cut(cut(s, ", " q), q ", "), q)
        sub(/[ \t]*# added by iobatch$/, "", s)
        if (s ~ /^[ \t]*imports[ \t]*=[ \t]*\[\][ \t]*$/) return
      }
      out(s)
    }
    # Lines after a BEGIN wait for its END; without one, they stay as they are.
    function flush(i) { for (i = 0; i < n; i++) emit(held[i]); n = 0 }
    n && ($0 == e || $0 == e2) { n = 0; cutnl = ($0 == e2); last = NR; next }
    $0 == b { flush(); held[n++] = $0; next }
    n { held[n++] = $0; next }
    { emit($0) }
    END { flush(); out_end(!noeol && !(last == NR && cutnl)) }' "$1" >"$2"
}

uninstall_config() {
  local conf mark tmp want
  hr conf "$CONF"
  hr mark "$CREATED_MARK"
  if [ -f "$mark" ] && [ -f "$conf" ]; then
    want=$(cat "$mark")
    # What the installer created is a file, not a link: a link is the admin's.
    if [ -n "$want" ] && ! is_link "$CONF" && [ "$(sha256sum <"$conf" | cut -d' ' -f1)" = "$want" ]; then
      rm -f "$conf" "$mark"
      log "removed $CONF (created by install.sh, unchanged since)"
      changed=1
      return
    fi
    log "$CONF was created by install.sh but changed since: removing only iobatch's lines, keeping the file"
  fi
  if [ -f "$mark" ]; then rm -f "$mark"; changed=1; fi
  [ -f "$conf" ] || return 0
  tmp=$(mktemp)
  strip_ours "$conf" "$tmp"
  cmp -s "$tmp" "$conf" || edit "$tmp" "$CONF"
  rm -f "$tmp"
}

uninstall_dropin() {
  local tmp d f
  hr d "$(dirname "$DROPIN")"
  hr f "$DROPIN"
  if [ -e "$f" ]; then
    tmp=$(mktemp)
    dropin 3 >"$tmp"
    cmp -s "$tmp" "$f" || dropin 2 >"$tmp"
    if cmp -s "$tmp" "$f"; then
      rm -f "$f"
      changed=1
    else
      log "$DROPIN is not the text install.sh writes (edited?): kept; nothing imports it any more"
    fi
    rm -f "$tmp"
  fi
  if [ -e "$d/$CONFD_MARK" ]; then
    rm -f "$d/$CONFD_MARK"
    rmdir "$d" 2>/dev/null || log "$(dirname "$DROPIN") kept: not empty"
    changed=1
  fi
}

# The runtime options go when they are the ones the installer copied.
uninstall_options() {
  local f
  hr f "$OPTIONS"
  [ -f "$f" ] || return 0
  if [ -f "$IOBATCH_SRC/runtime-options.toml" ] && cmp -s "$IOBATCH_SRC/runtime-options.toml" "$f"; then
    rm -f "$f"
    rmdir "$(dirname "$f")" 2>/dev/null || true
    changed=1
  else
    log "$OPTIONS kept: not the file install.sh copies (the admin's)"
  fi
}

# The restore journal: what an agent that did not stop (killed, out of
# memory, a crash loop) left on containers' cgroups: caps, cpu.weight 1,
# frozen containers.  Nothing but the agent puts that back, so before its
# binary goes it runs once more, on the host (its cgroupfs, its paths), as
# `iobatchd --restore-only`: it writes back what it can, removes the
# journal when nothing is left, and says what it could not put back.  A
# journal that still holds entries is never deleted, and the binary that
# can replay it stays with it (restore_kept: the next uninstall, the
# cleanup pod's restart, tries again).
restore_kept=0
restore_state() {
  local d agent rc
  hr d "$STATE_DIR"
  [ -e "$d/restore.json" ] || [ -L "$d/restore.json" ] || return 0
  hr agent "$DEST/bin/iobatchd"
  if [ ! -x "$agent" ]; then
    log "$STATE_DIR/restore.json kept: no $DEST/bin/iobatchd on the host to put back what it holds"
    restore_kept=1
    return 0
  fi
  log "putting back what $STATE_DIR/restore.json holds ($DEST/bin/iobatchd --restore-only)"
  rc=0
  $HOST_EXEC "$DEST/bin/iobatchd" --state-dir "$STATE_DIR" --restore-only || rc=$?
  changed=1
  if [ -e "$d/restore.json" ] || [ -L "$d/restore.json" ]; then
    log "$STATE_DIR/restore.json kept: iobatchd --restore-only (exit status $rc) could not put back every value it holds (above); $DEST/bin kept to try again"
    restore_kept=1
  fi
}

# The agent's state: its files (a link among them goes, not its target),
# then the directory if nothing else is in it.  A restore journal that
# holds entries stays (restore_state).
uninstall_state() {
  local f left d
  hr d "$STATE_DIR"
  [ -d "$d" ] || return 0
  if [ "$KEEP_STATE" = true ]; then
    log "$STATE_DIR kept (KEEP_STATE=true)"
    return 0
  fi
  for f in $STATE_FILES; do
    [ "$f" != restore.json ] || [ "$restore_kept" = 0 ] || continue
    if [ -e "$d/$f" ] || [ -L "$d/$f" ]; then rm -f "$d/$f"; changed=1; fi
  done
  if rmdir "$d" 2>/dev/null; then
    changed=1
  else
    left=$(ls -A "$d" | head -5 | tr '\n' ' ')
    log "$STATE_DIR kept: holds files that are not the agent's state ($left)"
  fi
}

do_uninstall() {
  local ours=0 dest conf link
  hr dest "$DEST"
  hr conf "$CONF"
  hr_link link "$SHIM_LINK"
  # The runtime options and the agent's state are also what the .deb
  # installs and its agent keeps: they go only where install.sh installed.
  if [ -d "$dest" ] || [ -L "$link" ] || is_created || { [ -f "$conf" ] && has_block "$conf"; }; then
    ours=1
  fi
  # First: no new pod is scheduled here once the handler starts going.
  label_node -
  uninstall_config
  uninstall_dropin
  conf_changed=$changed
  if [ "$ours" = 1 ]; then uninstall_options; fi
  if [ "$ours" = 1 ]; then restore_state; fi
  if [ -L "$link" ]; then rm -f "$link"; changed=1; fi
  # /opt/iobatch a link: the admin's; what the installer put in it goes.
  if [ "$restore_kept" = 1 ]; then
    : # the agent that can still put back the journal's values stays
  elif is_link "$DEST"; then
    if [ -e "$dest/bin" ] || [ -e "$dest/lib" ]; then rm -rf "${dest:?}/bin" "${dest:?}/lib"; changed=1; fi
  elif [ -d "$dest" ]; then
    rm -rf "$dest"
    changed=1
  fi
  if [ "$ours" = 1 ]; then uninstall_state; fi
  restart_containerd
  if [ "$restore_kept" = 1 ]; then
    die "uninstalled but for $DEST and $STATE_DIR/restore.json: containers may still be capped or frozen; run 'install.sh uninstall' again"
  elif [ "$changed" = 0 ]; then
    log "nothing of iobatch on this node: nothing changed"
  else
    log "uninstalled"
  fi
}
is_created() {
  local m
  hr m "$CREATED_MARK"
  [ -e "$m" ]
}

# Sourced (tests/integration/packaging/k8s-install-fuzz.sh): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0
case "${1:-}" in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: install.sh install|uninstall" >&2; exit 2 ;;
esac
