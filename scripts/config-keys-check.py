#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent's configuration keys as its documentation names them: every
key iobatchd's parser accepts (the `keys[]` table of agent/config.c) is
in agent/iobatchd.conf.example (a `key = value` line, or one commented out
as `# key = value`) or in a key table of agent/README.md (a table whose
header starts `| key | default |`), and no key appears in either that the
parser refuses.  A key the parser lost would otherwise stay documented,
and a key it gained would be found only by reading C.

    scripts/config-keys-check.py [ROOT]      (default: the repository)

Prints each disagreement and exits 1 if there is one (standard library
only; `make docs-check` runs it)."""
import os
import re
import sys

CONFIG_C = "agent/config.c"
EXAMPLE = "agent/iobatchd.conf.example"
README = "agent/README.md"


def parser_keys(text):
    """The names of the entries of `static const struct iob_conf_key
    keys[] = { ... };`, one `{"name", ...}` each."""
    m = re.search(r"static const struct iob_conf_key keys\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if m is None:
        raise SystemExit(f"{CONFIG_C}: no 'static const struct iob_conf_key keys[]' table")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return re.findall(r'\{\s*"([^"]+)"\s*,', body)


def example_keys(text):
    """`key = value` and `# key = value` (one space after the hash: the
    continuation lines of a comment are `#` and a column of spaces)."""
    found = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"(?:# )?([a-z][a-z0-9_.]*) = ", line)
        if m:
            found.setdefault(m.group(1), n)
    return found


def readme_keys(text):
    """The first cells of the rows of every table whose header starts
    `| key | default |`."""
    found = {}
    in_table = False
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(r"\|\s*key\s*\|\s*default\s*\|", line):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if not in_table or re.match(r"\|[\s:-]*\|", line):
            continue
        m = re.match(r"\|\s*`([^`]+)`\s*\|", line)
        if m:
            found.setdefault(m.group(1), n)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")

    def read(path):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            return f.read()

    accepted = parser_keys(read(CONFIG_C))
    if not accepted:
        print(f"{CONFIG_C}: the keys[] table names no key", file=sys.stderr)
        return 1
    example = example_keys(read(EXAMPLE))
    readme = readme_keys(read(README))
    bad = []
    for k in accepted:
        if k not in example and k not in readme:
            bad.append(f"'{k}' is accepted by {CONFIG_C} but in neither {EXAMPLE} nor {README}'s key tables")
    for doc, keys in ((EXAMPLE, example), (README, readme)):
        for k, n in keys.items():
            if k not in accepted:
                bad.append(f"{doc} line {n}: '{k}' is not a key {CONFIG_C} accepts")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        return 1
    print(f"config keys: all {len(accepted)} documented, none unknown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
