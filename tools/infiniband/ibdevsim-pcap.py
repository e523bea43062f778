#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ibdevsim-pcap: check an ibdevsim remote cable's frames in a capture.

A remote cable joins ibdevsim ports in two VMs with UDP/IPv4 datagrams
(port 4792).  Capture the VMs' link, e.g. with QEMU's "-object
filter-dump,id=d,netdev=n,file=IN.pcap", then:

  convert [--port N ...] [--check] [--list] [--linktype 252|247] IN OUT
      check every frame of the cable, write its InfiniBand packets (LRH
      through VCRC, bad ones too) with their timestamps to the pcap OUT,
      count packets, SMPs, link frames and bad frames by reason; --list:
      a line per frame; --check: exit 1 on a bad frame or if no packet is
      good.  IN: pcap (not pcapng) of Ethernet, Linux SLL/SLL2 or raw IP;
      IPv4 fragments are reassembled; UDP checksums are not checked (a
      checksum-offloading guest's own frames are captured without one).
  selftest
      test the CRCs against every single-bit error and the variant
      fields, the checks, and round trips through pcap files (TAP)
  crc ICRC|VCRC HEXBYTES
      print the CRC's on-wire bytes for a packet given in hex, for ICRC
      from the LRH up to the ICRC (masked here), for VCRC through the ICRC
  mkdemo OUT
      write a capture of a NodeInfo Get SMP, its GetResp, a link frame, a
      GMP with a GRH, an IPv4-fragmented RDMA WRITE, a corrupt SMP, a DNS
      query

OUT has linktype 252 (LINKTYPE_WIRESHARK_UPPER_PDU, naming Wireshark's
"infiniband" dissector) unless --linktype 247 asks for the bare packets
of LINKTYPE_INFINIBAND, which Wireshark cannot read (tshark 4.0: "pcap:
network type 247 unknown or unsupported").  Read OUT with

  tshark -r OUT.pcap
  tshark -r OUT.pcap -V -Y 'infiniband.lrh.dlid == 1'

(fields: infiniband.lrh.{dlid,slid,vl}, infiniband.bth.{opcode,destqp,psn},
infiniband.mad.{mgmtclass,method,attributeid}).  Wireshark shows the ICRC
and VCRC without checking them; add "--disable-heuristic
rpcrdma_infiniband" if it calls small RC SENDs malformed RPC-over-RDMA.

Framing (UDP payload): kind (1 InfiniBand packet, 2 link frame), version
(1), 2 zero bytes.  Kind 1: the packet; LRH.PktLen words, then the VCRC.
Kind 2: plugged (1) or pulled (0), the sender port's state (1-4) and
NeighborMTU (1-5), 0, node GUID (8 bytes), port number, 3 zero bytes.
ICRC: zlib.crc32 of the packet up to it, variant fields all ones; VCRC:
CRC-16 0x100B, bit-reversed, init and final XOR 0xffff, of the packet
through the ICRC; both least significant byte first.
See Documentation/infiniband/ibdevsim.rst.
"""

import argparse
import os
import struct
import sys
import tempfile
import zlib
from collections import Counter

UDP_PORT = 4792
KIND_IB, KIND_LINK, VERSION, LINK_FRAME_LEN = 1, 2, 1, 20
LT_ETHER, LT_RAW, LT_SLL, LT_IPV4, LT_SLL2 = 1, 101, 113, 228, 276
LT_NAMES = {LT_ETHER: "Ethernet", LT_RAW: "raw IP", LT_SLL: "Linux SLL",
            LT_IPV4: "IPv4", LT_SLL2: "Linux SLL2"}
LT_IB, LT_EPDU = 247, 252
# LINKTYPE_WIRESHARK_UPPER_PDU: a dissector name tag, an end tag, the PDU.
EPDU_TAGS = struct.pack(">HH12sHH", 12, 12, b"infiniband", 0, 0)
MAGIC_US, MAGIC_NS = 0xa1b2c3d4, 0xa1b23c4d
STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE"}
MTUS = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
REASONS = ("short", "bad length", "bad version/kind", "bad LVer", "raw LNH",
           "bad TVer", "bad ICRC", "bad VCRC", "bad link frame")
LRH, GRH, BTH, DETH, ICRC, VCRC = 8, 40, 12, 8, 4, 2


class PcapError(Exception):
    """An input that cannot be read, or a wrong argument, with why."""


# ---------------------------------------------------------------- CRCs

def _vcrc_byte(c):
    for _ in range(8):
        c = (c >> 1) ^ 0xD008 if c & 1 else c >> 1
    return c


VCRC_TABLE = [_vcrc_byte(i) for i in range(256)]


def vcrc(data):
    """The two VCRC bytes of a packet given from its LRH through its ICRC."""
    c = 0xFFFF
    for b in data:
        c = (c >> 8) ^ VCRC_TABLE[(c ^ b) & 0xFF]
    return struct.pack("<H", c ^ 0xFFFF)


def vcrc_bitwise(data):
    """The VCRC computed a bit at a time, as defined: checks the table."""
    c = 0xFFFF
    for b in data:
        for i in range(8):
            c = (c >> 1) ^ 0xD008 if (c ^ (b >> i)) & 1 else c >> 1
    return struct.pack("<H", c ^ 0xFFFF)


def variant_fields(grh):
    """(offset, bits) the ICRC takes as all ones, from the first LRH byte."""
    if grh:
        return ([(i, 0xff) for i in range(LRH)] +       # the whole LRH
                [(8, 0x0f), (9, 0xff), (10, 0xff), (11, 0xff),  # TClass,
                 (15, 0xff), (LRH + GRH + 4, 0xff)])    # Flow, HopLmt, Resv8a
    return [(0, 0xf0), (LRH + 4, 0xff)]                 # VL, Resv8a


def icrc(pkt):
    """The four ICRC bytes of a packet given from its LRH up to its ICRC."""
    grh = len(pkt) > 1 and pkt[1] & 3 == 3
    if len(pkt) < LRH + (GRH if grh else 0) + BTH:
        raise ValueError("%d bytes are too few for an LRH, %sBTH" %
                         (len(pkt), "GRH and " if grh else ""))
    m = bytearray(pkt)
    for off, bits in variant_fields(grh):
        m[off] |= bits
    return struct.pack("<I", zlib.crc32(bytes(m)))


# ------------------------------------------------------- frame checking

def check_ib(pkt):
    """Fields and faults of one InfiniBand packet, LRH through VCRC."""
    if len(pkt) < LRH:
        return {}, ["short"]
    f = dict(vl=pkt[0] >> 4, lver=pkt[0] & 15, sl=pkt[1] >> 4,
             lnh=pkt[1] & 3)
    f["dlid"], w, f["slid"] = struct.unpack_from(">HHH", pkt, 2)
    f["pktlen"] = w & 0x7ff
    if f["lver"]:
        return f, ["bad LVer"]
    if f["lnh"] < 2:
        return f, ["raw LNH"]
    bth = LRH + (GRH if f["lnh"] == 3 else 0)
    end = f["pktlen"] * 4             # where the VCRC starts
    if len(pkt) < end + VCRC or end < bth + BTH + ICRC:
        return f, ["short"]
    if len(pkt) > end + VCRC:
        return f, ["bad length"]
    op, b1, qp, psn = struct.unpack_from(">BB3x3s1x3s", pkt, bth)
    f.update(opcode=op, pad=(b1 >> 4) & 3, tver=b1 & 15,
             destqp=int.from_bytes(qp, "big"), psn=int.from_bytes(psn, "big"))
    if f["tver"]:
        return f, ["bad TVer"]
    if bth + BTH + f["pad"] + ICRC > end:
        return f, ["short"]
    mad = bth + BTH + DETH
    if op == 0x64 and f["destqp"] <= 1 and mad + 24 <= end - ICRC:
        f["mad"] = (pkt[mad + 1], pkt[mad + 3],
                    struct.unpack_from(">H", pkt, mad + 16)[0])
    bad = []
    if icrc(pkt[:end - ICRC]) != pkt[end - ICRC:end]:
        bad.append("bad ICRC")
    if vcrc(pkt[:end]) != pkt[end:]:
        bad.append("bad VCRC")
    return f, bad


def check_frame(p):
    """(kind, fields, faults) of one UDP payload of the cable."""
    if len(p) < 4:
        return None, {}, ["short"]
    kind = p[0]
    if p[1] != VERSION or p[2:4] != b"\0\0" or kind not in (1, 2):
        return kind, {}, ["bad version/kind"]
    if kind == KIND_IB:
        return (kind,) + check_ib(p[4:])
    if len(p) != LINK_FRAME_LEN:
        return kind, {}, ["short" if len(p) < LINK_FRAME_LEN
                          else "bad length"]
    plugged, state, mtu, _, guid, port = struct.unpack_from(">BBBBQB", p, 4)
    f = dict(plugged=plugged, state=state, mtu=mtu, guid=guid, port=port)
    ok = plugged in (0, 1) and state in STATES and mtu in MTUS and \
        p[7] == 0 and p[17:20] == b"\0\0\0"
    return kind, f, [] if ok else ["bad link frame"]


def opclass(op):
    return "UD SEND" if op in (0x64, 0x65) else "RC" if op <= 0x17 \
        else "other"


# ------------------------------------------------------------ pcap I/O

class Pcap:
    """A pcap file read record by record."""

    def __init__(self, f, name, linktypes=LT_NAMES):
        self.f, self.name, self.truncated = f, name, False
        head = f.read(24)
        if head[:4] == b"\x0a\x0d\x0d\x0a":
            raise PcapError("%s is pcapng, which is not read here: "
                            "'editcap -F pcap %s X.pcap' makes a pcap" %
                            (name, name))
        for order in "<>":
            if len(head) == 24 and struct.unpack(order + "I", head[:4])[0] \
                    in (MAGIC_US, MAGIC_NS):
                break
        else:
            raise PcapError("%s is not a pcap file" % name)
        self.order = order
        self.nano = struct.unpack(order + "I", head[:4])[0] == MAGIC_NS
        self.linktype = struct.unpack(order + "I", head[20:])[0] & 0x3ffffff
        if self.linktype not in linktypes:
            raise PcapError("%s has linktype %d, not one of %s" % (
                name, self.linktype, ", ".join(map(str, linktypes))))

    def records(self):
        """(record number from 1, (sec, frac), data) of each record."""
        n = 0
        while True:
            h = self.f.read(16)
            if not h:
                return
            n += 1
            if len(h) == 16:
                sec, frac, incl, _ = struct.unpack(self.order + "IIII", h)
                if incl > 1 << 26:
                    raise PcapError("%s: record %d claims %d bytes: the file "
                                    "is corrupt" % (self.name, n, incl))
                data = self.f.read(incl)
                if len(data) == incl:
                    yield n, (sec, frac), data
                    continue
            self.truncated = True
            return


class PcapWriter:
    def __init__(self, f, linktype, nano, order="<"):
        self.f, self.order, self.count = f, order, 0
        f.write(struct.pack(order + "IHHiIII", MAGIC_NS if nano else
                            MAGIC_US, 2, 4, 0, 0, 65535, linktype))

    def write(self, ts, data):
        self.f.write(struct.pack(self.order + "IIII", ts[0], ts[1],
                                 len(data), len(data)) + data)
        self.count += 1
        return self.count


def ipv4_of(linktype, data):
    """The IPv4 packet a record carries, or None."""
    off, etype = 0, b"\x08\x00"
    if linktype == LT_ETHER:
        off, etype = 14, data[12:14]
        while etype in (b"\x81\x00", b"\x88\xa8") and len(data) >= off + 4:
            etype, off = data[off + 2:off + 4], off + 4      # VLAN tags
    elif linktype == LT_SLL:
        off, etype = 16, data[14:16]
    elif linktype == LT_SLL2:
        off, etype = 20, data[0:2]
    if etype != b"\x08\x00" or len(data) < off + 20 or data[off] >> 4 != 4:
        return None
    return data[off:]


def udp_datagrams(cap, frags):
    """(record, ts, src, dst, UDP bytes) of each UDP datagram of a capture,
    reassembled from IPv4 fragments; frags keeps those still incomplete."""
    for n, ts, data in cap.records():
        ip = ipv4_of(cap.linktype, data)
        if ip is None or ip[9] != 17:
            continue
        ihl, total = (ip[0] & 15) * 4, struct.unpack_from(">H", ip, 2)[0]
        if ihl < 20 or total < ihl or len(ip) < ihl:
            continue
        ip, src, dst = ip[:total], ip[12:16], ip[16:20]
        w = struct.unpack_from(">H", ip, 6)[0]
        more, off = w & 0x2000, (w & 0x1fff) * 8
        if not more and not off:
            yield n, ts, src, dst, ip[ihl:]
            continue
        key = (src, dst, ip[4:6])
        parts = frags.setdefault(key, [{}, None])    # offset -> data, end
        parts[0][off] = ip[ihl:]
        if not more:
            parts[1] = off + len(ip) - ihl
        if parts[1] is None:
            continue
        buf = bytearray()
        for o in sorted(parts[0]):
            if o > len(buf):
                break
            buf[o:o + len(parts[0][o])] = parts[0][o]
        else:
            if len(buf) >= parts[1]:
                del frags[key]
                yield n, ts, src, dst, bytes(buf[:parts[1]])


# ------------------------------------------------------------ convert

def describe(kind, f, bad):
    if kind == KIND_IB and f:
        s = "ib LID %d<-%d VL%d SL%d LNH%d" % (f["dlid"], f["slid"], f["vl"],
                                              f["sl"], f["lnh"])
        if "opcode" in f:
            s += " op 0x%02x QP %d PSN %d" % (f["opcode"], f["destqp"],
                                            f["psn"])
        s += " PktLen %d" % f["pktlen"]
        if "mad" in f:
            s += " MAD class 0x%02x method 0x%02x attr 0x%04x" % f["mad"]
    elif kind == KIND_LINK and f:
        s = "link %s %s MTU %s GUID 0x%016x port %d" % (
            {0: "pulled", 1: "plugged"}.get(f["plugged"], f["plugged"]),
            STATES.get(f["state"], f["state"]),
            MTUS.get(f["mtu"], "enum %d" % f["mtu"]), f["guid"], f["port"])
    else:
        s = "kind %s" % ("?" if kind is None else kind)
    return s + ": " + (", ".join(bad) if bad else "ok")


def convert_file(inp, outp, ports, linktype=LT_EPDU, listing=None):
    """Check inp's cable frames and write outp; (Counter, Pcap)."""
    prefix = EPDU_TAGS if linktype == LT_EPDU else b""
    st, frags, t0 = Counter(), {}, None
    with open(inp, "rb") as f, open(outp, "wb") as o:
        cap = Pcap(f, inp)
        w = PcapWriter(o, linktype, cap.nano)
        scale = 10 ** 9 if cap.nano else 10 ** 6
        for n, ts, src, dst, udp in udp_datagrams(cap, frags):
            if len(udp) < 8:
                continue
            sport, dport, ulen = struct.unpack_from(">HHH", udp)
            if sport not in ports and dport not in ports:
                st.update(["skipped", ("port", sport), ("port", dport)])
                continue
            st["frames"] += 1
            p = udp[8:max(ulen, 8)]
            kind, fl, bad = check_frame(p)
            out = ""
            if kind == KIND_IB and len(p) >= 4 + LRH and \
                    bad[:1] != ["bad version/kind"]:
                out = " [out %d]" % w.write(ts, prefix + p[4:])
            if bad:
                st.update(["bad"] + bad)
            elif kind == KIND_LINK:
                st["plugged" if fl["plugged"] else "pulled"] += 1
            else:
                st.update(["GRH" if fl["lnh"] == 3 else "local",
                           opclass(fl["opcode"])])
                st["SMPs"] += fl["destqp"] == 0 and fl["vl"] == 15
            if listing:
                t = ts[0] * scale + ts[1]
                t0 = t if t0 is None else t0
                listing("%5d %s %d.%d.%d.%d:%d->%d.%d.%d.%d:%d %s%s" % (
                    n, ("%.9f" if cap.nano else "%.6f") % ((t - t0) / scale),
                    *src, sport, *dst, dport, describe(kind, fl, bad), out))
        st["written"] = w.count
    # A datagram whose first fragment is the cable's and some other one
    # never came is a short frame.
    for parts, _ in frags.values():
        first = parts.get(0, b"")
        if len(first) >= 4 and ports & set(struct.unpack_from(">HH", first)):
            st.update(["frames", "bad", "short"])
        else:
            st["lost"] += 1
    return st, cap


def convert(args):
    ports = set(args.port or [UDP_PORT])
    if not all(1 <= p <= 65535 for p in ports):
        raise PcapError("a UDP port is 1 to 65535")
    st, cap = convert_file(args.input, args.output, ports, args.linktype,
                           print if args.list else None)
    pl = "/".join(str(p) for p in sorted(ports))
    print("%s: linktype %d (%s), %s timestamps; %d frames on UDP port %s, "
          "%d other UDP datagrams" %
          (args.input, cap.linktype, LT_NAMES[cap.linktype],
           "nanosecond" if cap.nano else "microsecond", st["frames"], pl,
           st["skipped"]))
    good = st["GRH"] + st["local"]
    print("ib packets: %d (GRH %d, local %d; UD SEND %d, RC %d, other %d)" %
          (good, st["GRH"], st["local"], st["UD SEND"], st["RC"],
           st["other"]))
    print("SMPs: %d" % st["SMPs"])
    print("link frames: %d (plugged %d, pulled %d)" %
          (st["plugged"] + st["pulled"], st["plugged"], st["pulled"]))
    print("bad frames: %d (%s)" %
          (st["bad"], ", ".join("%s %d" % (r, st[r]) for r in REASONS)))
    print("wrote %d InfiniBand packets (linktype %d) to %s" %
          (st["written"], args.linktype, args.output))
    if cap.truncated:
        print("warning: %s ends inside a record" % args.input)
    if st["lost"]:
        print("warning: %d IPv4 datagrams lack fragments" % st["lost"])
    seen = [k[1] for k, _ in st.most_common() if isinstance(k, tuple)]
    if not st["frames"] and seen:
        print("hint: no frame on UDP port %s; UDP ports seen: %s" %
              (pl, " ".join(map(str, seen[:6]))))
    return 1 if args.check and (st["bad"] or not good) else 0


# ------------------------------------------------------------- builders

def ib_packet(payload, vl=0, sl=0, dlid=1, slid=2, opcode=0x64, destqp=0,
              psn=0, ext=b"", grh=None):
    """A packet with its CRCs; grh: (tclass, flow, hoplmt, sgid, dgid)."""
    pad = -len(ext + payload) % 4
    body = (struct.pack(">BBHB", opcode, pad << 4, 0xffff, 0) +
            destqp.to_bytes(3, "big") + b"\x80" + psn.to_bytes(3, "big") +
            ext + payload + bytes(pad))
    if grh:
        tclass, flow, hoplmt, sgid, dgid = grh
        body = struct.pack(">IHBB16s16s", 6 << 28 | tclass << 20 | flow,
                           len(body) + ICRC, 0x1b, hoplmt, sgid,
                           dgid) + body
    pkt = struct.pack(">BBHHH", vl << 4, sl << 4 | (3 if grh else 2), dlid,
                      (LRH + len(body) + ICRC) // 4, slid) + body
    pkt += icrc(pkt)
    return pkt + vcrc(pkt)


def mad(mclass, method, attr, tid, data, attrmod=0):
    """A 256-byte MAD after its DETH (Q_Key 0x80010000 unless QP0)."""
    qkey, srcqp = (0, 0) if mclass in (0x01, 0x81) else (0x80010000, 1)
    return struct.pack(">IIBBBBHHQHHI", qkey, srcqp, 1, mclass, 1, method,
                       0, 0, tid, attr, 0, attrmod) + data.ljust(232, b"\0")


def nodeinfo_smp(method, tid, guid):
    ni = struct.pack(">BBBBQQQHHIB3s", 1, 1, 1, 1, guid, guid, guid + 1, 64,
                     0x1017, 0, 1, b"\x00\x02\xc9") if method == 0x81 else b""
    return mad(0x01, method, 0x0011, tid, bytes(40) + ni)


def link_frame(plugged, state, mtu, guid, port):
    return struct.pack(">BBHBBBBQB3x", KIND_LINK, VERSION, 0, plugged,
                       state, mtu, 0, guid, port)


def ip_checksum(b):
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b + bytes(len(b) % 2)))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def udp_ipv4(src, dst, port, payload, ident, mtu=1500):
    """The IPv4 packets (fragments past mtu) of one UDP datagram."""
    udp = struct.pack(">HHHH", port, port, 8 + len(payload), 0) + payload
    step, out = (mtu - 20) // 8 * 8, []
    for off in range(0, len(udp), step):
        part = udp[off:off + step]
        more = 0x2000 if off + step < len(udp) else 0
        h = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(part), ident,
                        more | off // 8, 64, 17, 0, src, dst)
        out.append(h[:10] + struct.pack(">H", ip_checksum(h)) + h[12:] +
                   part)
    return out


def wrap(linktype, ip, outgoing):
    """ip as a record of the linktype."""
    mac = bytes.fromhex("5254000000010000")
    if linktype == LT_ETHER:
        macs = mac[:6] + bytes.fromhex("525400000002")
        return (macs[6:] + macs[:6] if outgoing else macs) + \
            b"\x08\x00" + ip.ljust(46, b"\0")
    if linktype == LT_SLL:
        return struct.pack(">HHH8sH", 4 if outgoing else 0, 1, 6, mac,
                           0x0800) + ip
    if linktype == LT_SLL2:
        return struct.pack(">HHIHBB8s", 0x0800, 0, 2, 1,
                           4 if outgoing else 0, 6, mac) + ip
    return ip


GUID_A, GUID_B = 0x0002c90300001001, 0x0002c90300002001


def demo_frames():
    """(sent by A, UDP payload) of the demonstration capture."""
    get = ib_packet(nodeinfo_smp(0x01, 0x1234, 0), vl=15, dlid=2, slid=1)
    resp = ib_packet(nodeinfo_smp(0x81, 0x1234, GUID_B), vl=15, dlid=1,
                     slid=2)
    gids = [bytes.fromhex("fe80000000000000") + g.to_bytes(8, "big")
            for g in (GUID_A + 1, GUID_B + 1)]
    gmp = ib_packet(mad(0x04, 0x01, 0x0012, 0x99, bytes(40), 1), dlid=2,
                    slid=1, destqp=1, grh=(0, 0x12345, 255) + tuple(gids))
    write = ib_packet(bytes(range(256)) * 16, dlid=2, slid=1, opcode=0x0a,
                      destqp=0x11, psn=100,
                      ext=struct.pack(">QII", 0x7f0000001000, 0x1234, 4096))
    bad = bytearray(get)
    bad[LRH + BTH + DETH + 30] ^= 0x10          # a bit of the SMP's M_Key
    hdr = bytes([KIND_IB, VERSION, 0, 0])
    return [(True, hdr + get), (False, hdr + resp),
            (True, link_frame(1, 4, 5, GUID_A, 1)), (True, hdr + gmp),
            (True, hdr + write), (True, hdr + bad)]


def write_capture(path, frames, linktype=LT_ETHER, nano=False, order="<",
                  port=UDP_PORT):
    """A capture of the frames between 10.0.0.1 (A) and 10.0.0.2, then a
    DNS query; the timestamp of each frame's last record."""
    stamps, i = [], 0
    ip_a, ip_b = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    with open(path, "wb") as f:
        w = PcapWriter(f, linktype, nano, order)
        for outgoing, payload in frames + [(True, None)]:
            src, dst = (ip_a, ip_b) if outgoing else (ip_b, ip_a)
            ips = udp_ipv4(src, dst, 53, b"\x12\x34\1" + bytes(9), 7) \
                if payload is None else \
                udp_ipv4(src, dst, port, payload, 0x100 + i)
            for ip in ips:
                ts = (1700000000 + i // 3,
                      i * 1237 % (10 ** 9 if nano else 10 ** 6))
                w.write(ts, wrap(linktype, ip, outgoing))
                i += 1
            stamps.append(ts)
    return stamps[:-1]


def mkdemo(args):
    write_capture(args.output, demo_frames())
    print("wrote %s: %d cable frames (1 corrupt) and a DNS query" %
          (args.output, len(demo_frames())))


# ------------------------------------------------------------- selftest

def icrc_by_fields(p):
    """The ICRC's masking written out field by field, to check icrc()."""
    ff = b"\xff"
    if p[1] & 3 == 3:       # LRH; GRH IPVer|TClass, TClass|Flow, PayLen,
        p = ff * 8 + bytes([p[8] | 15]) + ff * 3 + p[12:15] + ff + \
            p[16:52] + ff + p[53:]      # NxtHdr, HopLmt, GIDs; BTH
    else:
        p = bytes([p[0] | 0xf0]) + p[1:12] + ff + p[13:]
    return struct.pack("<I", zlib.crc32(p))


def flip_test(pkt):
    """Bits whose flip leaves the VCRC good, or the ICRC good outside the
    variant fields (and the LNH, which moves them)."""
    grh, end = pkt[1] & 3 == 3, len(pkt) - VCRC
    masked = {o * 8 + b for o, bits in variant_fields(grh) for b in range(8)
              if bits >> b & 1} | {8, 9}
    fails = []
    for i in range(len(pkt) * 8):
        p = bytearray(pkt)
        p[i // 8] ^= 1 << (i % 8)
        try:
            good_i = icrc(p[:end - ICRC]) == p[end - ICRC:end]
        except ValueError:          # LNH flipped to 3: no room for a GRH
            good_i = False
        if vcrc(p[:end]) == p[end:] or \
                (good_i and i < end * 8 and i not in masked):
            fails.append(i)
    return fails


def selftest(args):
    res = []

    def t(ok, what):
        res.append((bool(ok), what))

    data = bytes(range(256)) * 3
    t(all(vcrc(data[:n]) == vcrc_bitwise(data[:n])
          for n in (0, 1, 2, 7, 64, 700)),
      "the VCRC table agrees with the bit-serial CRC-16 0x100B")
    gid = bytes(range(16))
    pkts = {"local UD SMP VL15": ib_packet(nodeinfo_smp(1, 7, 0), vl=15,
                                           dlid=2, slid=1),
            "GRH UD GMP": ib_packet(mad(0x04, 1, 0x12, 9, b""), sl=3,
                                    destqp=1, grh=(0x40, 0xabcde, 64, gid,
                                                   gid[::-1])),
            "RC SEND with pad 3": ib_packet(b"hello", opcode=0x04,
                                            destqp=0x42, psn=0xabcdef)}
    for name, pkt in pkts.items():
        kind, f, bad = check_frame(b"\x01\x01\0\0" + pkt)
        t(kind == 1 and not bad, "%s verifies (%d bytes)" % (name, len(pkt)))
        t(icrc(pkt[:-6]) == icrc_by_fields(pkt[:-6]), "%s: the ICRC "
          "masks the fields the rule names" % name)
        fails = flip_test(pkt)
        t(not fails, "%s: each of its %d single-bit flips breaks the VCRC, "
          "and the ICRC too outside the variant fields%s" %
          (name, len(pkt) * 8, " (bits %s)" % fails[:5] if fails else ""))
    smp, g = pkts["local UD SMP VL15"], pkts["GRH UD GMP"]
    for what, pkt, off, mask, val in (
            ("VL", smp, 0, 0xf0, 0x50), ("Resv8a", smp, 12, 0xff, 0x33),
            ("GRH HopLmt", g, 15, 0xff, 0x01),
            ("GRH FlowLabel", g, 10, 0x0f, 0x0b),
            ("GRH TClass", g, 9, 0xf0, 0x20),
            ("LRH DLID of a GRH packet", g, 3, 0xff, 0x77),
            ("Resv8a of a GRH packet", g, 52, 0xff, 0x80)):
        p = bytearray(pkt)
        p[off] = (p[off] & ~mask & 0xff) | val
        bad = check_frame(b"\x01\x01\0\0" + p)[2]
        t(p != pkt and bad == ["bad VCRC"], "%s changed alone: ICRC good, "
          "VCRC bad (%s)" % (what, ", ".join(bad) or "ok"))
    rc, h = pkts["RC SEND with pad 3"], b"\x01\x01\0\0"
    for want, frame in (
            ("short", h[:3]), ("short", h + rc[:-1]),
            ("bad length", h + rc + b"\0"),
            ("bad version/kind", b"\x01\x02\0\0" + rc),
            ("bad version/kind", b"\x03\x01\0\0" + rc),
            ("bad LVer", h + bytes([rc[0] | 1]) + rc[1:]),
            ("raw LNH", h + rc[:1] + bytes([rc[1] & ~3 | 1]) + rc[2:]),
            ("bad TVer", h + rc[:9] + bytes([rc[9] | 1]) + rc[10:]),
            ("bad link frame", link_frame(1, 7, 5, 1, 1)),
            ("bad length", link_frame(1, 4, 5, 1, 1) + b"\0")):
        got = check_frame(frame)[2]
        t(got[:1] == [want], "a frame with %s is reported so (%s)" %
          (want, ", ".join(got) or "ok"))
    t(check_frame(link_frame(0, 1, 5, GUID_A, 2))[2] == [],
      "a link frame of a pulled end verifies")
    frames = demo_frames()
    want = [p[4:] for _, p in frames if p[0] == KIND_IB]
    counts = Counter({"frames": 6, "bad": 1, "SMPs": 2, "GRH": 1,
                      "local": 3, "UD SEND": 3, "RC": 1, "plugged": 1,
                      "skipped": 1, "written": 5, "bad ICRC": 1,
                      "bad VCRC": 1, ("port", 53): 2})
    with tempfile.TemporaryDirectory() as d:
        inp, outp = os.path.join(d, "in.pcap"), os.path.join(d, "out.pcap")
        for lt in (LT_ETHER, LT_SLL, LT_SLL2, LT_RAW):
            for nano, order, olt in ((False, "<", LT_EPDU),
                                     (True, ">", LT_IB)):
                stamps = write_capture(inp, frames, lt, nano, order)
                st, _ = convert_file(inp, outp, {UDP_PORT}, olt)
                with open(outp, "rb") as f:
                    cap = Pcap(f, outp, (olt,))
                    recs = list(cap.records())
                prefix = EPDU_TAGS if olt == LT_EPDU else b""
                t([r[2] for r in recs] == [prefix + p for p in want] and
                  [r[1] for r in recs] == [s for s, (_, p) in
                                           zip(stamps, frames)
                                           if p[0] == KIND_IB] and
                  cap.nano == nano and +st == counts,
                  "round trip from linktype %d (%s, %s-endian, IPv4 "
                  "fragments) to %d: %d packets, timestamps kept" %
                  (lt, "ns" if nano else "us", "big" if order == ">"
                   else "little", olt, len(recs)))
        write_capture(inp, frames[:1], port=9999)
        st, _ = convert_file(inp, outp, {9999})
        t(st["frames"] == 1 and st["SMPs"] == 1 and st["skipped"] == 1,
          "another UDP port is read")
        with open(inp, "wb") as f:
            f.write(b"\x0a\x0d\x0d\x0a" + bytes(28))
        try:
            convert_file(inp, outp, {UDP_PORT})
            t(False, "pcapng is refused")
        except PcapError as e:
            t("pcapng" in str(e), "pcapng is refused: %s" %
              str(e).replace(d, "DIR"))
    print("1..%d" % len(res))
    for i, (ok, what) in enumerate(res, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    return 0 if all(ok for ok, _ in res) else 1


def crc(args):
    text = "".join(args.hexbytes).replace("0x", "").replace(":", "")
    try:
        b = bytes.fromhex(text.replace(",", ""))
    except ValueError as e:
        raise PcapError("not hex bytes: %s" % e)
    try:
        print((icrc(b) if args.which == "ICRC" else vcrc(b)).hex())
    except ValueError as e:
        raise PcapError(str(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("convert", help="check a capture's cable frames and "
                       "write their InfiniBand packets to a pcap")
    p.add_argument("--port", type=int, action="append",
                   help="UDP port of the cable (default %d; repeatable)" %
                   UDP_PORT)
    p.add_argument("--check", action="store_true",
                   help="exit 1 on a bad frame or no good InfiniBand packet")
    p.add_argument("--list", action="store_true", help="a line per frame")
    p.add_argument("--linktype", type=int, choices=(LT_EPDU, LT_IB),
                   default=LT_EPDU, help="of the output: 252 (default), "
                   "which Wireshark reads, or 247, LINKTYPE_INFINIBAND")
    p.add_argument("input")
    p.add_argument("output")
    sub.add_parser("selftest", help="test the CRCs, checks and pcap I/O")
    p = sub.add_parser("crc", help="print the ICRC or VCRC bytes of a packet")
    p.add_argument("which", choices=("ICRC", "VCRC"))
    p.add_argument("hexbytes", nargs="+")
    p = sub.add_parser("mkdemo", help="write a small capture to try out")
    p.add_argument("output")
    args = ap.parse_args()
    try:
        return {"convert": convert, "selftest": selftest, "crc": crc,
                "mkdemo": mkdemo}[args.cmd](args) or 0
    except (PcapError, OSError) as e:
        print("ibdevsim-pcap: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
