#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The io.iobatch.* annotations are defined once, in client/annotations.c
# (`iobatchctl annotations --keys` prints them with who reads them); the
# man pages and README.md's annotation table must say the same:
#   - every key is a row of README.md's table, whose "read by" column is
#     the code's;
#   - every key is in iobatchd(8) (the page with the trust rules);
#   - no other io.iobatch.X key is in README.md or any man page;
#   - the shim's and the hook's man pages name only keys that program reads.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
MAN=packaging/man
echo "1..6"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; }
keys_in() { grep -o 'io\.iobatch\.[a-z][a-z0-9-]*[a-z0-9]' "$@" | sed 's/^[^:]*://' | sort -u; }

if ! table=$("$B/bin/iobatchctl" annotations --keys) || [ -z "$table" ]; then
  no "iobatchctl annotations --keys printed the keys"
  for i in 2 3 4 5 6; do no "skipped: no keys (test $i)"; done
  exit 0
fi
ok "iobatchctl annotations --keys: $(echo "$table" | wc -l) keys"
code_keys=$(echo "$table" | awk '{print $1}' | sort -u)

# 2. README.md's table: a row per key, read by as in the code
bad=""
while read -r key by; do
  row=$(grep -F "| \`$key\` |" README.md)
  if [ "$(printf '%s\n' "$row" | grep -c .)" != 1 ]; then
    bad+=" $key(no single row)"
    continue
  fi
  col=$(printf '%s\n' "$row" | awk -F'|' '{gsub(/[ `]/, "", $5); print $5}')
  [ "$col" = "$by" ] || bad+=" $key(read by '$col', code '$by')"
done <<<"$table"
if [ -z "$bad" ]; then ok "README.md's table has every key, read by as in the code"; else no "README.md's table:$bad"; fi

# 3. every key in iobatchd(8)
missing=$(comm -23 <(echo "$code_keys") <(keys_in "$MAN/iobatchd.8.scd"))
if [ -z "$missing" ]; then ok "iobatchd(8) names every key"; else no "iobatchd(8) lacks: $(tr "\n" " " <<<"$missing")"; fi

# 4. no other key in README.md
extra=$(comm -13 <(echo "$code_keys") <(keys_in README.md))
if [ -z "$extra" ]; then ok "README.md names no key the code lacks"; else no "README.md names keys the code lacks: $(tr "\n" " " <<<"$extra")"; fi

# 5. no other key in any man page
extra=$(comm -13 <(echo "$code_keys") <(keys_in "$MAN"/*.scd))
if [ -z "$extra" ]; then ok "the man pages name no key the code lacks"; else no "man pages name keys the code lacks: $(tr "\n" " " <<<"$extra")"; fi

# 6. the shim's and the hook's pages: only keys that program reads
bad=""
for pair in shim:containerd-shim-iobatch-v2.8.scd hook:iobatch-hook.8.scd; do
  who=${pair%%:*} page=$MAN/${pair#*:}
  reads=$(echo "$table" | awk -v w="$who" '$2 ~ w {print $1}' | sort -u)
  extra=$(comm -13 <(echo "$reads") <(keys_in "$page"))
  [ -z "$extra" ] || bad+=" ${pair#*:}:"$(tr "\n" "," <<<"$extra")
done
if [ -z "$bad" ]; then ok "the shim's and the hook's man pages name only keys they read"; else no "a man page names a key its program does not read:$bad"; fi
