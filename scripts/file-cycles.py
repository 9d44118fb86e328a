#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Circles of C files: sets of object files that call each other's
functions (a strongly connected component of "uses a symbol defined in"),
read from `nm` of the objects of a build tree.  The agent is a hub with
narrow parts (docs/ARCHITECTURE.md, "The agent's parts"): calls go one
way, and a part reaches its owner only through a function pointer it was
given, which nm does not see as a use.

    scripts/file-cycles.py [BUILD_DIR]      (default: build)
    scripts/file-cycles.py --graph DIR [BUILD_DIR]   who calls whom in DIR and below
    scripts/file-cycles.py --folders [BUILD_DIR [DOC]]  the agent's folders
                                 only, in the order of DOC's table
                                 (default: docs/ARCHITECTURE.md)

Each directory of objects (agent, cli, shim, ...) is checked on its own,
then the whole tree outside tests/ and bench/ together (a circle through
two folders), with the symbols defined in exactly one object.  Prints each
circle with the symbols each file takes from the others, and exits 1 if
there is one; 2 if there are no objects to read.

Then the agent's folders (agent/ and agent/*/): their order, top to
bottom, is the table between the agent-folders marks of
docs/ARCHITECTURE.md, and a file may call only into its own folder or a
folder below its own.  A call up (or into a folder the table does not
list) is printed with both files and the symbols, and exits 1; so is a
folder README.md whose "May call:" line names a folder that is not below
it."""
import collections
import os
import re
import subprocess
import sys

ORDER_DOC = "docs/ARCHITECTURE.md"
ORDER_BEGIN = "<!-- agent-folders -->"
ORDER_END = "<!-- /agent-folders -->"

DEFINED = set("TDBRCGSVW")


def read_objects(build):
    """The objects under BUILD whose source is still there (in the tree,
    or generated under BUILD): a build directory kept across a move of
    files holds the old objects too, and their symbols would be read
    twice."""
    objs = []
    for top, dirs, files in os.walk(build):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".o") and not f.endswith(".bpf.o"):
                o = os.path.join(top, f)
                src = os.path.relpath(o, build)[:-2] + ".c"
                if os.path.exists(src) or os.path.exists(os.path.join(build, src)):
                    objs.append(o)
    return objs


def symbols(objs):
    """{object: (defined, used)} from one nm run over OBJS."""
    table = {o: (set(), set()) for o in objs}
    for i in range(0, len(objs), 500):
        chunk = objs[i:i + 500]
        out = subprocess.run(["nm", "-A"] + chunk, capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            obj, _, rest = line.partition(":")
            p = rest.split()
            if obj not in table:
                continue
            if len(p) == 3 and p[1] in DEFINED:
                table[obj][0].add(p[2])
            elif len(p) == 2 and p[0] == "U":
                table[obj][1].add(p[1])
    return table


def graph(names, table):
    """Edges a -> b (with the symbols) where a uses what only b defines."""
    owner = collections.defaultdict(list)
    for n in names:
        for s in table[n][0]:
            owner[s].append(n)
    g = {n: collections.defaultdict(set) for n in names}
    for n in names:
        for s in table[n][1]:
            o = owner.get(s)
            if o and len(o) == 1 and o[0] != n:
                g[n][o[0]].add(s)
    return g


def circles(g):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, res, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return res


def report(scope, g, found):
    for comp in found:
        print(f"circle in {scope}: {' '.join(c + '.c' for c in comp)}")
        for a in comp:
            for b in sorted(x for x in g[a] if x in comp):
                syms = sorted(g[a][b])
                more = f" (+{len(syms) - 4} more)" if len(syms) > 4 else ""
                print(f"  {a}.c -> {b}.c: {', '.join(syms[:4])}{more}")


def print_graph(build, d):
    names = [os.path.relpath(o, build)[:-2] for o in read_objects(os.path.join(build, d))]
    syms = symbols([os.path.join(build, n + ".o") for n in names])
    table = {n: syms[os.path.join(build, n + ".o")] for n in names}
    g = graph(names, table)
    for n in sorted(g):
        print(f"{os.path.relpath(n, d)}.c -> {' '.join(sorted(os.path.relpath(x, d) for x in g[n]))}")
    return 0


def folder_order(doc=ORDER_DOC):
    """The agent's folders, top to bottom, from the first column of the
    table between the marks in DOC: ["agent", "agent/serve", ...]."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    if ORDER_BEGIN not in text or ORDER_END not in text:
        raise SystemExit(f"file-cycles: no {ORDER_BEGIN} table in {doc}")
    body = text.split(ORDER_BEGIN, 1)[1].split(ORDER_END, 1)[0]
    order = []
    for line in body.splitlines():
        m = re.match(r"\|\s*`(agent(?:/[a-z_]+)?)/`\s*\|", line)
        if m:
            order.append(m.group(1))
    if not order:
        raise SystemExit(f"file-cycles: the {ORDER_BEGIN} table in {doc} lists no folder")
    return order


def check_folders(table, order, doc=ORDER_DOC):
    """Calls between the agent's folders against ORDER; returns the count
    of wrong directions (each printed)."""
    rank = {d: i for i, d in enumerate(order)}
    names = [n for n in table if n == "agent" or n.startswith("agent/")]
    names = [n for n in names if os.path.dirname(n) == "agent" or os.path.dirname(n).startswith("agent/")]
    g = graph(names, table)
    bad = 0
    for d in sorted({os.path.dirname(n) for n in names} - set(rank)):
        print(f"folder {d}/ is not in the {ORDER_BEGIN} table of {doc}")
        bad += 1
    for a in sorted(g):
        da = os.path.dirname(a)
        for b in sorted(g[a]):
            db = os.path.dirname(b)
            if da == db or da not in rank or db not in rank or rank[db] > rank[da]:
                continue
            syms = sorted(g[a][b])
            more = f" (+{len(syms) - 4} more)" if len(syms) > 4 else ""
            print(f"call up: {a}.c -> {b}.c: {', '.join(syms[:4])}{more} ({da}/ is below {db}/ in {doc})")
            bad += 1
    for d in order[1:]:
        readme = os.path.join(d, "README.md")
        if not os.path.exists(readme):
            print(f"{readme}: missing (each folder of the agent says what it owns and may call)")
            bad += 1
            continue
        with open(readme, encoding="utf-8") as f:
            m = re.search(r"^May call: (.*)$", f.read(), re.M)
        if not m:
            print(f"{readme}: no \"May call:\" line")
            bad += 1
            continue
        for c in re.findall(r"`([a-z_]+)/`", m.group(1)):
            cd = "agent" if c == "agent" else f"agent/{c}"
            if cd not in rank or rank[cd] <= rank[d]:
                print(f"{readme}: may call {c}/, which is not below {d}/ in {doc}")
                bad += 1
    return bad


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--folders":
        build = sys.argv[2] if len(sys.argv) > 2 else "build"
        doc = sys.argv[3] if len(sys.argv) > 3 else ORDER_DOC
        table = {os.path.relpath(o, build)[:-2]: t for o, t in symbols(read_objects(build)).items()}
        bad = check_folders(table, folder_order(doc), doc)
        print(f"folder-order: {bad} calls against the order of the agent's folders")
        return 1 if bad else 0
    if len(sys.argv) > 2 and sys.argv[1] == "--graph":
        return print_graph(sys.argv[3] if len(sys.argv) > 3 else "build", sys.argv[2])
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    objs = read_objects(build)
    if not objs:
        print(f"file-cycles: no object files under '{build}' (build first: make)", file=sys.stderr)
        return 2
    table = {os.path.relpath(o, build)[:-2]: t for o, t in symbols(objs).items()}
    bydir = collections.defaultdict(list)
    for n in table:
        bydir[os.path.dirname(n)].append(n)
    total = 0
    for d in sorted(bydir):
        g = graph(bydir[d], table)
        found = circles(g)
        report(d or ".", g, found)
        total += len(found)
    tree = [n for n in table if not n.startswith(("tests/", "bench/"))]
    g = graph(tree, table)
    # Circles within one directory were reported above.
    found = [c for c in circles(g) if len({os.path.dirname(n) for n in c}) > 1]
    report("the tree", g, found)
    total += len(found)
    print(f"file-cycles: {total} circles among {len(table)} object files in {len(bydir)} directories")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
