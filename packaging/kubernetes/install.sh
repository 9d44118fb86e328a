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
# Paths on the host are resolved as the host resolves them: a link's
# absolute target is the host's, so it is read under HOST_ROOT; a link
# that climbs above the host's / or loops is refused.  A file the installer
# edits is edited where its links lead, keeps its mode and its owner, and
# a link stays a link.
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
# goes into /etc/containerd/conf.d/iobatch.toml and config.toml imports it
# (containerd >= 2.2 imports conf.d only when config.toml says so, as the one
# `containerd config default` writes does).  1.6/1.7 let an imported file
# replace config.toml's whole CRI table, so there the handler is appended to
# config.toml itself between two marker lines (kata-deploy edits config.toml
# for containerd < 2.0 too).
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
IMPORT_TAG="# added by iobatch"
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

# write_file SRC NAME REAL MODE OWNER: REAL (NAME resolved) gets SRC's
# bytes, MODE and OWNER (empty: ours), unless it has them already.
# Through a new file next to it renamed over it: atomic (a running shim
# keeps its inode, containerd never reads half a config).  cp + chmod:
# busybox, the image's userland, has no install(1).
write_file() {
  local src=$1 name=$2 dst=$3 mode=$4 owner=$5 new=$3.iobatch-new cur
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
# edit SRC DST: a file that may be the admin's too keeps the mode
# and owner it has (a new one: 0644, root's).
edit() {
  local r mode=644 owner="" cur
  hr r "$2"
  if [ -e "$r" ]; then
    cur=$(stat -c '%a %u:%g' "$r")
    mode=${cur% *} owner=${cur#* }
  fi
  write_file "$1" "$2" "$r" "$mode" "$owner"
}
# write_text DST <<<text
write_text() {
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  edit "$tmp" "$1"
  rm -f "$tmp"
}

# The binary of the running containerd, as the host names it ("" if none).
containerd_exe() {
  local p exe
  for p in "$PROC"/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = containerd ] || continue
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    case $exe in */containerd) echo "$exe"; return 0 ;; esac # not "... (deleted)"
  done
  echo ""
}

# The node's containerd version, from the node itself: `containerd
# --version` ("containerd github.com/containerd/containerd 1.6.20~ds1 ...",
# "containerd containerd.io v2.1.4 ...") of the running binary, else of the
# one on the host's PATH.
containerd_major() {
  local v=${CONTAINERD_VERSION:-} exe out w
  if [ -z "$v" ]; then
    exe=$(containerd_exe)
    out=$(PATH=$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin $HOST_EXEC "${exe:-containerd}" --version 2>&1) ||
      die "cannot run the node's containerd --version (${exe:-containerd} through '$HOST_EXEC'): $out; set CONTAINERD_VERSION"
    for w in $out; do
      if [[ "$w" =~ ^v?[0-9]+\.[0-9]+ ]]; then v=$w; break; fi
    done
    log "the node's containerd: ${exe:-containerd} says '$out'"
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

dropin_v3() {
  cat <<'TOML'
# Written by iobatch's install.sh: the CRI runtime handler "iobatch".
version = 3

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.iobatch]
  runtime_type = "io.containerd.iobatch.v2"
  pod_annotations = ["io.iobatch.*"]
  container_annotations = ["io.iobatch.*"]
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.iobatch.options]
    ConfigPath = "/etc/iobatch/runtime-options.toml"
TOML
}

# block_v2 [with-runc]: containerd 1.6/1.7 decode a runtimes table over the
# built-in one, not into it: a config.toml that names no runtime of its own
# loses the default "runc" once it names "iobatch", and the CRI plugin then
# refuses to load ("no corresponding runtime configured in
# containerd.runtimes for default_runtime_name"; seen on Debian 12's
# containerd 1.6.20, tests/install/daemonset.sh).  Such a file gets runc
# back, as containerd's default defines it, inside our block.
block_v2() {
  cat <<TOML
$BEGIN_MARK
TOML
  if [ "${1:-}" = with-runc ]; then
    cat <<'TOML'
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
TOML
  fi
  cat <<TOML
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch]
  runtime_type = "io.containerd.iobatch.v2"
  pod_annotations = ["io.iobatch.*"]
  container_annotations = ["io.iobatch.*"]
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch.options]
    ConfigPath = "/etc/iobatch/runtime-options.toml"
$END_MARK
TOML
}

# containerd 2.x: the drop-in, and config.toml importing it.
configure_v2plus() {
  local conf confd tmp
  # conf.d made here goes again on uninstall (a marker says so; containerd
  # imports only *.toml from it).
  hr confd "$(dirname "$DROPIN")"
  if [ ! -d "$confd" ]; then
    mkdir -p "$confd"
    : >"$confd/$CONFD_MARK"
  fi
  write_text "$DROPIN" < <(dropin_v3)
  hr conf "$CONF"
  if [ ! -e "$conf" ]; then
    write_text "$CONF" < <(printf 'version = 3\nimports = ["%s"]  %s\n' "$DROPIN" "$IMPORT_TAG")
    created
    return
  fi
  [ -f "$conf" ] || die "cannot edit '$CONF': not a regular file"
  # Already imported: our file, or the conf.d glob.
  if grep -Eq '^[[:space:]]*imports[[:space:]]*=.*("/etc/containerd/conf\.d/\*\.toml"|"'"$DROPIN"'")' "$conf"; then
    return
  fi
  tmp=$(mktemp)
  if grep -Eq '^[[:space:]]*imports[[:space:]]*=' "$conf"; then
    grep -Eq '^[[:space:]]*imports[[:space:]]*=[[:space:]]*\[.*\]' "$conf" ||
      die "$CONF: an imports array over several lines; add \"$DROPIN\" to it by hand"
    # Append our file to the one-line array and tag the line.
    sed -E '0,/^[[:space:]]*imports[[:space:]]*=/s|^([[:space:]]*imports[[:space:]]*=[[:space:]]*\[)(.*)\][[:space:]]*(#.*)?$|\1\2, "'"$DROPIN"'"]  '"$IMPORT_TAG"'|' "$conf" |
      sed -E "/$IMPORT_TAG\$/s|\[, \"|[\"|" >"$tmp"
  elif grep -Eq '^[[:space:]]*version[[:space:]]*=' "$conf"; then
    # Top-level keys must come before the first table: right after version.
    sed -E '0,/^[[:space:]]*version[[:space:]]*=/s|^([[:space:]]*version[[:space:]]*=.*)$|\1\nimports = ["'"$DROPIN"'"]  '"$IMPORT_TAG"'|' "$conf" >"$tmp"
  else
    { printf 'imports = ["%s"]  %s\n' "$DROPIN" "$IMPORT_TAG"; cat "$conf"; } >"$tmp"
  fi
  edit "$tmp" "$CONF"
  rm -f "$tmp"
}

# containerd 1.6/1.7: the handler inside config.toml (version 2).
configure_v1() {
  local conf
  hr conf "$CONF"
  if [ ! -e "$conf" ]; then
    write_text "$CONF" < <(echo "version = 2"; echo; block_v2 with-runc)
    created
    return
  fi
  [ -f "$conf" ] || die "cannot edit '$CONF': not a regular file"
  grep -qxF "$BEGIN_MARK" "$conf" && return 0
  grep -Eq '^[[:space:]]*version[[:space:]]*=[[:space:]]*2' "$conf" ||
    die "$CONF is not 'version = 2'; merge packaging/containerd/config-v2.toml by hand"
  if grep -Fq 'containerd.runtimes.iobatch]' "$conf"; then
    log "$CONF already defines runtimes.iobatch; left alone"
    return 0
  fi
  local tmp runc=with-runc
  grep -Eq '^[[:space:]]*\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.' "$conf" && runc=""
  tmp=$(mktemp)
  { cat "$conf"; block_v2 $runc; } >"$tmp"
  edit "$tmp" "$CONF"
  rm -f "$tmp"
}

install_files() {
  local f link opts run
  [ -x "$IOBATCH_SRC/bin/$SHIM" ] || die "no $IOBATCH_SRC/bin/$SHIM"
  for f in "$IOBATCH_SRC"/bin/*; do put "$f" "$DEST/bin/$(basename "$f")" 755; done
  if [ -d "$IOBATCH_SRC/lib" ]; then
    for f in "$IOBATCH_SRC"/lib/*; do put "$f" "$DEST/lib/$(basename "$f")" 644; done
  fi
  # containerd looks the shim up on its PATH; the shim finds iobatch-hook
  # next to its real path (/opt/iobatch/bin).
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

# Does a containerd process run that started after FILES last changed?
# Start time: btime (/proc/stat) + field 22 of /proc/PID/stat in clock ticks.
containerd_newer_than() {
  local newest=0 f m btime tck p start
  for f in "$@"; do
    [ -e "$f" ] || continue
    m=$(stat -c %Y "$f")
    [ "$m" -gt "$newest" ] && newest=$m
  done
  btime=$(awk '$1 == "btime" { print $2 }' "$PROC/stat" 2>/dev/null) || return 1
  [ -n "$btime" ] || return 1
  tck=$(getconf CLK_TCK 2>/dev/null) || tck=100 # USER_HZ; busybox has no getconf
  for p in "$PROC"/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = containerd ] || continue
    # fields after "(comm) ": state is field 3, starttime field 22
    start=$(sed 's/^.*) //' "$p/stat" 2>/dev/null | awk '{ print $20 }')
    [ -n "$start" ] || continue
    [ $((btime + start / tck)) -ge "$newest" ] && return 0
  done
  return 1
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

# strip_ours FILE: FILE without our block and our entry in a tagged
# imports line (written to stdout).
strip_ours() {
  sed "/^$(printf '%s' "$BEGIN_MARK" | sed 's/[][\/.*^$]/\\&/g')\$/,/^$END_MARK\$/d" "$1" |
    sed -E "/$IMPORT_TAG\$/{ s|, \"$DROPIN\"||; s|\"$DROPIN\"(, ?)?||; s|[[:space:]]*$IMPORT_TAG\$||; /^[[:space:]]*imports[[:space:]]*=[[:space:]]*\[\][[:space:]]*$/d; }"
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
  strip_ours "$conf" >"$tmp"
  cmp -s "$tmp" "$conf" || edit "$tmp" "$CONF"
  rm -f "$tmp"
}

uninstall_dropin() {
  local tmp d f
  hr d "$(dirname "$DROPIN")"
  hr f "$DROPIN"
  if [ -e "$f" ]; then
    tmp=$(mktemp)
    dropin_v3 >"$tmp"
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

# The agent's state: its files (a link among them goes, not its target),
# then the directory if nothing else is in it.
uninstall_state() {
  local f left d
  hr d "$STATE_DIR"
  [ -d "$d" ] || return 0
  if [ "$KEEP_STATE" = true ]; then
    log "$STATE_DIR kept (KEEP_STATE=true)"
    return 0
  fi
  for f in $STATE_FILES; do
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
  if [ -d "$dest" ] || [ -L "$link" ] || is_created || grep -qxF "$BEGIN_MARK" "$conf" 2>/dev/null; then
    ours=1
  fi
  # First: no new pod is scheduled here once the handler starts going.
  label_node -
  uninstall_config
  uninstall_dropin
  conf_changed=$changed
  if [ "$ours" = 1 ]; then uninstall_options; fi
  if [ -L "$link" ]; then rm -f "$link"; changed=1; fi
  # /opt/iobatch a link: the admin's; what the installer put in it goes.
  if is_link "$DEST"; then
    if [ -e "$dest/bin" ] || [ -e "$dest/lib" ]; then rm -rf "${dest:?}/bin" "${dest:?}/lib"; changed=1; fi
  elif [ -d "$dest" ]; then
    rm -rf "$dest"
    changed=1
  fi
  if [ "$ours" = 1 ]; then uninstall_state; fi
  restart_containerd
  if [ "$changed" = 0 ]; then
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

case "${1:-}" in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: install.sh install|uninstall" >&2; exit 2 ;;
esac
