#!/usr/bin/env bash
# iobatch node installer (the DaemonSet's init container, iobatch-deploy.yaml;
# the pattern of kata-deploy).  Modes:
#   install.sh install    copy the binaries to the host, register the runtime
#                         handler "iobatch" with containerd, label the node
#   install.sh uninstall  undo all of it (iobatch-cleanup.yaml)
# Environment:
#   HOST_ROOT=/host             where the host's / is mounted
#   IOBATCH_SRC=/opt/iobatch    what to copy: bin/ (and lib/ if present)
#   NODE_NAME                   the node to label (downward API); empty: no label
#   NODE_LABEL=iobatch.io/runtime   set to "true" (the RuntimeClass selects on it)
#   RESTART_CONTAINERD=false    true: restart containerd when its config changed
#   CONTAINERD_VERSION          e.g. 1.7.2; default: the node's
#                               status.nodeInfo.containerRuntimeVersion
#   SYSTEMCTL                   how to reach the host's systemd (default:
#                               nsenter into PID 1's mount namespace)
#   PROC=/proc                  the host's /proc (the pod has hostPID)
# Idempotent: a second run changes nothing and restarts nothing.  The node
# is labelled only once containerd runs with the handler: restarted here,
# or started after its configuration last changed; else the log says to
# restart containerd, and the next run (a pod restart) labels it.
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
SYSTEMCTL=${SYSTEMCTL:-nsenter --target 1 --mount -- systemctl}
PROC=${PROC:-/proc}

DEST=/opt/iobatch            # on the host
SHIM=containerd-shim-iobatch-v2
SHIM_LINK=/usr/local/bin/$SHIM
CONF=/etc/containerd/config.toml
DROPIN=/etc/containerd/conf.d/iobatch.toml
OPTIONS=/etc/iobatch/runtime-options.toml
CREATED_MARK=/etc/containerd/.config.toml.created-by-iobatch
BEGIN_MARK="# BEGIN iobatch (install.sh; 'install.sh uninstall' removes this block)"
END_MARK="# END iobatch"
IMPORT_TAG="# added by iobatch"

changed=0      # anything written
conf_changed=0 # containerd's configuration written
restarted=0
log() { echo "iobatch-install: $*" >&2; }
die() { log "$*"; exit 1; }
h() { echo "$HOST_ROOT$1"; }

# put SRC DST MODE: copy unless identical; atomic (a running shim keeps its inode)
put() {
  if [ -f "$2" ] && cmp -s "$1" "$2" && [ "$(stat -c %a "$2")" = "$3" ]; then return 0; fi
  mkdir -p "$(dirname "$2")"
  install -m "$3" "$1" "$2.iobatch-new"
  mv -f "$2.iobatch-new" "$2"
  log "wrote ${2#"$HOST_ROOT"}"
  changed=1
}
# write_text DST MODE <<<text
write_text() {
  local tmp
  tmp=$(mktemp)
  cat >"$tmp"
  put "$tmp" "$1" "$2"
  rm -f "$tmp"
}

containerd_major() {
  local v=${CONTAINERD_VERSION:-}
  if [ -z "$v" ] && [ -n "$NODE_NAME" ]; then
    v=$(kubectl get node "$NODE_NAME" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}')
  fi
  v=${v#containerd://}
  v=${v#v}
  [[ "$v" =~ ^[0-9]+\.[0-9]+ ]] || die "cannot tell the containerd version ('${v}'): set CONTAINERD_VERSION"
  echo "${v%%.*}"
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

block_v2() {
  cat <<TOML
$BEGIN_MARK
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
  local conf tmp
  conf=$(h $CONF)
  dropin_v3 | write_text "$(h $DROPIN)" 644
  if [ ! -f "$conf" ]; then
    mkdir -p "$(dirname "$conf")"
    printf 'version = 3\nimports = ["%s"]  %s\n' "$DROPIN" "$IMPORT_TAG" | write_text "$conf" 644
    : >"$(h $CREATED_MARK)"
    return
  fi
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
  put "$tmp" "$conf" "$(stat -c %a "$conf")"
  rm -f "$tmp"
}

# containerd 1.6/1.7: the handler inside config.toml (version 2).
configure_v1() {
  local conf
  conf=$(h $CONF)
  if [ ! -f "$conf" ]; then
    mkdir -p "$(dirname "$conf")"
    { echo "version = 2"; echo; block_v2; } | write_text "$conf" 644
    : >"$(h $CREATED_MARK)"
    return
  fi
  grep -qxF "$BEGIN_MARK" "$conf" && return 0
  grep -Eq '^[[:space:]]*version[[:space:]]*=[[:space:]]*2' "$conf" ||
    die "$CONF is not 'version = 2'; merge packaging/containerd/config-v2.toml by hand"
  if grep -Fq 'containerd.runtimes.iobatch]' "$conf"; then
    log "$CONF already defines runtimes.iobatch; left alone"
    return 0
  fi
  local tmp
  tmp=$(mktemp)
  { cat "$conf"; block_v2; } >"$tmp"
  put "$tmp" "$conf" "$(stat -c %a "$conf")"
  rm -f "$tmp"
}

install_files() {
  local f
  [ -x "$IOBATCH_SRC/bin/$SHIM" ] || die "no $IOBATCH_SRC/bin/$SHIM"
  for f in "$IOBATCH_SRC"/bin/*; do put "$f" "$(h $DEST/bin/"$(basename "$f")")" 755; done
  if [ -d "$IOBATCH_SRC/lib" ]; then
    for f in "$IOBATCH_SRC"/lib/*; do put "$f" "$(h $DEST/lib/"$(basename "$f")")" 644; done
  fi
  # containerd looks the shim up on its PATH; the shim finds iobatch-hook
  # next to its real path (/opt/iobatch/bin).
  if [ "$(readlink "$(h $SHIM_LINK)" 2>/dev/null)" != "$DEST/bin/$SHIM" ]; then
    mkdir -p "$(h /usr/local/bin)"
    ln -sfn "$DEST/bin/$SHIM" "$(h $SHIM_LINK)"
    log "linked $SHIM_LINK"
    changed=1
  fi
  # The admin's copy wins: written only when absent.
  if [ ! -f "$(h $OPTIONS)" ] && [ -f "$IOBATCH_SRC/runtime-options.toml" ]; then
    put "$IOBATCH_SRC/runtime-options.toml" "$(h $OPTIONS)" 644
  fi
}

# Binaries need no restart (each container starts a new shim); the
# configuration does.
restart_containerd() {
  if [ "$conf_changed" = 1 ] && [ "$RESTART_CONTAINERD" = true ]; then
    log "restarting containerd"
    $SYSTEMCTL restart containerd
    restarted=1
  elif [ "$conf_changed" = 1 ]; then
    log "containerd's configuration changed; restart containerd for it to take effect (or RESTART_CONTAINERD=true)"
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
  tck=$(getconf CLK_TCK)
  for p in "$PROC"/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = containerd ] || continue
    # fields after "(comm) ": state is field 3, starttime field 22
    start=$(sed 's/^.*) //' "$p/stat" 2>/dev/null | awk '{ print $20 }')
    [ -n "$start" ] || continue
    [ $((btime + start / tck)) -ge "$newest" ] && return 0
  done
  return 1
}

label_node() { # value, or "-" to remove
  [ -n "$NODE_NAME" ] || return 0
  if [ "$1" = - ]; then
    kubectl label node "$NODE_NAME" "$NODE_LABEL-" >/dev/null
  else
    kubectl label --overwrite node "$NODE_NAME" "$NODE_LABEL=$1" >/dev/null
  fi
}

do_install() {
  local major before
  install_files
  major=$(containerd_major)
  before=$changed
  changed=0
  if [ "$major" -ge 2 ]; then configure_v2plus; else configure_v1; fi
  conf_changed=$changed
  changed=$((before | changed))
  restart_containerd
  if [ "$restarted" = 1 ] || containerd_newer_than "$(h $CONF)" "$(h $DROPIN)"; then
    label_node true
  else
    log "not labelling the node: no containerd runs with this configuration yet (restart it)"
  fi
  log "installed (changed=$changed)"
}

do_uninstall() {
  local conf tmp
  conf=$(h $CONF)
  if [ -f "$(h $CREATED_MARK)" ]; then
    rm -f "$conf" "$(h $CREATED_MARK)"
    changed=1
  elif [ -f "$conf" ]; then
    tmp=$(mktemp)
    # Drop our block, then our entry in a tagged imports line.
    sed "/^$(printf '%s' "$BEGIN_MARK" | sed 's/[][\/.*^$]/\\&/g')\$/,/^$END_MARK\$/d" "$conf" |
      sed -E "/$IMPORT_TAG\$/{ s|, \"$DROPIN\"||; s|\"$DROPIN\"(, ?)?||; s|[[:space:]]*$IMPORT_TAG\$||; /^[[:space:]]*imports[[:space:]]*=[[:space:]]*\[\][[:space:]]*$/d; }" >"$tmp"
    cmp -s "$tmp" "$conf" || { put "$tmp" "$conf" "$(stat -c %a "$conf")"; }
    rm -f "$tmp"
  fi
  if [ -e "$(h $DROPIN)" ]; then rm -f "$(h $DROPIN)"; changed=1; fi
  if [ -L "$(h $SHIM_LINK)" ]; then rm -f "$(h $SHIM_LINK)"; changed=1; fi
  if [ -d "$(h $DEST)" ]; then rm -rf "$(h $DEST)"; changed=1; fi
  conf_changed=$changed
  restart_containerd
  label_node - # last: iobatch-cleanup.yaml's pods go away with the label
  log "uninstalled (changed=$changed; $OPTIONS kept)"
}

case "${1:-}" in
  install) do_install ;;
  uninstall) do_uninstall ;;
  *) echo "usage: install.sh install|uninstall" >&2; exit 2 ;;
esac
