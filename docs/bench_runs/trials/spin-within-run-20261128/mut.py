"""Graph mutations of the derived CPU graph, for A/B."""
import os
import numpy as np
from onnx import helper, numpy_helper

MS = "com.microsoft"

def _maps(g):
    prod = {o: n for n in g.node for o in n.output}
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    return prod, cons

def mif(g):
    """MatMulInteger→Cast→Mul(scales)→Mul as MatMulIntegerToFloat (what ORT fuses at load)."""
    prod, cons = _maps(g)
    drop, repl = set(), {}
    for n in g.node:
        if n.op_type != "MatMulInteger": continue
        c = cons[n.output[0]]; 
        if len(c) != 1 or c[0].op_type != "Cast": continue
        cast = c[0]; m2 = cons[cast.output[0]]
        if len(m2) != 1 or m2[0].op_type != "Mul": continue
        mul = m2[0]; other = [i for i in mul.input if i != cast.output[0]][0]
        sc = prod.get(other)
        if sc is None or sc.op_type != "Mul" or len(cons[other]) != 1: continue
        a, w, azp, wzp = n.input
        a_s, w_s = sc.input
        new = helper.make_node("MatMulIntegerToFloat", [a, w, a_s, w_s, azp, wzp], [mul.output[0]], name=n.name, domain=MS)
        repl[n.name] = new; drop |= {cast.name, mul.name, sc.name}
    nodes = [repl.get(n.name, n) for n in g.node if n.name not in drop]
    del g.node[:]; g.node.extend(nodes)

def bias(g):
    """Add(chain, bias) with the bias moved into the first pass's MatMulIntegerToFloat."""
    inits = {t.name for t in g.initializer}
    prod, cons = _maps(g)
    drop, rename = set(), {}
    for n in g.node:
        if n.op_type != "Add" or not n.name.endswith("_add_bias"): continue
        t, b = n.input
        if b not in inits: continue
        # walk down the chain to the first pass
        x = prod[t]
        while x.op_type == "Add":
            x = prod[x.input[0]]
        if x.op_type != "MatMulIntegerToFloat" or len(x.input) > 6: continue
        # every node between: single consumer
        x.input.append(b)
        drop.add(n.name); rename[n.output[0]] = t
    nodes = [n for n in g.node if n.name not in drop]
    for n in nodes:
        for k, i in enumerate(n.input):
            if i in rename: n.input[k] = rename[i]
    for o in g.output:
        assert o.name not in rename
    del g.node[:]; g.node.extend(nodes)

def sums(g):
    """Add(Add(y1, y2), rows) as Sum(y1, y2, rows)."""
    prod, cons = _maps(g)
    drop, repl = set(), {}
    for n in g.node:
        if n.op_type == "Add" and n.name.endswith("_rows_add"):
            a = prod.get(n.input[0])
            if a is not None and a.op_type == "Add" and a.name.endswith("_two") and len(cons[a.output[0]]) == 1:
                repl[n.name] = helper.make_node("Sum", [a.input[0], a.input[1], n.input[1]], list(n.output), name=n.name)
                drop.add(a.name)
    nodes = [repl.get(n.name, n) for n in g.node if n.name not in drop]
    del g.node[:]; g.node.extend(nodes)

def mutate(g0, what=None):
    what = (what or os.environ.get("MUT", "mif,bias,sums")).split(",")
    g = g0.graph
    if "mif" in what: mif(g)
    if "bias" in what: bias(g)
    if "sums" in what: sums(g)
    if not any(o.domain == MS for o in g0.opset_import):
        g0.opset_import.append(helper.make_opsetid(MS, 1))
    return g0
