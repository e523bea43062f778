#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ibdevsim-topo: build an ibdevsim fabric from a topology file.

The topology file is what ibnetdiscover prints (run it on a real fabric:
"ibnetdiscover > fabric.topo").  Subcommands:

  load FILE        make the file's switches, HCAs and cables in ibdevsim
                   (/sys/bus/ibdevsim), with the file's node GUIDs, port
                   GUIDs, port counts and node descriptions
  fattree ...      print a fat tree in ibnetdiscover's format
  compare A B      say whether two topology files describe the same
                   fabric: nodes, GUIDs, port counts, descriptions, links
  summary FILE     count a file's nodes, ports and links

See Documentation/infiniband/ibdevsim.rst.
"""

import argparse
import os
import re
import sys
import time

SYS = "/sys/bus/ibdevsim"
MAX_PORTS = 254         # IBDEVSIM_MAX_PORTS: a switch's
MAX_HCA_PORTS = 36      # IBDEVSIM_MAX_HCA_PORTS
MAX_FT_ENDS = 65536     # HCA ports of a generated fat tree (its GUID plan)
DESC_MAX = 64           # the NodeDescription attribute's bytes


class TopoError(Exception):
    """A topology that cannot be read or built, with where and why."""


class Node:
    """A switch or HCA of a topology file."""

    def __init__(self, kind, guid, nports, desc, where):
        self.kind = kind            # "Switch" or "Ca"
        self.guid = guid
        self.nports = nports
        self.desc = desc
        self.where = where          # "file:line" of its header
        self.port_guids = {}        # port number -> GUID (HCAs)

    def short(self):
        return "%s 0x%016x" % (self.kind, self.guid)


class Topology:
    """Nodes by GUID, links as {(guid, port): (guid, port)}, both ways."""

    def __init__(self):
        self.nodes = {}
        self.order = []
        self.peer = {}
        self.far_guids = []     # (node GUID, port, port GUID, where)

    def link(self, a, b, where):
        for x, y in ((a, b), (b, a)):
            old = self.peer.get(x)
            if old is not None and old != y:
                raise TopoError("%s: port %d of 0x%016x is cabled to both "
                                "0x%016x port %d and 0x%016x port %d" %
                                (where, x[1], x[0], old[0], old[1],
                                 y[0], y[1]))
            self.peer[x] = y

    def links(self):
        """Each link once, as ((guid, port), (guid, port)), lower end first."""
        return sorted({tuple(sorted((a, b))) for a, b in self.peer.items()})


HDR = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"'
                 r'(?:\s*#\s*"(.*)")?')
# [1] or [1][ext 3], an optional (local port GUID), then the far end.
PORT = re.compile(r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+'
                  r'"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\[ext \d+\])?'
                  r'(?:\(([0-9a-fA-F]+)\))?')
KEYVAL = re.compile(r'^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=')


def parse(path, text=None):
    """Read an ibnetdiscover topology file; TopoError on what it cannot."""
    if text is None:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    topo = Topology()
    cur = None
    for n, raw in enumerate(text.splitlines(), 1):
        where = "%s:%d" % (path, n)
        line = raw.strip()
        if not line or line.startswith("#") or KEYVAL.match(line):
            continue
        m = HDR.match(line)
        if m:
            kind, nports, letter, guid, desc = m.groups()
            if kind == "Rt":
                raise TopoError("%s: routers are not simulated" % where)
            guid = int(guid, 16)
            nports = int(nports)
            most = MAX_PORTS if kind == "Switch" else MAX_HCA_PORTS
            if not 1 <= nports <= most:
                raise TopoError("%s: %s 0x%016x has %d ports; ibdevsim's "
                                "have 1 to %d" %
                                (where, kind, guid, nports, most))
            if (letter == "S") != (kind == "Switch"):
                raise TopoError("%s: %s named %s-..." % (where, kind, letter))
            if guid in topo.nodes:
                raise TopoError("%s: node GUID 0x%016x is already %s" %
                                (where, guid, topo.nodes[guid].where))
            desc = desc if desc is not None else ""
            if len(desc.encode()) > DESC_MAX:
                raise TopoError("%s: description longer than %d bytes" %
                                (where, DESC_MAX))
            cur = Node(kind, guid, nports, desc, where)
            topo.nodes[guid] = cur
            topo.order.append(cur)
            continue
        m = PORT.match(line)
        if not m:
            raise TopoError("%s: not a line of ibnetdiscover's output: %s" %
                            (where, raw))
        if cur is None:
            raise TopoError("%s: a port line before any node" % where)
        port, lguid, rletter, rguid, rport, rpguid = m.groups()
        port, rguid, rport = int(port), int(rguid, 16), int(rport)
        if not 1 <= port <= cur.nports:
            raise TopoError("%s: port %d of a %d-port node" %
                            (where, port, cur.nports))
        if lguid and cur.kind == "Ca":
            cur.port_guids[port] = int(lguid, 16)
        topo.link((cur.guid, port), (rguid, rport), where)
        if rpguid and rletter == "H":
            topo.far_guids.append((rguid, rport, int(rpguid, 16), where))
    check(path, topo)
    return topo


def check(path, topo):
    """Every link's ends exist; HCA port GUIDs are consecutive."""
    for (g, p), (rg, rp) in topo.peer.items():
        far = topo.nodes.get(rg)
        if far is None:
            raise TopoError("%s: 0x%016x port %d is cabled to 0x%016x, "
                            "which has no node line" % (path, g, p, rg))
        if not 1 <= rp <= far.nports:
            raise TopoError("%s: a cable to port %d of %s, which has %d" %
                            (path, rp, far.short(), far.nports))
    for rg, rp, pg, where in topo.far_guids:
        node = topo.nodes[rg]
        old = node.port_guids.setdefault(rp, pg)
        if old != pg:
            raise TopoError("%s: port %d of %s has GUID 0x%016x here and "
                            "0x%016x at %s" % (where, rp, node.short(), pg,
                                               old, node.where))
    guids = {}
    for node in topo.order:
        base = hca_port_base(node)
        if node.kind == "Switch":
            ports = {node.guid: 0}
        else:
            ports = {base + i - 1: i for i in range(1, node.nports + 1)}
        for g in ports:
            if g in guids and guids[g] is not node:
                raise TopoError("%s: port GUID 0x%016x of %s is also one "
                                "of %s" % (node.where, g, node.short(),
                                           guids[g].short()))
            guids[g] = node


def hca_port_base(node):
    """The GUID of an HCA's port 1, from the GUIDs the file names."""
    if node.kind == "Switch":
        return node.guid
    if not node.port_guids:
        return node.guid + 1
    bases = {g - p + 1 for p, g in node.port_guids.items()}
    if len(bases) != 1:
        raise TopoError("%s: the port GUIDs of %s are not consecutive; "
                        "ibdevsim numbers an HCA's ports from one GUID" %
                        (node.where, node.short()))
    return bases.pop()


# ---------------------------------------------------------------- load

def sysfs_write(attr, value):
    with open(attr, "w", encoding="utf-8") as f:
        f.write(value)


def existing_ids():
    try:
        names = os.listdir(os.path.join(SYS, "devices"))
    except FileNotFoundError:
        raise TopoError("%s is missing: modprobe ibdevsim first" % SYS)
    return {int(n[4:]) for n in names if n.startswith("node")}


def load(args):
    topo = parse(args.file)
    used = existing_ids()
    first = args.first_id if args.first_id is not None else \
        max(used, default=0) + 1
    ids = {}
    for i, node in enumerate(topo.order):
        ids[node.guid] = first + i
    clash = used & set(ids.values())
    if clash:
        raise TopoError("node numbers in use: %s" % sorted(clash)[:8])
    made = []
    t0 = time.monotonic()
    try:
        for node in topo.order:
            nid = ids[node.guid]
            if node.kind == "Switch":
                sysfs_write(os.path.join(SYS, "new_switch"), "%d %d 0x%x" %
                            (nid, node.nports, node.guid))
            else:
                sysfs_write(os.path.join(SYS, "new_hca"),
                            "%d %d 0x%x 0x%x" % (nid, node.nports,
                                                 node.guid,
                                                 hca_port_base(node)))
            made.append(nid)
            sysfs_write(os.path.join(SYS, "devices", "node%d" % nid,
                                     "node_desc"), node.desc)
        t1 = time.monotonic()
        for (g, p), (rg, rp) in topo.links():
            sysfs_write(os.path.join(SYS, "new_cable"), "%d %d %d %d" %
                        (ids[g], p, ids[rg], rp))
    except OSError as e:
        for nid in reversed(made):
            try:
                sysfs_write(os.path.join(SYS, "del_node"), str(nid))
            except OSError:
                pass
        raise TopoError("ibdevsim refused the fabric (%s); the %d nodes "
                        "made are deleted again" % (e, len(made)))
    t2 = time.monotonic()
    sw = sum(1 for n in topo.order if n.kind == "Switch")
    print("ibdevsim-topo: %d switches, %d HCAs (%d ports), %d cables; "
          "nodes %d-%d; nodes %.1f s, cables %.1f s" %
          (sw, len(topo.order) - sw,
           sum(n.nports for n in topo.order if n.kind == "Ca"),
           len(topo.links()), first, first + len(topo.order) - 1,
           t1 - t0, t2 - t1))
    if args.map:
        with open(args.map, "w", encoding="utf-8") as f:
            for node in topo.order:
                f.write("%d 0x%016x %s\n" % (ids[node.guid], node.guid,
                                             node.kind))


# ------------------------------------------------------------- fat tree

def fattree_shape(hosts, radix, levels):
    """(leaves, hosts per leaf, uplinks per leaf, spines) of a fat tree
    of 1 or 2 levels."""
    if levels == 1:
        if hosts > radix:
            raise TopoError("one switch of %d ports cannot take %d hosts" %
                            (radix, hosts))
        return 1, hosts, 0, 0
    # Half the ports down, half up, as long as every spine can reach
    # every leaf; beyond that, more hosts per leaf (oversubscribed).
    for down in range(max(radix // 2, 1), radix):
        leaves = -(-hosts // down)
        if leaves <= radix:
            break
    else:
        raise TopoError("%d hosts need more than 2 levels of %d-port "
                        "switches (--levels 3)" % (hosts, radix))
    down = -(-hosts // leaves)
    up = radix - down
    spines = max(1, -(-leaves * up // radix))
    while leaves * -(-up // spines) > radix:
        spines += 1
    return leaves, down, up, spines


def fattree3_shape(hosts, radix):
    """The shape of a 3-level fat tree (a folded Clos of pods), as a dict.

    Leaves take half their ports down (fewer when the hosts share them
    out evenly) and cable one uplink to each aggregation switch of their
    pod; an aggregation switch has a port down to each leaf of its pod
    and as many up, to its core group (the cores that the aggregation
    switches of the same index in every pod share), spread so that every
    core reaches every pod.  Nothing is oversubscribed: the largest tree
    has radix^3 / 4 hosts.
    """
    half = radix // 2                   # at least 1: fattree() checks
    leaves = -(-hosts // half)
    pods = -(-leaves // half)
    if pods > radix:
        raise TopoError("%d hosts need more than 3 levels of %d-port "
                        "switches (at most %d)" %
                        (hosts, radix, radix * half * half))
    down = -(-hosts // leaves)
    up = radix - down
    per_pod = -(-leaves // pods)        # leaves of the largest pod
    cores = max(1, -(-pods * per_pod // radix))
    while pods * -(-per_pod // cores) > radix:
        cores += 1
    return {"leaves": leaves, "down": down, "up": up, "pods": pods,
            "per_pod": per_pod, "aggs": up, "cores": cores}


def fattree(args):
    if not 1 <= args.hca_ports <= MAX_HCA_PORTS:
        raise TopoError("HCA ports must be 1 to %d" % MAX_HCA_PORTS)
    if args.radix < 2 or args.radix > MAX_PORTS:
        raise TopoError("switch radix must be 2 to %d" % MAX_PORTS)
    ends = args.hosts * args.hca_ports
    if not 1 <= ends <= MAX_FT_ENDS:
        raise TopoError("fat trees of 1 to %d HCA ports are made" %
                        MAX_FT_ENDS)
    base = args.guid_base
    hca = [base + 0x1000 + i * 0x40 for i in range(args.hosts)]
    descs = {g: "ft-host%d HCA-1" % i for i, g in enumerate(hca)}
    peer = {}

    def cable(a, pa, b, pb):
        peer[(a, pa)] = (b, pb)
        peer[(b, pb)] = (a, pa)

    if args.levels == 3:
        shape = fattree3_shape(ends, args.radix)
        leaves, down = shape["leaves"], shape["down"]
        leaf = [base + 0x800000 + i * 0x40 for i in range(leaves)]
        upper = [base + 0x2000000 + i * 0x40
                 for i in range(shape["pods"] * shape["aggs"])]
        top = [base + 0x3000000 + i * 0x40
               for i in range(shape["aggs"] * shape["cores"])]
        descs.update({g: "ft leaf %d" % i for i, g in enumerate(leaf)})
        descs.update({g: "ft pod %d agg %d" % divmod(i, shape["aggs"])
                      for i, g in enumerate(upper)})
        descs.update({g: "ft core %d" % i for i, g in enumerate(top)})
        comment = ("# %d pods of up to %d leaves; %d hosts and %d uplinks "
                   "a leaf, %d aggregation switches a pod, %d cores" %
                   (shape["pods"], shape["per_pod"], down, shape["up"],
                    shape["aggs"], len(top)))
    else:
        leaves, down, up, spines = fattree_shape(ends, args.radix,
                                                 args.levels)
        leaf = [base + 0x800000 + i * 0x40 for i in range(leaves)]
        upper = [base + 0x900000 + i * 0x40 for i in range(spines)]
        top = []
        descs.update({g: "ft leaf %d" % i for i, g in enumerate(leaf)})
        descs.update({g: "ft spine %d" % i for i, g in enumerate(upper)})
        comment = ("# %d leaves of %d hosts, %d uplinks each, %d spines" %
                   (leaves, down, up, spines))

    # Every host's port 1 first, then every port 2 and so on, filling the
    # leaves in turn: a multi-rail host's ports are on different leaves.
    nextport = {g: 1 for g in leaf + upper + top}
    for e in range(ends):
        p, h = e // args.hosts + 1, e % args.hosts
        lf = leaf[e // down]
        cable(hca[h], p, lf, nextport[lf])
        nextport[lf] += 1
    if args.levels == 2:
        for i, lf in enumerate(leaf):
            for k in range(up):
                sp = upper[(i + k) % spines]
                cable(lf, down + 1 + k, sp, nextport[sp])
                nextport[sp] += 1
    elif args.levels == 3:
        fattree3_cables(shape, leaf, upper, top, cable, nextport)

    out = ["#", "# Topology file: generated by ibdevsim-topo fattree "
           "--hosts %d --radix %d --levels %d --hca-ports %d" %
           (args.hosts, args.radix, args.levels, args.hca_ports),
           comment, "#", ""]

    hcas = set(hca)

    def name(g):
        return ('"H-%016x"' if g in hcas else '"S-%016x"') % g

    for g in leaf + upper + top:
        desc = descs[g]
        out += ["vendid=0x2c9", "devid=0xbd36", "sysimgguid=0x%x" % g,
                "switchguid=0x%x(%x)" % (g, g),
                'Switch\t%d %s\t\t# "%s" base port 0 lid 0 lmc 0' %
                (args.radix, name(g), desc)]
        for p in range(1, args.radix + 1):
            if (g, p) not in peer:
                continue
            rg, rp = peer[(g, p)]
            rpg = "(%x) " % (rg + rp) if rg in hcas else ""
            out.append('[%d]\t%s[%d]%s\t\t# "%s" lid 0 4xEDR' %
                       (p, name(rg), rp, rpg, descs[rg]))
        out.append("")
    for h, g in enumerate(hca):
        out += ["vendid=0x2c9", "devid=0x1017", "sysimgguid=0x%x" % g,
                "caguid=0x%x" % g,
                'Ca\t%d %s\t\t# "%s"' % (args.hca_ports, name(g),
                                        descs[g])]
        for p in range(1, args.hca_ports + 1):
            rg, rp = peer[(g, p)]
            out.append('[%d](%x) \t%s[%d]\t\t# lid 0 lmc 0 "%s" lid 0 '
                       '4xEDR' % (p, g + p, name(rg), rp, descs[rg]))
        out.append("")
    sys.stdout.write("\n".join(out))


def fattree3_cables(shape, leaf, agg, core, cable, nextport):
    """Cable a 3-level tree's leaves to its aggregation switches, and
    those to the cores.  Pods take consecutive leaves, as evenly as the
    count allows."""
    pods, naggs, ncores = shape["pods"], shape["aggs"], shape["cores"]
    down, per_pod = shape["down"], shape["per_pod"]
    first = 0
    for q in range(pods):
        count = len(leaf) // pods + (q < len(leaf) % pods)
        for j, lf in enumerate(leaf[first:first + count]):
            for u in range(naggs):
                cable(lf, down + 1 + u, agg[q * naggs + u], j + 1)
        first += count
        # Each aggregation switch has per_pod ports up, whatever its pod's
        # size, and its uplink v goes to core v mod cores of its group.
        for u in range(naggs):
            ag = agg[q * naggs + u]
            for v in range(per_pod):
                co = core[u * ncores + v % ncores]
                cable(ag, per_pod + 1 + v, co, nextport[co])
                nextport[co] += 1


# ------------------------------------------------------------- compare

FIELDS = ("type", "port count", "description", "port 1 GUID")


def describe(topo):
    nodes = {g: (n.kind, n.nports, n.desc, hca_port_base(n))
             for g, n in topo.nodes.items()}
    return nodes, set(topo.links())


def compare(args):
    a, b = parse(args.a), parse(args.b)
    na, la = describe(a)
    nb, lb = describe(b)
    diffs = []
    for g in sorted(set(na) | set(nb)):
        if g not in nb:
            diffs.append("only in %s: %s" % (args.a, a.nodes[g].short()))
        elif g not in na:
            diffs.append("only in %s: %s" % (args.b, b.nodes[g].short()))
        else:
            for field, x, y in zip(FIELDS, na[g], nb[g]):
                if x != y:
                    show = "0x%016x" if field == "port 1 GUID" else "%r"
                    diffs.append("0x%016x: %s %s in %s, %s in %s" %
                                 (g, field, show % x, args.a, show % y,
                                  args.b))
    for link in sorted(la ^ lb):
        (g, p), (rg, rp) = link
        diffs.append("link 0x%016x[%d] - 0x%016x[%d] only in %s" %
                     (g, p, rg, rp, args.a if link in la else args.b))
    for d in diffs[:args.max]:
        print(d)
    if len(diffs) > args.max:
        print("... and %d more differences" % (len(diffs) - args.max))
    sw = sum(1 for n in a.order if n.kind == "Switch")
    print("%s: %d switches, %d HCAs, %d links; %s" %
          ("same" if not diffs else "different", sw, len(a.order) - sw,
           len(la), "%d differences" % len(diffs) if diffs else
           "every node, GUID, port count, description and link matches"))
    return 1 if diffs else 0


def summary(args):
    topo = parse(args.file)
    sw = [n for n in topo.order if n.kind == "Switch"]
    ca = [n for n in topo.order if n.kind == "Ca"]
    print("switches %d HCAs %d hca_ports %d links %d" %
          (len(sw), len(ca), sum(n.nports for n in ca), len(topo.links())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("load", help="build a topology file's fabric")
    p.add_argument("file")
    p.add_argument("--first-id", type=int,
                   help="number of the first node (default: after the "
                   "highest in use)")
    p.add_argument("--map", help="write 'ID GUID KIND' lines to this file")
    p = sub.add_parser("fattree", help="print a fat tree's topology")
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--radix", type=int, default=36)
    p.add_argument("--levels", type=int, default=2, choices=(1, 2, 3))
    p.add_argument("--hca-ports", type=int, default=1)
    p.add_argument("--guid-base", type=lambda s: int(s, 0),
                   default=0x0002c90300000000)
    p = sub.add_parser("compare", help="compare two topology files")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--max", type=int, default=20,
                   help="differences printed (default 20)")
    p = sub.add_parser("summary", help="count a topology file")
    p.add_argument("file")
    args = ap.parse_args()
    try:
        return {"load": load, "fattree": fattree, "compare": compare,
                "summary": summary}[args.cmd](args) or 0
    except TopoError as e:
        print("ibdevsim-topo: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
