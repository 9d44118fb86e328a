#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/results-page.py's stale marks, on throwaway repositories of its
# own (its ROOT argument): a result is marked when the code it measures
# (bench/results-code.txt) changed after the commit it was measured on,
# --check fails on a page without the marks the history implies and passes
# again once the page carries them or the result is measured again.  What
# git cannot tell (a commit not in the history, a shallow clone, no
# repository) is unknown and fails nothing; a result file that is not JSON
# or a map naming no file fails with a message, not a traceback.
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
export PYTHONDONTWRITEBYTECODE=1
echo "1..12"
if ! command -v git >/dev/null || ! command -v python3 >/dev/null; then
  for i in $(seq 12); do echo "not ok $i - git and python3 are needed (scripts/install-deps.sh)"; done
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t \
  GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 HOME=$tmp

n=0
ok() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
    printf '%s\n' "$out" | sed 's/^/# /'
    echo "not ok $n - $2"
  fi
}
page() { python3 "$TOP/bench/results-page.py" "$@"; }
R=$tmp/repo
g() { git -C "$R" "$@"; }
result() { # result FILE COMMIT: a result measured on COMMIT
  printf '{"command": "bench/x.sh", "date": "2026-12-06", "commit": "%s", "n": 1}\n' "$2" >"$R/bench/results/$1"
}
commit() { g add -A && g commit -qm "$1"; }

mkdir -p "$R/bench/results" "$R/src"
git init -q "$R"
printf '# Results\n\nA: {{about:a.json}}, n = {{a.json:n}}.\n' >"$R/bench/RESULTS.md.in"
printf 'a.json  src/a.c\nb.json  src/b.c\n' >"$R/bench/results-code.txt"
echo 1 >"$R/src/a.c"
echo 1 >"$R/src/b.c"
commit code
c1=$(g rev-parse --short=7 HEAD)
result a.json "$c1"
result b.json 0000000
page "$R" >/dev/null && commit "results at $c1"

out=$(page --check "$R" 2>&1)
ok $? "a result measured after the last change to its code passes"
out=$(grep -F "| [a.json](results/a.json) | $c1 of " "$R/bench/RESULTS.md")
ok $? "the page shows the commit a result was measured on and its date"
out=$(grep -F "| [b.json](results/b.json) | 0000000 (not in this repository's history) |" "$R/bench/RESULTS.md" &&
  grep -F "measured at 0000000, which is not in this repository's history: unknown" "$R/bench/RESULTS.md")
ok $? "a commit not in the history is said to be unknown"

# the code changes in a commit of its own, the page is left as it was
echo 2 >"$R/src/a.c"
commit "change a"
c2=$(g rev-parse --short=7 HEAD)
out=$(page --check "$R" 2>&1)
[ $? -eq 1 ] && grep -qF "+A: \`bench/x.sh\`, 2026-12-06, commit $c1 of" <<<"$out" && grep -q 'stale' <<<"$out"
ok $? "a page without the stale mark the history implies fails the check"

page "$R" >/dev/null
out=$(grep -F "(**stale**: measured at $c1; the code it measures changed since)" "$R/bench/RESULTS.md")
ok $? "the regenerated page marks the result stale, naming the commit it was measured on"
commit "page after change a"
out=$(page --check "$R" 2>&1)
ok $? "the committed page with the mark passes (a stale result fails nothing)"

# the code and the page in one commit: a change not yet committed counts
c2=$(g rev-parse --short=7 HEAD)
result a.json "$c2"
page "$R" >/dev/null
commit "measured again at $c2"
! grep -qF "**stale**" "$R/bench/RESULTS.md"
ok $? "measured at HEAD: current"
echo 3 >"$R/src/a.c"
page "$R" >/dev/null
out=$(grep -F "(**stale**: measured at $c2; the code it measures changed since)" "$R/bench/RESULTS.md")
ok $? "a change not yet committed marks the result stale"
commit "change a with its page"
out=$(page --check "$R" 2>&1)
ok $? "that commit passes the check on its clean tree"
echo x >"$R/src/other.c" && g add src/other.c
commit "other"
out=$(page --check "$R" 2>&1)
ok $? "a later commit that changes no measured code leaves the page true"

# measured again at HEAD: the mark goes
cur=$(g rev-parse --short=7 HEAD)
result a.json "$cur"
out=$(page --check "$R" 2>&1)
rc=$?
page "$R" >/dev/null
[ $rc -eq 1 ] && grep -qF "| [a.json](results/a.json) | $cur of " "$R/bench/RESULTS.md" &&
  grep -qF "| \`src/a.c\` | current |" "$R/bench/RESULTS.md" && ! grep -qF "**stale**" "$R/bench/RESULTS.md"
ok $? "a result measured again loses its mark, and the page with the mark fails"
commit "a measured again"

# what git cannot tell: a shallow clone and a copy without a repository
echo 4 >"$R/src/a.c"
commit "change a again"
page "$R" >/dev/null
commit "page"
git clone -q --depth 1 "file://$R" "$tmp/shallow"
out=$(page --check "$tmp/shallow" 2>&1)
rc=$?
page "$tmp/shallow" >/dev/null
grep -qF "(whether the code it measures changed since: unknown)" "$tmp/shallow/bench/RESULTS.md" || rc=1
mkdir "$tmp/copy" && cp -r "$R/bench" "$R/src" "$tmp/copy/"
out="$out$(page --check "$tmp/copy" 2>&1)" || rc=1
ok $rc "a shallow clone or no repository: unknown, and the check passes"

# malformed input fails with a message
printf '{"commit": "xyz", "command": "c"}\n' >"$R/bench/results/odd.json"
out=$(page "$R" 2>&1)
rc=$?
grep -qF "odd.json](results/odd.json) | xyz (not a commit hash) |" "$R/bench/RESULTS.md" || rc=1
printf '{"commit": ' >"$R/bench/results/bad.json"
out="$out$(page --check "$R" 2>&1)"
[ $? -eq 1 ] && grep -qF "cannot read 'bench/results/bad.json'" <<<"$out" && ! grep -q Traceback <<<"$out" || rc=1
rm "$R/bench/results/bad.json"
echo "a.json src/gone.c" >>"$R/bench/results-code.txt"
out="$out$(page --check "$R" 2>&1)"
[ $? -eq 1 ] && grep -qF "no 'src/gone.c' in the repository" <<<"$out" || rc=1
ok $rc "a malformed commit, result file or map: said, no traceback"
