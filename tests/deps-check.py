# SPDX-License-Identifier: Apache-2.0
"""The tools the scripts under the given folders ask for, one a line.

Read from `iob_need TOOL...`, `command -v TOOL`, and the word lists of
`for t in TOOL...; do command -v "$t"` loops; comment lines are skipped.
Names given on standard input (the project's own programs) are left out.
"""
import os
import re
import sys

WORD = re.compile(r"^[A-Za-z][A-Za-z0-9._+-]*$")


def words(s):
    s = re.split(r"[;|&#)]", s, maxsplit=1)[0]
    return [w for w in s.split() if WORD.match(w)]


def main():
    own = set(sys.stdin.read().split())
    found = set()
    for top in sys.argv[1:]:
        for dirpath, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(".sh"):
                    continue
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    lines = [l for l in fh.read().splitlines() if not l.lstrip().startswith("#")]
                for line in lines:
                    m = re.match(r"\s*iob_need\s+(.*)", line)
                    if m:
                        found.update(words(m.group(1)))
                    found.update(re.findall(r"command -v ([A-Za-z][A-Za-z0-9._+-]*)", line))
                text = "\n".join(lines)
                # the loop's body may start on the next line
                for m in re.finditer(r"for (\w+) in ([^;\n]*);\s*do\b(.{0,200})", text, re.S):
                    if re.search(r'command -v "?\$\{?%s\b' % m.group(1), m.group(3)):
                        found.update(words(m.group(2)))
    print("\n".join(sorted(found - own)))


main()
