#!/usr/bin/python3
"""pictures.py: the checks of tests/e2e/pictures.sh, one subcommand each.

  pictures.py model OUT.onnx             write the hostile-names model
  pictures.py names                      print its names, a JSON object
  pictures.py svg FILE.svg NODES [NAME]  well-formed XML; NODES node boxes
                                         titled nK; NAME (a JSON string) shown
  pictures.py html FILE.html REPORT.json [NAME]  tables read back: one
                                         tensor row per node output, NAME shown
  pictures.py dom DOM.html REPORT.json   the timeline holds one rect.t per
                                         arena tensor of the JSON report
  pictures.py png FILE.png               decoded by hand (zlib, numpy): not
                                         blank, and the timeline's colours drawn
Prints what it compared; exit status 1 when a check fails.
"""
import json
import struct
import sys
import zlib
from html.parser import HTMLParser
import xml.etree.ElementTree as ET

# names with every character the writers must escape: quotes, <>&, a
# backslash, a newline, a tab, an HTML tag, an entity, non-ASCII
NAMES = {
    "x": 'in"put<1>&\\x\nnext',
    "w": 'wéight_中"&<b>',
    "b": "bias\t&amp;'",
    "mm": 'mat"mul\\n\n<script>alert(1)</script>',
    "add": "add&<>\"'",
    "relu": "relu\\\\ \u00e9\u4e2d",
    "soft": "soft<max>\r\x01",
    "y": 'out\\"<i>&lt;\n',
}


def shown(name):
    """a name as the pictures show it: control bytes as \\n, \\t escapes"""
    out = ""
    for c in name:
        out += {"\n": "\\n", "\t": "\\t"}.get(c, c if ord(c) >= 32 and ord(c) != 127 else "\\x%02x" % ord(c))
    return out


def fail(msg):
    print("pictures: " + msg)
    sys.exit(1)


def model(path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    n = NAMES
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4) / 16, n["w"])
    b = numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), n["b"])
    nodes = [
        helper.make_node("MatMul", [n["x"], n["w"]], ["t" + n["mm"]], name=n["mm"]),
        helper.make_node("Add", ["t" + n["mm"], n["b"]], ["t" + n["add"]], name=n["add"]),
        helper.make_node("Relu", ["t" + n["add"]], ["t" + n["relu"]], name=n["relu"]),
        helper.make_node("Softmax", ["t" + n["relu"]], [n["y"]], name=n["soft"]),
    ]
    g = helper.make_graph(nodes, "hostile\"<>&", [helper.make_tensor_value_info(n["x"], TensorProto.FLOAT, [2, 4])],
                          [helper.make_tensor_value_info(n["y"], TensorProto.FLOAT, [2, 4])], [w, b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def svg(path, nodes, name=None):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("%s is not well-formed XML: %s" % (path, e))
    ns = "{http://www.w3.org/2000/svg}"
    boxes = 0
    texts = []
    for g in root.iter(ns + "g"):
        t = g.find(ns + "title")
        if g.get("class") == "node" and t is not None and t.text and t.text[0] == "n" and t.text[1:].isdigit():
            boxes += 1
    for t in root.iter(ns + "text"):
        texts.append(t.text or "")
    if boxes != int(nodes):
        fail("%s: %d node boxes, the optimized graph has %s nodes" % (path, boxes, nodes))
    if name is not None:
        want = shown(json.loads(name))
        if not any(want in t for t in texts):
            fail("%s: no text shows the name %r (texts: %r)" % (path, want, texts[:40]))
    print("  %s: well-formed, %d node boxes%s" % (path, boxes, ", the name shown" if name else ""))


class Cells(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.rows, self.cell, self.rects, self.titles = [], [], None, 0, []
        self.in_tensors = False
        self.texts = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "tensors-table":
            self.in_tensors = True
        if tag == "tr" and self.in_tensors:
            self.rows.append([])
        if tag == "td" and self.in_tensors:
            self.cell = ""
        if tag == "rect" and "t" in (a.get("class") or "").split():
            self.rects += 1
        if tag == "title":
            self.titles.append("")
        self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
        if tag == "table":
            self.in_tensors = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.stack and self.stack[-1] == "title":
            self.titles[-1] += data
        self.texts.append(data)


def read_html(path):
    p = Cells()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def arena_tensors(report):
    with open(report) as f:
        r = json.load(f)
    return r, [t for t in r["tensors"] if t["place"] == "arena"]


def html(path, report, name=None):
    r, arena = arena_tensors(report)
    p = read_html(path)
    rows = [x for x in p.rows if x]
    if len(rows) != len(r["tensors"]):
        fail("%s: %d tensor rows, the JSON report has %d tensors" % (path, len(rows), len(r["tensors"])))
    for row, t in zip(rows, r["tensors"]):
        if row[0] != "%%%d" % t["id"] or row[1] != shown(t["name"]) or row[4] != t["place"]:
            fail("%s: row %r, the JSON report says %r" % (path, row[:5], t))
    if p.rects != len(arena):
        fail("%s: %d timeline rects, %d arena tensors" % (path, p.rects, len(arena)))
    if name is not None:
        want = shown(json.loads(name))
        if not any(want in t for t in p.texts):
            fail("%s: no text shows %r" % (path, want))
    print("  %s: %d tensor rows as in the JSON report, %d timeline rects%s" %
          (path, len(rows), p.rects, ", the name shown" if name else ""))


def dom(path, report):
    _, arena = arena_tensors(report)
    p = read_html(path)
    if p.rects != len(arena) or not arena:
        fail("%s: the rendered timeline has %d tensor rects, the JSON report %d arena tensors" %
             (path, p.rects, len(arena)))
    print("  %s: the rendered DOM has %d timeline rects = arena tensors" % (path, p.rects))


def decode_png(path):
    import numpy as np
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("%s: PNG depth %d colour type %d interlace %d: not decoded here" % (path, depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), dtype=np.uint8)
    prev = np.zeros(w * bpp, dtype=np.int64)
    for y in range(h):
        ft, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if ft == 0:
            cur = line
        elif ft == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(w, bpp), axis=0).reshape(-1) % 256
        elif ft == 2:
            cur = (line + prev) % 256
        else:  # Average, Paeth: pixel by pixel
            cur = line.copy()
            for x in range(w * bpp):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                if ft == 3:
                    cur[x] = (line[x] + (a + b) // 2) % 256
                else:
                    c = prev[x - bpp] if x >= bpp else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    cur[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) % 256
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3]


def png(path):
    import numpy as np
    px = decode_png(path)
    h, w, _ = px.shape
    flat = px.reshape(-1, 3)
    nonwhite = int(np.count_nonzero((flat != 255).any(axis=1)))
    colours = len(np.unique(flat[:, 0].astype(np.int64) << 16 | flat[:, 1].astype(np.int64) << 8 | flat[:, 2]))
    fills = {"tensor": (0x5b, 0x8f, 0xd6), "in place": (0x4c, 0xae, 0x7a), "graph output": (0xef, 0x8a, 0x4c),
             "scratch": (0xa8, 0xa8, 0xa8), "peak": (0xc0, 0x39, 0x2b)}
    counts = {k: int(np.count_nonzero((flat == c).all(axis=1))) for k, c in fills.items()}
    print("  %s: %dx%d, %d non-white pixels, %d colours, timeline colours %s" % (path, w, h, nonwhite, colours, counts))
    if nonwhite < w * h // 50 or colours < 16:
        fail("%s looks blank" % path)
    # the legend shows each kind's colour in a 12x12 square: count past it
    drawn = sum(v - 144 for k, v in counts.items() if k != "peak")
    if counts["peak"] < 100 or drawn < 200:
        fail("%s: the timeline was not drawn (its colours are missing)" % path)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "names":
        print(json.dumps(NAMES))
    else:
        {"model": model, "svg": svg, "html": html, "dom": dom, "png": png}[cmd](*args)
