"""fuserc.export: the graphs it writes are ordinary contract files (`fuserc check` and `fuserc
compile` take them), many ATen ops round-trip, sizes that are products of symbols or floor
divisions of them (a CNN with a symbolic image size, a view in pairs, a chunk), and clear
refusals naming the op and the line of the user's code."""
import inspect
import json
import math
import os
import re
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

import fuserc
import models
import roundtrip_cases

EXE = fuserc.find_executable(fuserc.find_library())


def line_of(fn, text):
    """'file:line' of the first line of fn's source containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(fn)}:{first + k}"
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def views_and_shapes(x, idx, y):
    b, s, h = x.shape
    flat = x.reshape(b * s, h)  # a product of symbols: reshape -1
    t = flat.t().unsqueeze(0).expand(2, h, b * s)
    picked = x[:, :, 1:h:2] + x.select(2, 0).unsqueeze(-1)
    m = torch.cat([picked, F.pad(x[..., :3], (0, 2), value=-1.0)], dim=-1)
    rows = torch.stack([m.amax(-1), m.amin(-1)], dim=0)
    v, mu = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    w = torch.where(x > 0, x, x * 0.1).masked_fill(x.abs() > 2, float("-inf"))
    e = y[0] * idx.shape[0]
    r = torch.arange(h, dtype=torch.float32) * 0.5 + torch.full((h,), 2.0)
    q = torch.log_softmax(x.clamp(-1, 1), dim=1).permute(2, 0, 1).squeeze(-1)
    mean_by_hand = x.sum(0) / x.shape[0]
    return (t.sum(0), rows, (x - mu) * torch.rsqrt(v + 1e-5), w.exp(), e, r, q, mean_by_hand,
            x.to(torch.bfloat16).float() - x)


def products(x, w, b, idx, tgt, img, cw, cb, lw):
    xt = x.transpose(1, 2)
    bmm = torch.bmm(x, xt) + torch.baddbmm(x @ xt, x, xt, beta=0.5, alpha=2)
    lin = F.linear(x, w, b[:6]) + F.linear(x, w)
    addmm = torch.addmm(b[:6], x[0], w.t(), beta=0.0, alpha=3.0) + \
        torch.addmm(b[:6], x[0], w.t()) + x[1] @ w.t()
    conv = F.conv2d(img, cw, cb, stride=2, padding=1, groups=2)
    losses = (F.cross_entropy(w, tgt, ignore_index=1),
              F.cross_entropy(w, tgt, reduction="none", weight=lw),
              F.cross_entropy(w, tgt, reduction="sum"))
    return (F.embedding(idx, w), bmm, lin, addmm, conv, x[0] @ x[0, 0], x[0, 0] @ x[0, 1]) + \
        losses


PRODUCT_ARGS = (torch.randn(2, 3, 4), torch.randn(6, 4), torch.randn(8),
                torch.tensor([[1, 2], [0, 5]]), torch.tensor([1, 2, 3, 0, 1, 2]),
                torch.randn(1, 4, 5, 5), torch.randn(4, 2, 3, 3), torch.randn(4), torch.rand(4))


class ExportTest(unittest.TestCase):
    def test_graphs_are_contract_files_the_cli_compiles(self):
        work = tempfile.mkdtemp(prefix="fuserc_export_")
        for case in roundtrip_cases.CASES:
            example = roundtrip_cases.make_inputs(case, case["sizes"][0], "cpu")
            graph = fuserc.export(case["fn"], example, dynamic=case["dynamic"])
            path = os.path.join(work, case["name"] + ".json")
            with open(path, "w") as f:
                json.dump(graph, f)
            r = subprocess.run([EXE, "check", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{case['name']}: {r.stderr}")
        # One compiled by the CLI, loaded and run: the same results.
        case = roundtrip_cases.CASES[0]
        out = os.path.join(work, "softmax.fpkg")
        subprocess.run([EXE, "compile", os.path.join(work, "softmax.json"), "-o", out,
                        "--arch", "sm_80", "-q"], check=True)
        x = torch.randn(11, 300)
        torch.testing.assert_close(fuserc.load(out)(x), torch.softmax(x, -1))

    def test_views_reductions_and_creation(self):
        x = torch.randn(3, 5, 8)
        idx = torch.tensor([2, 0, 1, 1])
        y = torch.randn(4, 8)
        dyn = {"x": {0: "B", 1: "S"}, "idx": {0: "K"}}
        pkg = fuserc.compile(views_and_shapes, (x, idx, y), dynamic=dyn, arch=["sm_80"])
        graph = fuserc.export(views_and_shapes, (x, idx, y), dynamic=dyn)
        self.assertIn({"name": "x", "dtype": "f32", "shape": ["B", "S", 8]}, graph["inputs"])
        self.assertTrue(any(op["op"] == "reshape" and -1 in op["shape"] for op in graph["ops"]))
        for b, s, k in ((3, 5, 4), (2, 7, 3)):
            x = torch.randn(b, s, 8)
            idx = torch.randint(0, 4, (k,))
            got, want = pkg(x, idx, y), views_and_shapes(x, idx, y)
            self.assertEqual(len(got), len(want))
            for n, (g, w) in enumerate(zip(got, want)):
                torch.testing.assert_close(g, w, msg=f"output {n} at B={b}, S={s}")

    def test_refuses_an_op_it_cannot_express_naming_the_line(self):
        def step_up(x):
            y = x * 2
            return torch.nextafter(y, y + 1)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(step_up, (torch.randn(4, 4),))
        msg = str(e.exception)
        self.assertIn("cannot express aten.nextafter.default", msg)
        self.assertIn(line_of(step_up, "torch.nextafter") + " in step_up: "
                      "return torch.nextafter(y, y + 1)", msg)

    def test_products_convolution_embedding_and_cross_entropy(self):
        g = fuserc.export(products, PRODUCT_ARGS, dynamic={"x": {0: "B"}})
        ops = [op["op"] for op in g["ops"]]
        self.assertEqual(ops.count("linear"), 5)  # F.linear twice, addmm + x @ w.t() thrice
        self.assertEqual(ops.count("matmul"), 5)  # bmm, baddbmm, x @ x^T, matrix @ vector, dot
        self.assertEqual(ops.count("conv"), 1)
        self.assertEqual(ops.count("gather"), 3)  # one per cross_entropy
        self.assertIn("index_select", ops)  # the embedding
        conv = next(op for op in g["ops"] if op["op"] == "conv")
        self.assertEqual((conv["stride"], conv["padding"], conv["groups"]), ([2, 2], [1, 1], 2))
        linears = [op for op in g["ops"] if op["op"] == "linear"]
        self.assertTrue(all(op["args"][1] == "w" for op in linears))  # no transposed copy of w
        self.assertNotIn("permute", [op["op"] for op in g["ops"]
                                     if op["out"] in {a for lin in linears for a in lin["args"]}])
        pkg = fuserc.compile(products, PRODUCT_ARGS, dynamic={"x": {0: "B"}}, arch=["sm_80"],
                             ranges={"B": (2, 64)})  # x[1] needs B >= 2
        for b in (2, 3):
            args = (torch.randn(b, 3, 4),) + PRODUCT_ARGS[1:]
            got, want = pkg(*args), products(*args)
            for n, (g_, w_) in enumerate(zip(got, want)):
                torch.testing.assert_close(g_, w_, msg=f"output {n} at B={b}")

    def test_transposed_convolution(self):
        def up(x, w, b):
            return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)
        args = (torch.randn(1, 4, 5, 6), torch.randn(4, 3, 3, 3), torch.randn(6))
        g = fuserc.export(up, args, dynamic={"x": {0: "B"}})
        conv = next(op for op in g["ops"] if op["op"] == "conv")
        self.assertEqual((conv["transposed"], conv["output_padding"], conv["groups"]),
                         (True, [1, 1], 2))
        pkg = fuserc.compile(up, args, dynamic={"x": {0: "B"}}, arch=["sm_80"])
        for b in (1, 3):
            a = (torch.randn(b, 4, 5, 6),) + args[1:]
            torch.testing.assert_close(pkg(*a), up(*a), msg=f"B={b}")

    def test_imports_go_one_way(self):
        import ast
        pkg_dir = os.path.dirname(fuserc.__file__)
        layers = ["export", "_module", "_aten", "_aten_nn", "_aten_resample", "_aten_attention",
                  "_aten_norm", "_aten_products", "_aten_shape",
                  "_convert", "_trace", "_decomp", "_decomp_elementwise", "_decomp_indexing",
                  "_patches", "_overloads", "_graph", "_symbolic", "_arguments"]
        for k, mod in enumerate(layers):
            with open(os.path.join(pkg_dir, mod + ".py")) as f:
                tree = ast.parse(f.read())
            imported = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    imported |= {node.module} if node.module else {a.name for a in node.names}
            above = set(layers[:k + 1])
            self.assertFalse(imported & above, f"{mod} imports {imported & above}")

    def test_refuses_numbers_that_depend_on_sizes_or_scalars(self):
        def scaled(x):
            return x * (1.0 / x.shape[0])
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(scaled, (torch.randn(6, 4),), dynamic={"x": {0: "N"}})
        self.assertIn("depends on the sizes of the inputs or on a scalar input", str(e.exception))
        self.assertIn(line_of(scaled, "1.0 / x.shape[0]"), str(e.exception))

        def sqrt_of_scalar(x, s: float):
            return x * math.sqrt(s)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(sqrt_of_scalar, (torch.randn(3), 2.0))
        self.assertIn("reads a tensor's value as a Python number", str(e.exception))
        self.assertIn(line_of(sqrt_of_scalar, "math.sqrt(s)"), str(e.exception))

    def test_refuses_size_dependent_control_flow(self):
        def branchy(x):
            if x.shape[0] > 20:
                return x.exp()
            return x.sin()
        with self.assertRaisesRegex(fuserc.ExportError, "runs different ops at other sizes"):
            fuserc.export(branchy, (torch.randn(30, 2),), dynamic={"x": {0: "N"}})

    def test_refuses_bad_dynamic_specs(self):
        def f(x):
            return x.exp()
        with self.assertRaisesRegex(fuserc.ExportError, r"dynamic: no input named 'y' "
                                    r"\(inputs: x\)"):
            fuserc.export(f, (torch.randn(3),), dynamic={"y": {0: "N"}})
        with self.assertRaisesRegex(fuserc.ExportError, "has rank 1, no dimension 1"):
            fuserc.export(f, (torch.randn(3),), dynamic={"x": {1: "N"}})

    def test_indexing_maps_to_index_select_and_gather(self):
        def lookup(table, idx, pos):
            return table[idx], torch.gather(table, 1, pos)
        g = fuserc.export(lookup, (torch.randn(10, 4), torch.tensor([1, 2, 3]),
                                   torch.zeros(10, 2, dtype=torch.int64)),
                          dynamic={"idx": {0: "K"}})
        ops = {op["op"]: op for op in g["ops"]}
        # x[idx] counts negative indices from the end: where(idx < 0, idx + 10, idx).
        self.assertEqual([ops[o]["args"] for o in ("lt", "add", "where")],
                         [["idx", 0], ["idx", 10], [ops["lt"]["out"], ops["add"]["out"], "idx"]])
        self.assertEqual(ops["index_select"]["args"], ["table", ops["where"]["out"]])
        self.assertEqual(ops["index_select"]["dim"], 0)
        self.assertEqual(ops["gather"]["args"], ["table", "pos"])
        self.assertEqual(ops["gather"]["dim"], 1)

    def test_sizes_that_are_expressions_of_symbols(self):
        def flat_tokens(x):
            b, s, h = x.shape
            flat = x.reshape(b * s, h) * torch.arange(b * s, dtype=torch.float32)[:, None]
            grid = x.unsqueeze(0).expand(s, b, s, h).reshape(s * b, s * h)
            return flat + torch.ones(b * s, 1), grid, x[:, [-1, 0], :]
        x = torch.randn(2, 3, 4)
        g = fuserc.export(flat_tokens, (x,), dynamic={"x": {0: "B", 1: "S"}})
        ops = g["ops"]
        self.assertIn({"op": "iota", "args": [], "length": "B*S", "start": 0, "step": 1,
                       "dtype": "f32", "out": "arange"}, ops)
        self.assertIn(["B*S", 1], [op.get("shape") for op in ops if op["op"] == "full"])
        self.assertIn([-1, "4*S"], [op.get("shape") for op in ops if op["op"] == "reshape"])
        pkg = fuserc.compile(flat_tokens, (x,), dynamic={"x": {0: "B", 1: "S"}}, arch=["sm_80"])
        for b, s in ((2, 3), (1, 5)):
            x = torch.randn(b, s, 4)
            for n, (got, want) in enumerate(zip(pkg(x), flat_tokens(x))):
                torch.testing.assert_close(got, want, msg=f"output {n} at B={b}, S={s}")

    def test_symbol_ranges_and_names(self):
        def f(x):
            return x + 1
        g = fuserc.export(f, (torch.randn(8, 2),), dynamic={"x": {0: "N"}},
                          ranges={"N": (2, 4096)}, name="plus one")
        self.assertEqual(g["name"], "plus_one")
        self.assertEqual(g["symbols"], {"N": {"hint": 8, "min": 2, "max": 4096}})
        self.assertEqual(g["inputs"], [{"name": "x", "dtype": "f32", "shape": ["N", 2]}])

    @unittest.skipUnless(hasattr(torch, "export"), "this PyTorch has no torch.export "
                         f"({torch.__version__}): graphs are traced with make_fx")
    def test_torch_export_and_make_fx_agree(self):
        for case in roundtrip_cases.CASES:
            example = roundtrip_cases.make_inputs(case, case["sizes"][0], "cpu")
            a = fuserc.export(case["fn"], example, dynamic=case["dynamic"], tracer="export")
            b = fuserc.export(case["fn"], example, dynamic=case["dynamic"], tracer="make_fx")
            self.assertEqual(a["inputs"], b["inputs"], case["name"])


def checked_extents(test, graph, bindings):
    """Runs `fuserc check` on the graph and compares, at each binding of the symbols, the
    extent fuserc infers for every op result with the one the exporter gave it (graph.extents);
    returns fuserc's extents by name (strings, as `fuserc check` prints them)."""
    work = tempfile.mkdtemp(prefix="fuserc_extents_")
    path = os.path.join(work, "graph.json")
    with open(path, "w") as f:
        json.dump(graph, f)
    r = subprocess.run([EXE, "check", path], capture_output=True, text=True)
    test.assertEqual(r.returncode, 0, r.stderr)
    inferred = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s+(\w+): \w+\[(.*)\] = ", line)
        if m:
            inferred[m.group(1)] = split_dims(m.group(2))

    def value(text, binding):
        if isinstance(text, int):
            return text
        expr = re.sub(r"(?<![/])/(?![/])", "//", str(text)).replace("ceildiv(", "_ceildiv(")
        return eval(expr, {"__builtins__": {}, "min": min, "max": max,  # noqa: S307
                           "_ceildiv": lambda a, b: -(-a // b)}, dict(binding))
    compared = 0
    for name, dims in graph.extents.items():
        if name not in inferred:
            continue  # pruned, or an input
        test.assertEqual(len(dims), len(inferred[name]), name)
        for binding in bindings:
            got = [value(e, binding) for e in inferred[name]]
            want = [value(e, binding) for e in dims]
            test.assertEqual(got, want, f"{name} at {binding}: fuserc {inferred[name]}, "
                                        f"exporter {dims}")
        compared += 1
    test.assertGreater(compared, 0)
    return inferred


def split_dims(text):
    """'B, 8, (H + 1) / 2' -> ['B', 8, '(H + 1) / 2'] (commas outside parentheses)."""
    dims, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            dims.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur.strip():
        dims.append(cur.strip())
    return [int(d) if d.lstrip("-").isdigit() else d for d in dims]


def pairs(x):
    b = x.shape[0]
    return x.view(b, -1, 2).sum(-1)


def halves(x):
    a, b = x.chunk(2, dim=1)
    n = x.shape[1]
    return (torch.cat([b * 2, a], dim=1), a.sum(1) - b.sum(1), x[:, 1::2],
            F.pad(x, (0, (-n) % 8)), x[:, : n // 2] + 1)


def glu(x):
    a, b = x.chunk(2, dim=-1)
    return a * torch.sigmoid(b)


class FloorDivisionTest(unittest.TestCase):
    """Sizes that PyTorch computes with floor division, written as the contract's extent
    expressions with // and %: fuserc infers the same extents from the graph."""

    def test_cnn_with_a_symbolic_image_size(self):
        """A ResNet-style CNN (7x7 stride-2 stem, 3x3 stride-2 max pool, a block with a
        strided conv and a projection, adaptive average pooling, linear) with a symbolic
        batch, height and width: one graph, called at two image sizes."""
        torch.manual_seed(0)
        m = models.ResNet().eval()
        dynamic = {"x": {0: "B", 2: "H", 3: "W"}}
        example = torch.randn(2, 3, 32, 32)
        graph = fuserc.export(m, (example,), dynamic=dynamic)
        self.assertEqual(graph["inputs"][0]["shape"], ["B", 3, "H", "W"])
        ops = {op["out"]: op for op in graph["ops"]}
        self.assertEqual(graph.extents[ops["convolution"]["out"]],
                         ["B", 8, "(H+1)//2", "(W+1)//2"])  # (H + 2*3 - 7) // 2 + 1
        pool = [e for name, e in graph.extents.items() if name.startswith("max_pool")]
        self.assertEqual(pool, [["B", 8, "((H+1)//2+1)//2", "((W+1)//2+1)//2"]])
        bindings = [{"B": 2, "H": h, "W": w} for h, w in ((32, 32), (48, 40), (1, 1), (7, 9))]
        inferred = checked_extents(self, graph, bindings)
        unclean = {n: d for n, d in inferred.items()
                   if any(w in str(e) for e in d for w in ("min(", "max(", "ceildiv"))}
        self.assertEqual(unclean, {})  # each extent one floor-division expression
        pkg = fuserc.compile(m, (example,), dynamic=dynamic, arch=["sm_80"])
        for b, h, w in ((2, 32, 32), (3, 48, 40)):
            x = torch.randn(b, 3, h, w)
            with torch.no_grad():
                want = m(x)
            got = pkg(x)
            self.assertEqual(tuple(got.shape), (b, 10))
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5, msg=f"{b}x3x{h}x{w}")

    def test_view_in_pairs(self):
        """x.view(B, -1, 2) of [B, N]: PyTorch's view takes even N only, so N is 2 units
        (N_over_2): x is [B, 2*N_over_2], the view [B, N_over_2, 2], and fuserc itself refuses
        an odd N when it binds the package (from C too, not only from Python)."""
        dynamic = {"x": {0: "B", 1: "N"}}
        graph = fuserc.export(pairs, (torch.randn(3, 8),), dynamic=dynamic)
        self.assertEqual(graph["inputs"][0]["shape"], ["B", "2*N_over_2"])
        self.assertEqual(graph["symbols"]["N_over_2"], {"hint": 4})
        self.assertFalse(any(op["op"] == "slice" for op in graph["ops"]))
        reshape = next(op for op in graph["ops"] if op["op"] == "reshape")
        self.assertEqual(graph.extents[reshape["out"]], ["B", "N_over_2", 2])
        self.assertEqual(graph.requires, [])
        checked_extents(self, graph, [{"B": 2, "N_over_2": n} for n in (1, 4, 7)])
        pkg = fuserc.compile(pairs, (torch.randn(3, 8),), dynamic=dynamic, arch=["sm_80"])
        for b, n in ((3, 8), (2, 14), (1, 2)):
            x = torch.randn(b, n)
            torch.testing.assert_close(pkg(x), pairs(x), msg=f"B={b}, N={n}")
        with self.assertRaisesRegex(fuserc.FusercError, r"input 'x' dimension 1 is 9, but the "
                                    r"graph says N_over_2 \* 2, which no integer N_over_2 "
                                    r"makes 9"):
            pkg(torch.randn(2, 9))

    def test_a_multiple_that_is_not_one_symbol_is_checked_by_the_package(self):
        """[B, S+1] viewed in pairs needs S+1 even, which no unit of one symbol states: the
        graph's `requires` records it and the Package refuses S = 8 naming the view."""
        def tok_pairs(x):
            y = torch.cat([x, x[:, :1]], 1)
            return y.view(y.shape[0], -1, 2).sum(-1)
        dynamic = {"x": {0: "B", 1: "S"}}
        graph = fuserc.export(tok_pairs, (torch.randn(3, 7),), dynamic=dynamic)
        self.assertEqual(graph["inputs"][0]["shape"], ["B", "S"])
        self.assertEqual([(r["extent"], r["multiple"]) for r in graph.requires], [("S+1", 2)])
        pkg = fuserc.compile(tok_pairs, (torch.randn(3, 7),), dynamic=dynamic, arch=["sm_80"])
        for s in (7, 3, 1):
            x = torch.randn(2, s)
            torch.testing.assert_close(pkg(x), tok_pairs(x), msg=f"S={s}")
        with self.assertRaisesRegex(ValueError, r"S\+1 is 9, not a multiple of 2 \(aten\.view"
                                    r"\.default at .*test_export\.py:\d+"):
            pkg(torch.randn(2, 8))

    def test_chunk_strided_slice_and_pad_of_a_symbolic_dim(self):
        """torch.chunk in two of any N: (N+1)//2 and N//2 elements; x[:, 1::2]: N//2;
        F.pad to a multiple of 8: (-N)%8 more; x[:, :N//2]."""
        dynamic = {"x": {1: "N"}}
        graph = fuserc.export(halves, (torch.randn(3, 7),), dynamic=dynamic)
        self.assertEqual(graph.extents["getitem"], [3, "(N+1)//2"])
        self.assertEqual(graph.extents["getitem_1"], [3, "N//2"])
        pad = next(op for op in graph["ops"] if op["op"] == "pad" and op["out"] != "split")
        self.assertEqual(pad["pads"], [[0, 0], [0, "-N%8"]])
        inferred = checked_extents(self, graph, [{"N": n} for n in (2, 3, 7, 10, 16)])
        self.assertEqual(inferred["getitem_1"], [3, "N / 2"])
        pkg = fuserc.compile(halves, (torch.randn(3, 7),), dynamic=dynamic, arch=["sm_80"])
        for n in (7, 10, 2, 3):
            x = torch.randn(3, n)
            for k, (got, want) in enumerate(zip(pkg(x), halves(x))):
                torch.testing.assert_close(got, want, msg=f"output {k} at N={n}")
        # Halves multiplied together: the function traces at even sizes only, so N is two
        # halves of N_over_2, one extent to fuserc.
        graph = fuserc.export(glu, (torch.randn(3, 8),), dynamic=dynamic)
        self.assertEqual(graph.extents["mul"], [3, "N_over_2"])
        self.assertEqual(graph.requires, [])
        pkg = fuserc.compile(glu, (torch.randn(3, 8),), dynamic=dynamic, arch=["sm_80"])
        for n in (8, 6, 2):
            x = torch.randn(3, n)
            torch.testing.assert_close(pkg(x), glu(x), msg=f"N={n}")
        with self.assertRaisesRegex(fuserc.FusercError, "no integer N_over_2 makes 5"):
            pkg(torch.randn(3, 5))

    def test_refuses_boolean_mask_indexing(self):
        def positives(x):
            keep = x > 0
            return x[keep] * 2
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(positives, (torch.randn(4, 4),))
        msg = str(e.exception).splitlines()
        self.assertEqual(len(msg), 2)
        self.assertEqual(msg[0], "fuserc.export: aten.index.Tensor: boolean-mask indexing "
                                 "x[mask]: the output's size depends on the data (how many "
                                 "elements the mask keeps), which a fuserc graph cannot "
                                 "express; keep the shape with torch.where(mask, x, 0) or "
                                 "masked_fill")
        self.assertEqual(msg[1], f"  from {line_of(positives, 'x[keep]')} in positives: "
                                 "return x[keep] * 2")

    def test_refuses_cumulative_batch_norm_in_training(self):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 4, 3)
                self.bn = torch.nn.BatchNorm2d(4, momentum=None)

            def forward(self, x):
                return self.bn(self.conv(x))
        net = Net().train()
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(net, (torch.randn(2, 3, 6, 6),))
        msg = str(e.exception).splitlines()
        self.assertEqual(len(msg), 2)
        self.assertEqual(msg[0], "fuserc.export: BatchNorm2d(4, momentum=None) in training: "
                                 "its cumulative moving average reads num_batches_tracked as "
                                 "a Python number, which a fuserc graph cannot express; give "
                                 "the module a momentum (PyTorch's default is 0.1) or export "
                                 "it in eval()")
        self.assertEqual(msg[1], f"  from {line_of(Net.forward, 'self.bn(')} in forward: "
                                 "return self.bn(self.conv(x))")
        fuserc.export(net.eval(), (torch.randn(2, 3, 6, 6),))  # the running statistics: fine


def bert_attention(x, wq, wk, wv):
    """BERT-style self-attention over [B, S, 32] in 4 heads of 8 (PyTorch 1.13's matmul runs
    other ops where B or S is 1)."""
    b, s, _ = x.shape

    def heads(w):
        return (x @ w).view(b, s, 4, 8).transpose(1, 2)
    q, k, v = heads(wq), heads(wk), heads(wv)
    att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(8), dim=-1)
    return torch.matmul(att, v).transpose(1, 2).reshape(b, s, 32)


CAUSAL_16 = torch.ones(16, 16).tril()


def mpt_masks(x):
    """MPT's causal_mask[-s_q:, -s_k:]: of a mask of the sequence length and of a fixed one."""
    s = x.shape[1]
    m = torch.ones(s, s).tril()
    return x[:, None, :, None] * m[-s:, -s:] + CAUSAL_16[-s:, -s:]


def norms_and_shrinks(x):
    """Ops that PyTorch 1.13's decompositions write with prims ops: fuserc's own instead."""
    inf = x.masked_fill(x > 1.5, float("inf")).masked_fill(x < -1.5, float("-inf"))
    return (F.normalize(x, p=2, dim=1), x.norm(), x.norm(dim=-1), torch.norm(x, p=1, dim=-1),
            torch.linalg.vector_norm(x, float("inf"), dim=0, keepdim=True),
            *torch.std_mean(x, -1), torch.nan_to_num(x / (x > 0)), torch.nan_to_num(inf, 7.0),
            F.softshrink(x, 0.3), F.hardshrink(x))


def repeat_kv(keys, sin):
    """mistral's repeat_kv (heads of [B, S, 2, 4] twice each), GPT-J's duplicate_interleave,
    and a flattened repeat."""
    return (torch.repeat_interleave(keys, repeats=2, dim=2), sin.repeat_interleave(2, -1),
            sin.repeat_interleave(3))


def cache_positions(idx, past):
    """HF decode positions after a KV cache of P, MPT's ALiBi distances, the causal mask over
    cache and new positions."""
    s, p = idx.shape[1], past.shape[1]
    pos = torch.arange(p, s + p, dtype=torch.long).unsqueeze(0) + idx
    keys = torch.cat([past, pos[..., None].float().expand(-1, -1, 4)], dim=1)
    alibi = torch.arange(1 - s, 1, dtype=torch.int32).view(1, s) * 0.5
    causal = torch.ones(s, keys.shape[1], dtype=torch.bool).tril(diagonal=p)
    return keys, alibi, causal, torch.ones(s, s).triu(diagonal=1 - s)


def full_of_ints(x, logits):
    """torch.full with an int fill value is int64 (float32 under 1.13's fake tensors)."""
    return torch.full((3,), 2) + x, F.cross_entropy(logits, torch.full((3,), 2)), \
        torch.full((3,), True) & (x > 1)


class NestedArgumentsTest(unittest.TestCase):
    def test_tensors_in_tuples_lists_and_dicts(self):
        """An LSTM cell's (h, c) and a decoder's list of cached dicts: a graph input per leaf,
        named after the argument and its place; `dynamic` for the argument names those dims of
        every leaf; the package takes the arguments as the function does, and refuses another
        structure."""
        torch.manual_seed(7)
        cell = torch.nn.LSTMCell(4, 6)

        def args(b):
            return torch.randn(b, 4), (torch.randn(b, 6), torch.randn(b, 6))
        with torch.no_grad():
            pkg = fuserc.compile(cell, args(3), dynamic={"input": {0: "B"}, "hx": {0: "B"}},
                                 arch=["sm_80"])
            for b in (3, 5):
                a = args(b)
                for g, w in zip(pkg(*a), cell(*a)):
                    torch.testing.assert_close(g, w)
                for g, w in zip(pkg(a[0], hx=a[1]), cell(*a)):
                    torch.testing.assert_close(g, w)

        def decode(x, past):
            keys = [torch.cat([p["k"], x], 1) for p in past]
            return sum(k.sum(1) for k in keys), [k * 2 for k in keys]
        past = [{"k": torch.randn(2, 3, 4)}, {"k": torch.randn(2, 3, 4)}]
        dynamic = {"x": {0: "B"}, "past": {0: "B", 1: "P"}}
        graph = fuserc.export(decode, (torch.randn(2, 1, 4), past), dynamic=dynamic)
        self.assertEqual([(i["name"], i["shape"]) for i in graph["inputs"]],
                         [("x", ["B", 1, 4]), ("past_0_k", ["B", "P", 4]),
                          ("past_1_k", ["B", "P", 4])])
        pkg = fuserc.compile(decode, (torch.randn(2, 1, 4), past), dynamic=dynamic,
                             arch=["sm_80"])
        x, past = torch.randn(3, 1, 4), [{"k": torch.randn(3, 5, 4)} for _ in range(2)]
        (got_sum, got_keys), (want_sum, want_keys) = pkg(x, past), decode(x, past)
        torch.testing.assert_close(got_sum, want_sum)
        for g, w in zip(got_keys, want_keys):
            torch.testing.assert_close(g, w)
        with self.assertRaisesRegex(TypeError, "argument 'past' has another structure"):
            pkg(x, past[:1])


class ProbeFixesTest(unittest.TestCase):
    """Exports that the probe found wrong or refused (python/fuserc's review, round 2)."""

    def test_a_slice_from_the_end_of_a_buffer_follows_the_range(self):
        """buf[-S:] of a 23-row buffer is rows 23-S on: exported where S's range keeps it at
        least 0, refused by the exporter (naming the op) where S may pass 23."""
        buf = torch.randn(23, 4)

        def tail(x):
            return buf[-x.shape[0]:] * x
        x = torch.randn(5, 4)
        dynamic = {"x": {0: "S"}}
        pkg = fuserc.compile(tail, (x,), dynamic=dynamic, ranges={"S": (1, 23)}, arch=["sm_80"])
        for s in (5, 23, 1):
            y = torch.randn(s, 4)
            torch.testing.assert_close(pkg(y), tail(y), msg=f"S={s}")
        with self.assertRaisesRegex(fuserc.ExportError, r"aten\.slice\.Tensor .*a slice bound "
                                    r"-S from the end of an extent 23"):
            fuserc.export(tail, (x,), dynamic=dynamic, ranges={"S": (1, 24)})

    def test_an_int_argument_that_sets_a_size(self):
        """An int argument named as a size (dynamic={"n": "K"}) is an i64 scalar input that sets
        symbol K: a repeat by it, an arange of B*n and n used as a number follow its value at
        every call. An int argument not named is made a symbol where the function traces only
        so; where that cannot be, the refusal says how to name one."""
        def f(x, n: int):
            return x.repeat(n, 1) * n + torch.arange(x.shape[0] * n).view(-1, 1)
        x = torch.randn(5, 3)
        dynamic = {"x": {0: "B"}, "n": "K"}
        graph = fuserc.export(f, (x, 3), dynamic=dynamic)
        self.assertIn({"name": "n", "dtype": "i64", "symbol": "K"}, graph["inputs"])
        pkg = fuserc.compile(f, (x, 3), dynamic=dynamic, arch=["sm_80"])
        for b, n in ((5, 3), (7, 2), (4, 9), (1, 1)):
            y = torch.randn(b, 3)
            torch.testing.assert_close(pkg(y, n), f(y, n), msg=f"B={b} n={n}")
        # Not named: traced again with the int as a symbol of its own, N.
        graph = fuserc.export(f, (x, 3), dynamic={"x": {0: "B"}})
        self.assertIn({"name": "n", "dtype": "i64", "symbol": "N"}, graph["inputs"])
        with self.assertRaisesRegex(fuserc.ExportError, r"dynamic=\{'n': \"K\"\}"):
            fuserc.export(f, (x, 0), dynamic={"x": {0: "B"}})  # 0 is no size of a symbol

    def test_logsumexp_of_rows_whose_max_is_infinite(self):
        """A row of -inf gives -inf and a row holding +inf gives +inf, as PyTorch's kernel
        (1.13's decomposition gave nan: it subtracted the unmasked max)."""
        inf = float("inf")
        x = torch.tensor([[0.5, inf, 1.0], [-inf, -inf, -inf], [1.0, 2.0, 3.0]])

        def f(x):
            return torch.logsumexp(x, 1), torch.logsumexp(x, (0, 1), keepdim=True)
        pkg = fuserc.compile(f, (x,), dynamic={"x": {0: "B"}}, arch=["sm_80"])
        for y in (x, torch.randn(5, 3)):
            for g, w in zip(pkg(y), f(y)):
                torch.testing.assert_close(g, w)

    def test_mish_of_half_types(self):
        """F.mish of bf16 and f16 (1.13's decomposition casts through an op outside ATen, and
        its CPU kernel has no bf16): computed in f32 and rounded once, as the CUDA kernel."""
        for dt in (torch.bfloat16, torch.float16):
            x = (torch.randn(3, 8) * 10).to(dt)
            pkg = fuserc.compile(lambda x: F.mish(x), (x,), dynamic={"x": {0: "B"}},
                                 arch=["sm_80"])
            torch.testing.assert_close(pkg(x), F.mish(x.float()).to(dt), msg=str(dt))

    def test_a_torch_module_exported_alone_is_refused_at_its_forward(self):
        """With no user code in the trace (an nn module exported by itself), a refusal names
        the module's own forward in torch.nn (it named no place)."""
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(torch.nn.FractionalMaxPool2d(2, output_size=(2, 2)),
                          (torch.randn(1, 2, 4, 4),))
        self.assertRegex(str(e.exception).splitlines()[-1],
                         r"^  from .*torch/nn/modules/pooling\.py:\d+ in forward: ")

    def test_repeat_interleave_by_keyword(self):
        def f(x):
            return torch.repeat_interleave(input=x, repeats=2, dim=1) + \
                x.repeat_interleave(repeats=2, dim=1)
        x = torch.randn(2, 3)
        pkg = fuserc.compile(f, (x,), dynamic={"x": {0: "B"}}, arch=["sm_80"])
        for y in (x, torch.randn(4, 3)):
            torch.testing.assert_close(pkg(y), f(y))

    def test_a_size_that_is_a_sum_of_two_symbols(self):
        """torch.ones(S, P + S) after a KV cache of P positions: P + S is a size of its own,
        never seen before as an extent (it was refused)."""
        def f(x, past):
            s, p = x.shape[1], past.shape[1]
            m = torch.ones(s, p + s).tril(diagonal=p)
            return x.sum(-1, keepdim=True) * m[None, :, :1] + m.sum()
        dynamic = {"x": {0: "B", 1: "S"}, "past": {0: "B", 1: "P"}}
        args = (torch.randn(2, 5, 4), torch.randn(2, 3, 4))
        graph = fuserc.export(f, args, dynamic=dynamic)
        self.assertIn(["S", "P+S"], [op.get("shape") for op in graph["ops"]])
        pkg = fuserc.compile(f, args, dynamic=dynamic, arch=["sm_80"])
        for s, p in ((5, 3), (2, 9), (7, 1)):
            a, b = torch.randn(2, s, 4), torch.randn(2, p, 4)
            torch.testing.assert_close(pkg(a, b), f(a, b), msg=f"S={s}, P={p}")

    def test_example_batch_and_sequence_of_one(self):
        """An example size of 1 (the usual inference example): trace A is at another size,
        so the three traces run the same ops; the hint stays the example's 1."""
        w = [torch.randn(32, 32) * 0.2 for _ in range(3)]
        dynamic = {"x": {0: "B", 1: "S"}}
        graph = fuserc.export(bert_attention, (torch.randn(1, 1, 32), *w), dynamic=dynamic)
        self.assertEqual(graph["symbols"], {"B": {"hint": 1}, "S": {"hint": 1}})
        pkg = fuserc.compile(graph, arch=["sm_80"])
        for b, s in ((1, 1), (2, 5), (3, 1), (1, 7)):
            x = torch.randn(b, s, 32)
            torch.testing.assert_close(pkg(x, *w), bert_attention(x, *w), msg=f"B={b}, S={s}")

    def test_negative_symbolic_slice_bounds_count_from_the_end(self):
        dynamic = {"x": {0: "B", 1: "S"}}
        graph = fuserc.export(mpt_masks, (torch.randn(2, 8),), dynamic=dynamic,
                              ranges={"S": (1, 16)})
        starts = [op["starts"] for op in graph["ops"] if op["op"] == "slice"]
        self.assertIn(["-S+16", 0], starts)  # -S from the end of 16
        pkg = fuserc.compile(graph, arch=["sm_80"])
        for b, s in ((2, 8), (3, 5), (1, 16)):
            x = torch.randn(b, s)
            torch.testing.assert_close(pkg(x), mpt_masks(x), msg=f"B={b}, S={s}")


    def test_norms_nan_to_num_and_shrinks(self):
        dynamic = {"x": {0: "N"}}
        pkg = fuserc.compile(norms_and_shrinks, (torch.randn(4, 32),), dynamic=dynamic,
                             arch=["sm_80"])
        for n in (4, 7):
            x = torch.randn(n, 32)
            for k, (got, want) in enumerate(zip(pkg(x), norms_and_shrinks(x))):
                torch.testing.assert_close(got, want, msg=f"output {k} at N={n}")

    def test_refuses_ops_outside_aten_by_their_namespace(self):
        """prims.where(c, a, b) is not aten.where(c) (nonzero): refused as a prims op."""
        def pick(x):
            return torch.ops.prims.where(x > 0, x, x * 2)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(pick, (torch.randn(3),))
        msg = str(e.exception).splitlines()
        self.assertEqual(msg[0], "fuserc.export: prims.where.default ('where'): cannot express "
                         "prims.where.default (an op outside ATen, which the exporter does "
                         "not read) in a fuserc graph")
        self.assertIn(line_of(pick, "prims.where"), msg[1])

    def test_repeat_interleave_with_an_int_count(self):
        dynamic = {"keys": {0: "B", 1: "S"}, "sin": {0: "S"}}
        args = (torch.randn(2, 5, 2, 4), torch.randn(5, 4))
        pkg = fuserc.compile(repeat_kv, args, dynamic=dynamic, arch=["sm_80"])
        for b, s in ((2, 5), (3, 7)):
            args = (torch.randn(b, s, 2, 4), torch.randn(s, 4))
            for k, (got, want) in enumerate(zip(pkg(*args), repeat_kv(*args))):
                torch.testing.assert_close(got, want, msg=f"output {k} at B={b}, S={s}")

    def test_arange_and_triangle_diagonal_at_sizes(self):
        dynamic = {"idx": {1: "S"}, "past": {1: "P"}}
        args = (torch.randint(0, 9, (2, 3)), torch.randn(2, 5, 4))
        pkg = fuserc.compile(cache_positions, args, dynamic=dynamic, arch=["sm_80"],
                             ranges={"P": (0, 32)})
        for s, p in ((3, 5), (1, 9), (4, 0)):
            args = (torch.randint(0, 9, (2, s)), torch.randn(2, p, 4))
            for k, (got, want) in enumerate(zip(pkg(*args), cache_positions(*args))):
                torch.testing.assert_close(got, want, msg=f"output {k} at S={s}, P={p}")

    def test_full_takes_the_fill_values_dtype(self):
        args = (torch.tensor([1, 2, 3]), torch.randn(3, 8))
        pkg = fuserc.compile(full_of_ints, args, arch=["sm_80"])
        for k, (got, want) in enumerate(zip(pkg(*args), full_of_ints(*args))):
            self.assertEqual(got.dtype, want.dtype, f"output {k}")
            torch.testing.assert_close(got, want, msg=f"output {k}")

    def test_half_values_are_rounded_where_pytorch_holds_them(self):
        """HF's fp16 attention mask: scores.half() + (1 - mask).half() * finfo(f16).min, then
        .float().softmax(): eager rounds every masked score to -65504, so a row masked out
        entirely is uniform; carried unrounded in f32 they differed and so did the row."""
        def f(s, m):
            s = s.half() + (1 - m).half() * torch.finfo(torch.float16).min
            return s.float().softmax(-1), (s * 3).float()
        s = torch.randn(2, 5)
        m = torch.tensor([[1., 1, 0, 0, 1], [0, 0, 0, 0, 0]])
        pkg = fuserc.compile(f, (s, m), dynamic={"s": {0: "B"}, "m": {0: "B"}}, arch=["sm_80"])
        got, want = pkg(s, m), f(s, m)
        torch.testing.assert_close(got[0], want[0])
        torch.testing.assert_close(got[0][1], torch.full((5,), 0.2))
        torch.testing.assert_close(got[1], want[1], rtol=0, atol=0)

    def test_masks_written_into_torch_empty_flips_and_half_lengths(self):
        """CLIP's causal mask (torch.empty, fill_, triu_), BLOOM's (mask[:, 0:] = lt into a
        torch.empty), a reversed cumsum (flip), and S // 2 + 1 as a value (each was refused)."""
        def clip(x):
            b, s = x.shape
            mask = torch.empty(b, s, s, dtype=x.dtype)
            mask.fill_(torch.tensor(torch.finfo(x.dtype).min))
            mask.triu_(1)
            return mask.unsqueeze(1) + x[:, None, None, :]

        def bloom(x):
            b, s = x.shape
            mask = torch.empty((s, s), dtype=torch.bool)
            ids = torch.arange(s)
            mask[:, 0:] = ids[:, None] < ids[None, :]
            return mask[None, None].expand(b, 1, s, s).float() + x[:, None, None, :]

        def reversed_and_halves(x):
            s = x.shape[1]
            return x.flip(-1).cumsum(-1).flip(-1), torch.flip(x, (0, 1)), \
                torch.arange(s) // (s // 2 + 1), x[:, :s // 2 + 1]
        for f in (clip, bloom, reversed_and_halves):
            x = torch.randn(2, 8)
            pkg = fuserc.compile(f, (x,), dynamic={"x": {0: "B", 1: "S"}}, arch=["sm_80"])
            for y in (x, torch.randn(3, 5), torch.randn(1, 1)):
                got, want = pkg(y), f(y)
                got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
                for k, (g, w) in enumerate(zip(got, want)):
                    torch.testing.assert_close(g, w, msg=f"{f.__name__} output {k}")
        with self.assertRaisesRegex(fuserc.ExportError, r"a part of an uninitialized tensor"):
            fuserc.export(lambda x: torch.empty(4, 4)[:, 1:].copy_(x) * 2,
                          (torch.randn(4, 3),))

    def test_writes_into_slices_and_selects_of_a_tensor(self):
        """BART's shift_tokens_right (shifted[:, 1:] = ids[:, :-1]; shifted[:, 0] = start),
        HF's top-p warper (to_remove[..., -1:] = 0), y[:, 2:4] += 1 on an intermediate and
        x[:, 0] = 1 on an input (written in place, as PyTorch does); a view taken before such
        a write and read after it is still refused."""
        def shift_right(ids):
            shifted = ids.new_zeros(ids.shape)
            shifted[:, 1:] = ids[:, :-1].clone()
            shifted[:, 0] = 2
            shifted.masked_fill_(shifted == -100, 1)
            return shifted

        def top_p(scores):
            logits, order = torch.sort(scores, descending=False)
            remove = logits.softmax(dim=-1).cumsum(dim=-1) <= 0.2
            remove[..., -1:] = 0
            return scores.masked_fill(remove.scatter(1, order, remove), -float("inf"))

        def writes(x):
            y = x * 2
            y[:, 0] = 0.0
            y[:, 2:4] += 1.0
            x[:, 0] = 1.0
            return y

        cases = [(shift_right, lambda b, s: (torch.randint(-100, 9, (b, s)).clamp(min=-100),)),
                 (top_p, lambda b, s: (torch.randn(b, 20),)),
                 (writes, lambda b, s: (torch.randn(b, s, 3),))]
        for f, make in cases:
            args = make(2, 6)
            name = list(inspect.signature(f).parameters)[0]
            pkg = fuserc.compile(f, args, dynamic={name: {0: "B", 1: "S"} if f is not top_p
                                                   else {0: "B"}}, arch=["sm_80"])
            for b, s in ((2, 6), (3, 9), (1, 4)):
                a = make(b, s)
                mine, theirs = a[0].clone(), a[0].clone()
                torch.testing.assert_close(pkg(mine), f(theirs), msg=f.__name__)
                torch.testing.assert_close(mine, theirs, msg=f"{f.__name__}: its input")

        def stale(x):
            y = x * 2
            v = y[:, 0]
            y[:, 0] = 5.0
            return v + 1
        with self.assertRaisesRegex(fuserc.ExportError, r"updates a view of another tensor"):
            fuserc.export(stale, (torch.randn(2, 6),))

    def test_vision_probe_fixes(self):
        """A 2x upsample of an odd-sized example (its extent was fitted as H + 1: wrong shapes
        at even H), stacked strided convs (H's min raised through H // 4 to 8; compile
        failed), an in-place op on the clone of a slice and clip_grad_norm_'s
        g.detach().mul_(coef) on an input (both refused)."""
        def up(x):
            return F.interpolate(x[:, :, ::2], scale_factor=2, mode="nearest")
        pkg = fuserc.compile(up, (torch.randn(2, 3, 9, 4),), dynamic={"x": {0: "B", 2: "H"}},
                             arch=["sm_80"])
        for h in (8, 9, 2):
            y = torch.randn(2, 3, h, 4)
            torch.testing.assert_close(pkg(y), up(y), msg=f"H={h}")
        stem = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 4, stride=4),
                                   torch.nn.Conv2d(4, 4, 2, stride=2)).eval()
        dynamic = {"input": {0: "B", 2: "H", 3: "W"}}
        graph = fuserc.export(stem, (torch.randn(1, 3, 16, 24),), dynamic=dynamic)
        self.assertEqual((graph["symbols"]["H"]["min"], graph["symbols"]["W"]["min"]), (8, 8))

        def clip(x, g):
            h = x[:, 1:]
            y = h.clone()
            y.add_(1)
            coef = torch.clamp(1.0 / (g.norm() + 1e-6), max=1.0)
            g.detach().mul_(coef)
            return h + 0, y
        pkg = fuserc.compile(clip, (torch.randn(2, 5), torch.randn(3) * 4),
                             dynamic={"x": {0: "B"}}, arch=["sm_80"])
        x, g = torch.randn(3, 5), torch.randn(3) * 4
        g2 = g.clone()
        got, want = pkg(x, g), clip(x, g2)
        for a, b in zip(got + (g,), want + (g2,)):
            torch.testing.assert_close(a, b)

    def test_losses_bicubic_and_unfold(self):
        def f(x, t):
            p = t.sigmoid()
            return F.mse_loss(x, t), F.smooth_l1_loss(x, t), \
                F.smooth_l1_loss(x, t, beta=0.0, reduction="sum"), F.huber_loss(x, t, delta=0.5), \
                F.binary_cross_entropy_with_logits(x, p, pos_weight=torch.full((5,), 2.0)), \
                F.binary_cross_entropy(x.sigmoid(), p), F.logsigmoid(x), \
                F.soft_margin_loss(x, t.sign()), \
                F.interpolate(x[None], scale_factor=2, mode="bicubic", align_corners=False), \
                F.unfold(x[None], kernel_size=2)
        dynamic = {"x": {0: "B"}, "t": {0: "B"}}
        pkg = fuserc.compile(f, (torch.randn(3, 4, 5), torch.randn(3, 4, 5)), dynamic=dynamic,
                             arch=["sm_80"])
        for b in (3, 6):
            a = (torch.randn(b, 4, 5), torch.randn(b, 4, 5))
            for k, (got, want) in enumerate(zip(pkg(*a), f(*a))):
                torch.testing.assert_close(got, want, msg=f"output {k}, B={b}")

    def test_one_hot_cdist_and_adaptive_max_pooling(self):
        """F.one_hot with num_classes (1.13 reads the values to check them), torch.cdist (1.13's
        meta function fails on fake tensors), adaptive max pooling to 1 (its indices refused)."""
        def f(t, x):
            return F.one_hot(t, 5), torch.cdist(x, x), torch.cdist(x, x[:, :2], p=1.0), \
                F.adaptive_max_pool2d(x[:, None], 1).flatten(1)
        make = lambda b: (torch.randint(0, 5, (b, 3)), torch.randn(b, 3, 4))  # noqa: E731
        pkg = fuserc.compile(f, make(2), dynamic={"t": {0: "B"}, "x": {0: "B"}}, arch=["sm_80"])
        for b in (2, 5):
            a = make(b)
            for k, (got, want) in enumerate(zip(pkg(*a), f(*a))):
                torch.testing.assert_close(got, want, msg=f"output {k}, B={b}")
        with self.assertRaisesRegex(fuserc.ExportError, "the indices of adaptive max pooling"):
            fuserc.export(lambda x: F.adaptive_max_pool2d(x, 1, return_indices=True)[1] * 2,
                          (torch.randn(2, 3, 8, 6),))

    def test_adaptive_pooling_windows_and_sliding_windows(self):
        """Adaptive pooling to sizes that do not divide the input's (PyTorch's overlapping
        windows of differing lengths, over a symbolic image) and Tensor.unfold (windows of a
        size and step in a new last dim), both refused before."""
        def f(x):
            return F.adaptive_avg_pool2d(x, (3, 5)), F.adaptive_max_pool2d(x, 4), \
                x.unfold(2, 3, 2).unfold(3, 2, 1).sum((-1, -2)), x.unfold(-1, 4, 4)
        pkg = fuserc.compile(f, (torch.randn(2, 3, 7, 11),), dynamic={"x": {2: "H", 3: "W"}},
                             arch=["sm_80"])
        for h, w in ((7, 11), (10, 9), (5, 4)):
            x = torch.randn(2, 3, h, w)
            for k, (got, want) in enumerate(zip(pkg(x), f(x))):
                torch.testing.assert_close(got, want, msg=f"output {k} at {h}x{w}")

    def test_grid_sample_affine_grid_and_fold(self):
        """A spatial transformer (F.affine_grid, then F.grid_sample) over a symbolic batch,
        grid_sample's three modes and three paddings (reflection casts to int8 inside PyTorch's
        decomposition) and F.fold (col2im, overlapping windows summed): each was refused."""
        def stn(x, theta):
            return F.grid_sample(x, F.affine_grid(theta, x.shape, align_corners=False),
                                 align_corners=False)
        make = lambda n: (torch.randn(n, 3, 6, 7), torch.randn(n, 2, 3))  # noqa: E731
        pkg = fuserc.compile(stn, make(2), dynamic={"x": {0: "N"}, "theta": {0: "N"}},
                             arch=["sm_80"])
        for n in (2, 5):
            a = make(n)
            torch.testing.assert_close(pkg(*a), stn(*a), msg=f"N={n}")

        def modes(x, g, cols):
            return (F.grid_sample(x, g, mode="bilinear", padding_mode="reflection",
                                  align_corners=True),
                    F.grid_sample(x, g, mode="nearest", padding_mode="zeros",
                                  align_corners=False),
                    F.grid_sample(x, g, mode="bicubic", padding_mode="border",
                                  align_corners=False),
                    F.fold(cols, (6, 7), kernel_size=3, stride=2, padding=1))
        a = (torch.randn(2, 3, 6, 7), torch.rand(2, 4, 5, 2) * 2.4 - 1.2,
             torch.randn(2, 18, 12))
        pkg = fuserc.compile(modes, a, arch=["sm_80"])
        for k, (got, want) in enumerate(zip(pkg(*a), modes(*a))):
            torch.testing.assert_close(got, want, msg=f"output {k}")

    def test_a_dtype_the_contract_lacks_is_refused_where_used(self):
        """An int8 intermediate is refused in one line naming the op and the user's line (it
        was a KeyError); an unused one is no obstacle."""
        def f(x):
            q = (x * 8).to(torch.int8)  # noqa: F841 - unused: no obstacle
            return (x * 4).to(torch.int8).float() + 1
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(f, (torch.randn(4),))
        msg = str(e.exception).splitlines()
        self.assertIn("a torch.int8 result, a dtype fuserc graphs do not have", msg[0])
        self.assertIn("return (x * 4).to(torch.int8).float() + 1", msg[1])
        fuserc.export(lambda x: (x.to(torch.int8), x + 1)[1], (torch.randn(4),))
        with self.assertRaisesRegex(fuserc.ExportError, "argument 'img' is a torch.uint8 tensor"):
            fuserc.export(lambda img: img.float() / 255,
                          (torch.zeros(2, 3, dtype=torch.uint8),))

    def test_inductor_probe_ops(self):
        """Ops of PyTorch Inductor's tests that were refused or wrong: any / all (dim, all
        dims, bool and int), nansum, aminmax, fmin / fmax (NaN ignored), dist, linspace (as PyTorch's
        CPU kernel rounds), logcumsumexp of a 0-d tensor (its shape was [1]), a cat with an
        empty KV cache (torch.zeros(B, H, 0, D); compile failed), an empty result refused."""
        def f(x, y, k):
            return ((x > 1).any(-1), (x > 0).all(-1), x.any(), (x > 1).any(0, keepdim=True),
                    x.nansum(), x.nansum(1), torch.fmin(x, y), torch.fmax(x, y),
                    torch.dist(x, y), torch.dist(x, y, p=1.5),
                    torch.linspace(0.125, 0.875, 5) + x[:, :1], torch.linspace(-3, 10, 6,
                                                                               dtype=torch.int64),
                    torch.logcumsumexp(x[0, 0], 0), *torch.aminmax(y, dim=1),
                    *torch.aminmax(y),
                    torch.cat([torch.zeros(k.shape[0], 2, 0, 4), k], dim=2) * 2)
        make = lambda n: (torch.randn(n, 5), torch.randn(n, 5), torch.randn(2, 2, n, 4))  # noqa
        a = make(3)
        a[0][0, 1] = float("nan")
        a[1][1, 2] = float("nan")
        pkg = fuserc.compile(f, a, dynamic={"x": {0: "N"}, "y": {0: "N"}, "k": {2: "N"}},
                             arch=["sm_80"])
        for args in (a, make(6)):
            for k, (got, want) in enumerate(zip(pkg(*args), f(*args))):
                torch.testing.assert_close(got, want, equal_nan=True, msg=f"output {k}")
        with self.assertRaisesRegex(fuserc.ExportError, "an empty tensor: a fuserc graph writes "
                                    "extents of 0 only as expressions"):
            fuserc.export(lambda x: (torch.tensor([]), x + 1), (torch.randn(3),))
        # An extent of 0 that an op infers (a slice past the end) is fine.
        sliced = lambda a: (a[:, :-30, 0], a[2:0, 0], a + 1)  # noqa: E731
        a = torch.randn(6, 20, 2)
        pkg = fuserc.compile(sliced, (a,), dynamic={"a": {0: "N"}}, arch=["sm_80"])
        for got, want in zip(pkg(a), sliced(a)):
            self.assertEqual(got.shape, want.shape)
            self.assertTrue(torch.equal(got, want))

    def test_channels_last_inputs_and_layout_only_as_strided(self):
        """ConvNeXt's and Swin's head: adaptive average pooling to 1 of a channels-last tensor,
        which PyTorch 1.13 restrides (as_strided_ on dims of extent 1; refused before), traced
        from a channels-last input (kept channels-last at the other trace sizes, else the ops
        differ) and a permuted one; a package copies an input of another layout to row-major,
        and one it writes in place back into the caller's tensor."""
        def head(x, y):
            return F.adaptive_avg_pool2d(x, 1).flatten(1), \
                F.adaptive_avg_pool2d(y.permute(0, 3, 1, 2), 1).flatten(1)
        make = lambda b: (torch.randn(b, 8, 4, 4).contiguous(  # noqa: E731
            memory_format=torch.channels_last), torch.randn(b, 4, 4, 8))
        pkg = fuserc.compile(head, make(2), dynamic={"x": {0: "B"}, "y": {0: "B"}},
                             arch=["sm_80"])
        for b in (2, 3):
            a = make(b)
            for k, (got, want) in enumerate(zip(pkg(*a), head(*a))):
                torch.testing.assert_close(got, want, msg=f"output {k}, B={b}")
        t = torch.randn(3, 5).t()  # a transposed view
        pkg = fuserc.compile(lambda x: x * 2, (torch.randn(5, 3),), arch=["sm_80"])
        torch.testing.assert_close(pkg(t), t * 2)

        def bump(x):
            x.add_(1)
            return x * 2
        pkg = fuserc.compile(bump, (torch.randn(5, 3),), arch=["sm_80"])
        base = torch.randn(3, 5)
        want = base.t().clone()
        got = pkg(base.t())  # written through to base, as bump(base.t()) writes it
        torch.testing.assert_close(base.t(), want + 1)
        torch.testing.assert_close(got, (want + 1) * 2)

    def test_writes_through_a_view_of_an_input_and_rounding(self):
        """Inductor's input_mutation tests: in-place ops on an input, then on a.view(64) of it
        (the later writes were lost from the input: wrong values), and a copy_ into a view of
        an input read afterwards (refused); round with decimals (refused); a view as another
        dtype (its bits reinterpreted) is refused, not read as a cast (wrong values)."""
        def mutate(a):
            a += 1
            a *= 2
            torch.ops.aten.sigmoid_(a)
            a = a.view(64)
            a += 3
            a *= 4
            torch.ops.aten.relu_(a)
            return a

        def fill_view(a):
            b = a + 1
            a.view(64).copy_(torch.tensor([66.0]))
            return b, a + 2
        for f in (mutate, fill_view):
            x = torch.randn(1, 64)
            pkg = fuserc.compile(f, (x.clone(),), arch=["sm_80"])
            mine, theirs = x.clone(), x.clone()
            got, want = pkg(mine), f(theirs)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                torch.testing.assert_close(g, w, msg=f.__name__)
            torch.testing.assert_close(mine, theirs, msg=f"{f.__name__}: the input")

        def rounded(x):
            return torch.round(x, decimals=2), torch.round(x, decimals=-1), \
                torch.round(x.double(), decimals=3)
        x = torch.randn(64) * 100
        pkg = fuserc.compile(rounded, (x,), arch=["sm_80"])
        for got, want in zip(pkg(x), rounded(x)):
            self.assertTrue(torch.equal(got, want))
        with self.assertRaisesRegex(fuserc.ExportError, "its bits reinterpreted"):
            fuserc.export(lambda x: x.view(torch.int32) + 1, (x,))

    def test_gather_with_a_shorter_index_and_clear_refusals(self):
        """torch.gather with an index shorter than the input in other dims (compile failed);
        an empty result and a number argument handed to an op's Scalar parameter are refused
        in words (compile failed; a tracer's 'failed to match any schema')."""
        def f(a, b):
            return torch.gather(a, 1, b)
        a, b = torch.randn(4, 5, 10, 6), torch.randint(5, (4, 5, 10, 1))
        pkg = fuserc.compile(f, (a, b), arch=["sm_80"])
        self.assertTrue(torch.equal(pkg(a, b), f(a, b)))
        with self.assertRaisesRegex(fuserc.ExportError, r"an empty tensor \(shape \[0, 2, 4"):
            fuserc.export(lambda x: x.repeat(0, 1, 1, 1), (torch.randn(1, 2, 4, 8),))
        with self.assertRaisesRegex(fuserc.ExportError, "takes a Python number"):
            fuserc.export(lambda a, b, c, beta: torch.ops.aten.baddbmm(a, b, c, beta=beta),
                          (torch.randn(2, 1, 3), torch.randn(2, 4, 5), torch.randn(2, 5, 3),
                           1.0))

    def test_circular_padding(self):
        """F.pad(mode="circular") and a convolution's padding_mode="circular" (PyTorch 1.13
        writes slices of a torch.empty; refused): negative pads crop first, as PyTorch does,
        a symbolic length wraps at every size, and a pad that wraps twice is PyTorch's error."""
        for shape, pad in (((2, 3, 5, 6), (1, 2, 2, 1)), ((2, 3, 7), (-1, 2)),
                           ((2, 3, 7), (2, -1)), ((1, 2, 3, 4, 5), (1, 1, 0, 2, 3, 0))):
            x = torch.randn(shape)
            pkg = fuserc.compile(lambda x: F.pad(x, pad, mode="circular") * 2, (x,),
                                 arch=["sm_80"])
            self.assertTrue(torch.equal(pkg(x), F.pad(x, pad, mode="circular") * 2),
                            f"{shape} {pad}")
        conv = torch.nn.Conv1d(3, 4, 3, padding=2, padding_mode="circular")
        pkg = fuserc.compile(conv, (torch.randn(2, 3, 5),), dynamic={"input": {2: "W"}},
                             arch=["sm_80"])
        for w in (5, 2, 11):
            x = torch.randn(2, 3, w)
            torch.testing.assert_close(pkg(x), conv(x), msg=f"W={w}")
        with self.assertRaisesRegex(fuserc.ExportError, "wrapping around more than once"):
            fuserc.export(lambda x: F.pad(x, (6, 0), mode="circular"), (torch.randn(1, 1, 5),))

    def test_diagonal_trace_diag_and_rot90(self):
        """x.diagonal() is a view (a flattened slice with a step of M + 1, an extent expression
        where M is symbolic); trace, diag, diag_embed and rot90 decompose to it, iotas and
        flips (each was refused). A diagonal whose length is min(N, M) of two symbols either
        of which may be the lesser, and a write into a diagonal, are refused in words."""
        x, v, b = torch.randn(4, 5), torch.randn(4), torch.randn(2, 3, 4)
        for f, a in ((lambda x: torch.diagonal(x, 1) * 2, x), (lambda x: x.diagonal(-2), x),
                     (lambda b: torch.diagonal(b, 1, 2, 0) + 1, b), (torch.trace, x),
                     (lambda x: torch.trace(x.int()), x), (lambda x: torch.diag(x, -1), x),
                     (lambda v: torch.diag(v, 2), v), (lambda v: torch.diag(v, -1), v),
                     (lambda b: torch.diag_embed(b, -2, 2, 0), b),
                     (lambda b: torch.rot90(b, 1, (1, 2)), b),
                     (lambda b: torch.rot90(b, -1, (2, 0)), b)):
            pkg = fuserc.compile(f, (a,), arch=["sm_80"])
            got, want = pkg(a), f(a)
            self.assertEqual(got.dtype, want.dtype)
            torch.testing.assert_close(got, want, msg=getattr(f, "__name__", "") + str(want))
        square = fuserc.compile(lambda x: x.diagonal(2) * 2, (torch.randn(6, 6),),
                                dynamic={"x": {0: "N", 1: "N"}}, arch=["sm_80"])
        for n in (6, 3, 9):
            x = torch.randn(n, n)
            self.assertTrue(torch.equal(square(x), x.diagonal(2) * 2), f"N={n}")
        with self.assertRaisesRegex(fuserc.ExportError, r"a diagonal of length min\(N, M\)"):
            fuserc.export(lambda x: x.diagonal(), (torch.randn(6, 7),),
                          dynamic={"x": {0: "N", 1: "M"}})

        def zero_diagonal(x):
            x = x.clone()
            x.diagonal().fill_(0)
            return x
        with self.assertRaisesRegex(fuserc.ExportError, "updates a view of another tensor"):
            fuserc.export(zero_diagonal, (x,))

    def test_bucketize_and_searchsorted(self):
        """torch.bucketize and torch.searchsorted (both sides, int32 results, an N-d sorted
        sequence, a scalar value, boundaries closed over as a constant, NaN and inf values)
        are comparisons and a count (each was refused); a sorter is refused with the line."""
        b = torch.tensor([1.0, 2.0, 2.0, 3.0])
        x = torch.tensor([[0.0, 1.0, 2.0, 2.5], [3.0, 4.0, math.nan, math.inf]])
        for f, args in ((lambda x, b: torch.bucketize(x, b), (x, b)),
                        (lambda x, b: torch.bucketize(x, b, right=True, out_int32=True), (x, b)),
                        (lambda x, b: torch.searchsorted(b, x, side="right"), (x, b)),
                        (lambda s, v: torch.searchsorted(s, v),
                         (torch.randn(3, 7).sort(-1).values, torch.randn(3, 5))),
                        (lambda b: torch.searchsorted(b, 2.0), (b,))):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            got, want = pkg(*args), f(*args)
            self.assertEqual(got.dtype, want.dtype)
            self.assertTrue(torch.equal(got, want), str(want))
        edges = torch.linspace(-2, 2, 9)
        pkg = fuserc.compile(lambda x: torch.bucketize(x, edges), (torch.randn(4, 6),),
                             dynamic={"x": {0: "B"}}, arch=["sm_80"])
        for n in (4, 1, 13):
            x = torch.randn(n, 6)
            self.assertTrue(torch.equal(pkg(x), torch.bucketize(x, edges)), f"B={n}")
        with self.assertRaisesRegex(fuserc.ExportError, "with a sorter"):
            fuserc.export(lambda s, v, o: torch.searchsorted(s, v, sorter=o),
                          (b, x, torch.arange(4)))

    def test_elementwise_math_that_decomposes(self):
        """Ops that were refused, now decomposed (fuserc's _decomp_elementwise), each output
        with PyTorch's dtype and values at its edge cases: deg2rad of ints, sinc of bf16 near
        the integers (rounded per step as PyTorch's kernel), copysign by -0.0 and NaN,
        isposinf of ints, angle, xlog1py and entr at 0, NaN and infinities, an in-place
        rad2deg_, prelu with one number as its weight."""
        torch.manual_seed(0)
        x, y = torch.randn(4, 6), torch.randn(4, 6)
        x[0, 0], x[0, 1], x[1, 1], x[2, 2], x[2, 3] = 0.0, -0.0, math.nan, math.inf, -math.inf
        y[0, 2], y[3, 3], y[1, 4], y[2, 5] = -0.0, math.nan, -1.0, -math.nan
        xi = torch.randint(-5, 5, (4, 6))
        near = torch.arange(-16, 16).bfloat16() / 4 + torch.randn(32).bfloat16() / 64

        def f(x, y, xi, near, w):
            r = x.clone()
            return (torch.deg2rad(xi), torch.rad2deg(x), torch.sinc(x), torch.sinc(near),
                    torch.copysign(x, y), torch.copysign(xi, y), torch.copysign(x, -0.0),
                    torch.isposinf(x), torch.isneginf(x), torch.isposinf(xi), torch.angle(x),
                    torch.special.xlog1py(x, y), torch.special.entr(x), r.rad2deg_(),
                    F.prelu(x, w))
        args = (x, y, xi, near, torch.tensor(0.25))
        pkg = fuserc.compile(f, args, arch=["sm_80"])
        for k, (g, w) in enumerate(zip(pkg(*args), f(*args))):
            self.assertEqual(g.dtype, w.dtype, f"output {k}")
            torch.testing.assert_close(g, w, equal_nan=True, msg=f"output {k}")
        signs = pkg(*args)[4]  # copysign(x, y): the sign bit of -0.0 and of a negative NaN
        self.assertTrue(bool(signs[0, 2] <= 0) and bool(signs[2, 5] <= 0))

    def test_in_place_views_that_change_nothing_and_resizes(self):
        """An in-place view that leaves an input as it was (t_ of a vector, transpose_ of a dim
        with itself, as_strided_ to its own layout) exports; addbmm_ that would resize its
        input (PyTorch 1.13 does) is refused in words. hypot with an infinite side is +inf
        beside a NaN; the median of a 0-d tensor is itself."""
        v, x3 = torch.randn(4), torch.randn(1, 2, 3)
        for f, args in ((lambda a: a.t_() * 2, (v,)), (lambda a: a.transpose_(1, -2) + 1, (x3,)),
                        (lambda a: a.as_strided_((4,), (1,)) - 1, (v,))):
            pkg = fuserc.compile(f, tuple(t.clone() for t in args), arch=["sm_80"])
            torch.testing.assert_close(pkg(*(t.clone() for t in args)),
                                       f(*(t.clone() for t in args)))
        with self.assertRaisesRegex(fuserc.ExportError, "resizes its tensor in place"):
            fuserc.export(lambda a, b, c: a.addbmm_(b, c),
                          (torch.randn(1), torch.randn(5, 5, 5), torch.randn(5, 5, 10)))
        a = torch.tensor([math.inf, -math.inf, math.nan, 3.0])
        b = torch.tensor([math.nan, math.nan, -math.inf, 4.0])
        for dtype in (torch.float32, torch.bfloat16):
            pkg = fuserc.compile(torch.hypot, (a.to(dtype), b.to(dtype)), arch=["sm_80"])
            self.assertEqual(pkg(a.to(dtype), b.to(dtype)).tolist(), [math.inf] * 3 + [5.0])
        s = torch.tensor(2.5)
        pkg = fuserc.compile(lambda t: torch.median(t, 0), (s,), arch=["sm_80"])
        self.assertEqual([t.item() for t in pkg(s)], [2.5, 0])

    def test_indexing_ops_that_decompose(self):
        """take with negative indices, narrow_copy, select_scatter, slice_scatter with a step,
        diagonal_scatter of a 3-d tensor with dims out of order, isin (inverted), vdot and
        renorm (fuserc's _decomp_indexing and _decomp), with the batch a symbol."""
        torch.manual_seed(0)

        def f(x, s, d, i, t):
            return (torch.take(x, i), torch.narrow_copy(x, 1, 2, 3),
                    torch.select_scatter(x, s[:, 0], 1, -2),
                    torch.slice_scatter(x, s, 1, 1, 6, 2),
                    torch.diagonal_scatter(d, x[:2, :3], 0, 2, 0),
                    torch.isin(t, i, invert=True), torch.vdot(x[0], x[1]),
                    torch.renorm(x, 2, 0, 1.5))
        args = (torch.randn(4, 6), torch.randn(4, 3), torch.randn(3, 2, 4),
                torch.tensor([[0, -1], [5, 23]]), torch.randint(-3, 25, (4, 6)))
        pkg = fuserc.compile(f, args, dynamic={"x": {0: "B"}, "s": {0: "B"}, "t": {0: "B"}},
                             ranges={"B": (2, 8)}, arch=["sm_80"])
        for b in (4, 7):
            a = (torch.randn(b, 6), torch.randn(b, 3)) + args[2:4] + \
                (torch.randint(-3, 25, (b, 6)),)
            for k, (g, w) in enumerate(zip(pkg(*a), f(*a))):
                self.assertEqual(g.dtype, w.dtype, f"output {k}")
                torch.testing.assert_close(g, w, msg=f"B={b} output {k}")

    def test_math_selection_and_margin_ops_that_decompose(self):
        """Ops that were refused, now decomposed (fuserc's _decomp): logaddexp with
        infinities, hypot past f32's square range, heaviside, count_nonzero, cross, kthvalue,
        median with a NaN row, nanmedian, histc over the data's range, block_diag of mixed
        dtypes, the multi-class margin losses."""
        torch.manual_seed(0)
        x, t = torch.randn(4, 6), torch.randint(6, (4,))
        inf = x.clone()
        inf[0, 1], inf[0, 2] = math.inf, -math.inf
        nan = x.clone()
        nan[1, 2] = math.nan
        labels = torch.tensor([[3, 0, -1, 1, 0, 0], [0, 1, 2, 3, 4, 5], [-1, 2, 0, 0, 0, 0],
                               [5, -1, 0, 0, 0, 0]])
        for f, args in ((torch.logaddexp, (inf, inf.flip(0))), (torch.hypot, (inf * 1e20, x)),
                        (torch.heaviside, (torch.tensor([-1.0, 0, 2, math.nan]),
                                           torch.full((4,), 0.5))),
                        (lambda a: torch.count_nonzero(a, 1), ((x > 0).float(),)),
                        (lambda a, b: torch.cross(a, b, dim=1),
                         (torch.randn(4, 3), torch.randn(4, 3))),
                        (lambda a: torch.kthvalue(a, 2, 1), (x,)),
                        (lambda a: torch.median(a, 1), (nan,)),
                        (lambda a: torch.nanmedian(a, 1), (nan,)),
                        (lambda a: torch.histc(a, 5), (x,)),
                        (lambda a, b: torch.block_diag(a, b), (x, torch.ones(2, 3).int())),
                        (lambda a, t, w: F.multi_margin_loss(a, t, p=2, weight=w), (x, t, x[0])),
                        (F.multilabel_margin_loss, (x, labels))):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            got, want = pkg(*args), f(*args)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                self.assertEqual(g.dtype, w.dtype)
                torch.testing.assert_close(g, w, equal_nan=True, msg=str(w))

    def test_embedding_bag(self):
        """F.embedding_bag and nn.EmbeddingBag (each was refused): fixed [B, L] bags with
        padding_idx left out (max, mean) and per-sample weights; 1-d indices with offsets
        (empty bags are 0, include_last_offset), sized by symbols at every call."""
        torch.manual_seed(0)
        w = torch.randn(10, 3)
        fixed = torch.tensor([[1, 2, 0], [0, 0, 0], [4, 5, 6]])
        flat, offsets = torch.tensor([1, 2, 3, 4, 0, 7]), torch.tensor([0, 2, 2, 5])
        for f, args in ((lambda i, w: F.embedding_bag(i, w, mode="max", padding_idx=0),
                         (fixed, w)),
                        (lambda i, w, p: F.embedding_bag(i, w, mode="sum", per_sample_weights=p),
                         (fixed, w, torch.rand(3, 3))),
                        (lambda i, o, w: F.embedding_bag(i, w, o, padding_idx=0),
                         (flat, offsets, w)),
                        (lambda i, o, w: F.embedding_bag(i, w, o, mode="max"), (flat, offsets, w)),
                        (lambda i, o, w: F.embedding_bag(i, w, o, mode="sum",
                                                         include_last_offset=True),
                         (flat, torch.tensor([0, 2, 2, 5, 6]), w))):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            torch.testing.assert_close(pkg(*args), f(*args))
        bag = torch.nn.EmbeddingBag(20, 4, mode="sum")
        pkg = fuserc.compile(bag, (flat, offsets), dynamic={"input": {0: "N"}, "offsets": {0: "B"}},
                             arch=["sm_80"])
        for n, b in ((6, 4), (9, 2), (3, 3)):
            i, o = torch.randint(20, (n,)), torch.sort(torch.randint(n, (b,))).values
            o[0] = 0
            torch.testing.assert_close(pkg(i, o), bag(i, o), msg=f"N={n} B={b}")

    def test_max_pool_indices_and_unpooling(self):
        """max pooling's indices (return_indices=True; refused) as PyTorch's loop finds them,
        NaN and all--inf windows, padding, dilation and ceil_mode included, and max_unpool1d/
        2d/3d scattering by them (refused), over symbolic sizes too."""
        torch.manual_seed(0)
        x = torch.randn(2, 3, 7, 8)
        x[0, 0, 1, 1] = math.nan
        x[0, 1] = -math.inf

        def unpool(x):
            y, i = F.max_pool2d(x, 2, return_indices=True)
            return F.max_unpool2d(y * 2, i, 2, output_size=x.shape[-2:])
        for f in (lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True,
                                         return_indices=True),
                  lambda x: F.max_pool1d(x[0], 3, 2, 1, return_indices=True),
                  lambda x: F.max_unpool3d(*F.max_pool3d(x[None], 2, return_indices=True), 2,
                                           output_size=x.shape[1:]),
                  unpool):
            pkg = fuserc.compile(f, (x,), arch=["sm_80"])
            for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (pkg(x), f(x)))):
                self.assertTrue(torch.equal(g.nan_to_num(7.0), w.nan_to_num(7.0)))
        pkg = fuserc.compile(unpool, (x,), dynamic={"x": {0: "B", 2: "H"}}, arch=["sm_80"])
        for shape in ((1, 3, 4, 8), (3, 3, 11, 8)):
            y = torch.randn(shape)
            self.assertTrue(torch.equal(pkg(y), unpool(y)), str(shape))

    def test_weighted_smoothed_cross_entropy_and_gaussian_nll(self):
        """F.cross_entropy with class weights, label smoothing and the mean (1.13 took a
        masked_select: refused) over rows and over a map with an ignored class; F.gaussian_nll_loss
        (its check of the variance's sign read the data: refused) with a variance per row."""
        torch.manual_seed(0)
        x, t, w = torch.randn(5, 6), torch.randint(6, (5,)), torch.rand(6)
        t[1] = -100
        maps, labels = torch.randn(2, 6, 3, 4), torch.randint(6, (2, 3, 4))
        for f, args in ((lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1),
                         (x, t, w)),
                        (torch.nn.CrossEntropyLoss(weight=w, label_smoothing=0.2, ignore_index=2),
                         (maps, labels)),
                        (lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True),
                         (x, x + 0.3, x[:, 0].abs()))):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            torch.testing.assert_close(pkg(*args), f(*args))

    def test_opinfo_probe_fixes(self):
        """From PyTorch's OpInfo samples: F.linear and matmul of a vector (1.13 squeezes the
        product in place; the result came out [1, N]); shape-changing in-place views of an
        intermediate (and of an input, refused); x.eq_(y) and logical_and_ keeping x's dtype
        (an alias of bools was refused at compile); 16-bit activations PyTorch decomposes
        through prims.convert_element_type (refused); addr of bools (came out int64)."""
        torch.manual_seed(0)
        v, w = torch.randn(3), torch.randn(4, 3)

        def views(x):
            y = x * 2
            y.unsqueeze_(0)
            y.t_()
            return y + 1

        def compare(x, y):
            x.eq_(0.5)
            y.logical_and_(x)
            return x, y
        half = torch.randn(4, 6).bfloat16()
        flags = (torch.rand(5, 10) > 0.5, torch.rand(5) > 0.5, torch.rand(10) > 0.5)
        for f, args in ((F.linear, (v, w)), (lambda v, w: v @ w.t(), (v, w)), (views, (v,)),
                        (lambda x: F.leaky_relu(x, 0.1), (half,)), (F.hardtanh, (half,)),
                        (F.softplus, (half,)),
                        (lambda x, a, b: torch.addr(x, a, b, beta=3, alpha=2), flags)):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            got, want = pkg(*args), f(*args)
            self.assertEqual((got.shape, got.dtype), (want.shape, want.dtype))
            torch.testing.assert_close(got, want)
        x, y = torch.tensor([0.5, 1.0, 2.0]), torch.tensor([1.0, 0.0, 2.0])
        pkg = fuserc.compile(compare, (x.clone(), y.clone()), arch=["sm_80"])
        a, b = x.clone(), y.clone()
        pkg(a, b)
        compare(x, y)
        self.assertTrue(torch.equal(a, x) and torch.equal(b, y))

        def squeezes_input(x):
            x.squeeze_(0)
            return x * 2
        with self.assertRaisesRegex(fuserc.ExportError, r"changes the shape of an input"):
            fuserc.export(squeezes_input, (torch.randn(1, 3),))

    def test_opinfo_probe_crashes(self):
        """From PyTorch's OpInfo samples, crashes and lost writes: index ops on a 0-dim tensor
        (ZeroDivisionError, IndexError); torch.mul(x, y, out=x) and ldexp_ (the write into x
        was dropped); an empty input and an uninitialized result (the compiler failed on the
        graph) are refused in words."""
        s = torch.tensor(2.0)
        for f, args in ((lambda x, i: torch.index_select(x, 0, i), (s, torch.tensor([0]))),
                        (lambda x, i, v: x.index_add(0, i, v, alpha=2),
                         (s, torch.tensor([0]), torch.tensor(5.0))),
                        (lambda x, i: x.index_fill(0, i, 3.0), (s, torch.tensor([0]))),
                        (lambda x, i: torch.gather(x, 0, i), (s, torch.tensor(0)))):
            pkg = fuserc.compile(f, args, arch=["sm_80"])
            got, want = pkg(*args), f(*args)
            self.assertEqual(got.shape, want.shape)
            self.assertTrue(torch.equal(got, want))

        def into(x, y):
            torch.mul(x, y, out=x)
            return x.ldexp_(y.round())
        x, y = torch.randn(4), torch.randn(4)
        pkg = fuserc.compile(into, (x.clone(), y), arch=["sm_80"])
        mine, theirs = x.clone(), x.clone()
        pkg(mine, y)
        into(theirs, y)
        torch.testing.assert_close(mine, theirs)
        with self.assertRaisesRegex(fuserc.ExportError,
                                    r"input 'x' is empty \(shape \[1, 0, 3\]\)"):
            fuserc.export(lambda x: x.exp(), (torch.randn(1, 0, 3),))
        with self.assertRaisesRegex(fuserc.ExportError, "returns a tensor nothing writes"):
            fuserc.export(lambda x: torch.empty_like(x), (x,))

    def test_extents_of_two_symbols_that_agree_in_the_traces_are_told_apart(self):
        """ConvNeXt's block over a symbolic image: a stride-32 conv, then a Linear over the
        NHWC-permuted map (a view to [B, H//32, W//32, C]). Traced at H = 13 and W = 17 (below
        the conv's 32, where PyTorch's meta functions give empty maps), or within ranges where
        H//32 and W//32 agree at every traced size, the view was written [B, W//32, H//32, C]:
        transposed results at non-square sizes, or a compile error. Now traced again at
        multiples of 32."""
        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.stem = torch.nn.Conv2d(3, 4, 32, stride=32)
                self.lin = torch.nn.Linear(4, 4)

            def forward(self, x):
                y = self.stem(x)
                return self.lin(y.permute(0, 2, 3, 1)).permute(0, 3, 1, 2) + y
        torch.manual_seed(0)
        m = Block().eval()
        dyn = {"x": {0: "B", 2: "H", 3: "W"}}
        for ranges in (None, {"H": (64, 256), "W": (64, 256)}):
            pkg = fuserc.compile(m, (torch.randn(2, 3, 64, 64),), dynamic=dyn, ranges=ranges,
                                 arch=["sm_80"])
            for shape in ((1, 3, 96, 160), (1, 3, 160, 96)):
                x = torch.randn(shape)
                with torch.no_grad():
                    want = m(x)
                torch.testing.assert_close(pkg(x), want, msg=f"{ranges}, {shape}")

    def test_refusing_a_constant_names_the_buffer_and_its_line(self):
        class Rope(torch.nn.Module):
            def __init__(self):
                super().__init__()
                f = torch.outer(torch.arange(8).float(), torch.rand(2))
                self.register_buffer("freqs_cis", torch.polar(torch.ones_like(f), f))

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.rope = Rope()

            def forward(self, x):
                freqs = self.rope.freqs_cis[:x.shape[0]]
                return torch.view_as_real(torch.view_as_complex(x) * freqs)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(Net(), (torch.randn(8, 2, 2),))
        msg = str(e.exception).splitlines()
        self.assertIn("the module's tensor 'rope.freqs_cis' is a torch.complex64 constant",
                      msg[0])
        self.assertEqual(msg[1], f"  from {line_of(Net.forward, 'freqs = ')} in forward: "
                                 "freqs = self.rope.freqs_cis[:x.shape[0]]")


def roberta_positions(ids):
    """RoBERTa's create_position_ids_from_input_ids (padding id 1), as HF writes it."""
    mask = ids.ne(1).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + 1


def last_token_pooling(ids, logits):
    """GPT-2's sequence classification: the logits at each row's last token before the
    first padding (id 0), found with argmax, picked with x[arange(B), lengths]."""
    lengths = torch.eq(ids, 0).int().argmax(-1) - 1
    lengths = lengths % ids.shape[-1]
    return logits[torch.arange(ids.shape[0]), lengths]


class GradientTest(unittest.TestCase):
    def test_a_training_step_with_autograd_grad_is_one_graph(self):
        """torch.autograd.grad inside the function (a training step: loss, gradients through
        layer norm, GELU, an embedding and cross-entropy, an SGD update) exports through
        PyTorch's decompositions of the backward ops (nll_loss_backward was refused), over a
        symbolic batch whose example inputs require grad."""
        def step(ids, t, emb, w, ln_w):
            h = F.layer_norm(F.embedding(ids, emb), (8,), ln_w)
            loss = F.cross_entropy(F.gelu(h @ w).flatten(0, 1), t.flatten())
            g_emb, g_w, g_ln = torch.autograd.grad(loss, (emb, w, ln_w))
            return loss.detach(), emb.detach() - 0.1 * g_emb, w.detach() - 0.1 * g_w, \
                ln_w.detach() - 0.1 * g_ln
        torch.manual_seed(0)
        make = lambda b: (torch.randint(0, 10, (b, 3)), torch.randint(0, 5, (b, 3)),  # noqa
                          torch.randn(10, 8, requires_grad=True),
                          torch.randn(8, 5, requires_grad=True),
                          torch.randn(8, requires_grad=True))
        pkg = fuserc.compile(step, make(2), dynamic={"ids": {0: "B"}, "t": {0: "B"}},
                             arch=["sm_80"])
        for b in (2, 5):
            a = make(b)
            for k, (got, want) in enumerate(zip(pkg(*a), step(*a))):
                torch.testing.assert_close(got, want, msg=f"output {k}, B={b}")


class TorchExportPathTest(unittest.TestCase):
    """Pieces of the torch.export path (PyTorch 2) that run on 1.13 too."""

    def test_lifted_constants_become_attributes(self):
        """A tensor torch.export lifts out of the function (a placeholder named in the graph
        signature's input specs, its value among the program's constants) becomes a get_attr
        node holding that tensor, as make_fx gives it; the graph computes the same."""
        from types import SimpleNamespace
        from torch.fx.experimental.proxy_tensor import make_fx
        from fuserc import _trace
        c = torch.randn(4)
        gm = make_fx(lambda x, k: x * k + 1)(torch.randn(4), c)
        lifted = [n for n in gm.graph.nodes if n.op == "placeholder"][1]
        spec = SimpleNamespace(arg=SimpleNamespace(name=lifted.name), target="scale")
        ep = SimpleNamespace(graph_signature=SimpleNamespace(input_specs=[spec]),
                             constants={"scale": c}, state_dict={})
        _trace._constants_as_attributes(ep, gm, [lifted])
        gm.recompile()
        ops = [n.op for n in gm.graph.nodes]
        self.assertEqual(ops.count("placeholder"), 1)
        self.assertEqual(ops.count("get_attr"), 1)
        attr = next(n for n in gm.graph.nodes if n.op == "get_attr")
        self.assertIs(getattr(gm, attr.target), c)
        x = torch.randn(4)
        torch.testing.assert_close(gm(x), x * c + 1)
        ep.constants = {}
        gm2 = make_fx(lambda x, k: x * k)(torch.randn(4), c)
        with self.assertRaisesRegex(fuserc.ExportError, "lifted out of it"):
            _trace._constants_as_attributes(
                ep, gm2, [[n for n in gm2.graph.nodes if n.op == "placeholder"][1]])


class ScanAndArgReductionTest(unittest.TestCase):
    """cumsum / cumprod, argmax / argmin and max.dim's indices, indexing with several index
    tensors, and integer division with a rounding mode (each was refused)."""

    def check(self, f, args, dynamic, sizes):
        pkg = fuserc.compile(f, args, dynamic=dynamic, arch=["sm_80"])
        for make in sizes:
            a = make()
            got, want = pkg(*a), f(*a)
            got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
            for k, (g, w) in enumerate(zip(got, want)):
                self.assertEqual(g.dtype, w.dtype, f"output {k}")
                torch.testing.assert_close(g, w, equal_nan=True,
                                           msg=f"output {k} at {[t.shape for t in a]}")

    def test_cumulative_sums_and_products(self):
        def f(ids, x):
            return roberta_positions(ids), x.cumsum(1), torch.cumprod(x, dim=-1), \
                torch.cumsum(ids > 3, 0)
        ids = torch.tensor([[0, 5, 7, 1, 1], [4, 1, 9, 9, 2]])
        self.check(f, (ids, torch.rand(2, 5, 3)), {"ids": {0: "B", 1: "S"},
                                                   "x": {0: "B", 1: "S"}},
                   [lambda: (ids, torch.rand(2, 5, 3) + 0.5),
                    lambda: (torch.randint(0, 4, (3, 9)), torch.rand(3, 9, 3) + 0.5),
                    lambda: (torch.randint(0, 4, (1, 1)), torch.rand(1, 1, 3))])

    def test_arg_reductions_take_the_first_extreme_or_nan(self):
        def f(x, v):
            vals, idx = torch.max(x, dim=-1)
            return x.argmax(1), torch.argmin(x, dim=0, keepdim=True), vals, idx, \
                torch.min(v, 0)[1], v.argmax()
        x = torch.tensor([[1., 3., 3.], [2., float("nan"), 2.], [0., 0., -1.]])
        v = torch.tensor([4, 1, 1, 4], dtype=torch.int32)
        self.check(f, (x, v), {"x": {0: "B", 1: "N"}, "v": {0: "M"}},
                   [lambda: (x, v),
                    lambda: (torch.randint(-2, 2, (5, 7)).float(),
                             torch.randint(0, 3, (9,), dtype=torch.int32))])

    def test_last_token_pooling_and_indices_on_several_dims(self):
        def g(x, i, j):
            return x[i, :, j], x[:, i, j]
        ids = torch.tensor([[5, 6, 0, 0], [7, 8, 9, 3]])
        logits = torch.randn(2, 4, 3)
        self.check(last_token_pooling, (ids, logits), {"ids": {0: "B", 1: "S"},
                                                       "logits": {0: "B", 1: "S"}},
                   [lambda: (ids, torch.randn(2, 4, 3)),
                    lambda: (torch.randint(0, 3, (5, 6)), torch.randn(5, 6, 3))])
        x = torch.randn(4, 5, 6)
        i, j = torch.tensor([[0, -1], [2, 3]]), torch.tensor([5, -2])
        self.check(g, (x, i, j), {"x": {0: "A", 1: "C", 2: "D"}, "i": {0: "K"}},
                   [lambda: (torch.randn(4, 5, 6), i, j),
                    lambda: (torch.randn(5, 4, 7), torch.tensor([[3, 0], [1, 2], [-4, 1]]), j)])

    def test_topk_and_small_sorts(self):
        """topk (MoE routing's top-2 of 8 experts, NaN the largest), a stable sort of a small
        constant extent with ties, a slice to a constant end of a symbolic extent, cummax and
        cummin (the last index on ties, the first NaN), logcumsumexp."""
        def f(x, n):
            w, e = torch.topk(x.nan_to_num(0.0).softmax(-1), 2, dim=-1)
            v, i = x.topk(3, dim=0, largest=False)
            s, si = torch.sort(n[:, :4], dim=-1, stable=True, descending=True)
            cv, ci = torch.cummax(x, dim=1)
            return w / w.sum(-1, keepdim=True), e, v, i, s, si, torch.sort(n, dim=0)[0], \
                cv, ci, torch.cummin(n, 0)[1], torch.logcumsumexp(x, -1)
        x = torch.randn(4, 8)
        x[1, 3] = float("nan")
        n = torch.tensor([[3, 1, 3, 0, 7], [1, 1, 2, 2, 1]], dtype=torch.int32)
        self.check(f, (x, n), {"x": {0: "T"}, "n": {1: "N"}},
                   [lambda: (x, n), lambda: (torch.randn(7, 8),
                                             torch.randint(0, 3, (2, 9), dtype=torch.int32))])
        with self.assertRaisesRegex(fuserc.ExportError, r"aten\.topk.*: 65 elements ranked"):
            fuserc.export(lambda x: x.topk(65)[0], (torch.randn(2, 100),))
        graph = fuserc.export(lambda x: x.topk(3)[0], (torch.randn(2, 5),),
                              dynamic={"x": {1: "N"}})
        self.assertEqual(graph["symbols"]["N"]["min"], 3)  # PyTorch fails below

    def test_scatters_and_assignments_through_index_tensors(self):
        """HF's repetition penalty (scatter of gathered scores), counts (scatter_add, with
        repeated indices), Wav2Vec2's mask[(arange(B), lengths - 1)] = 1 then a reversed
        cumsum, index_add / index_fill / index_copy, and y[i, j] += v."""
        def f(ids, scores, lengths):
            score = torch.gather(scores, 1, ids)
            score = torch.where(score < 0, score * 1.3, score / 1.3)
            mask = torch.zeros(scores.shape[0], 9)
            mask[(torch.arange(scores.shape[0]), lengths - 1)] = 1
            y = scores.clone()
            y[torch.arange(scores.shape[0]), ids[:, 0]] += 5.0
            return scores.scatter(1, ids, score), \
                scores.scatter_add(1, ids, torch.ones_like(score)), \
                mask.flip([-1]).cumsum(-1).flip([-1]).bool(), y, \
                scores.index_add(1, lengths, torch.ones(scores.shape[0], lengths.shape[0])), \
                scores.index_fill(1, torch.tensor([0, 2]), -1.0)
        ids = torch.tensor([[1, 5, 5, 30], [0, 2, 49, 7]])
        lengths = torch.tensor([5, 9])
        self.check(f, (ids, torch.randn(2, 50), lengths),
                   {"ids": {0: "B", 1: "S"}, "scores": {0: "B"}, "lengths": {0: "B"}},
                   [lambda: (ids, torch.randn(2, 50), lengths),
                    lambda: (torch.randint(0, 50, (3, 6)), torch.randn(3, 50),
                             torch.tensor([1, 9, 4]))])

    def test_integer_division_rounds_as_pytorch(self):
        def f(a, b):
            return a // 3, torch.div(a, b, rounding_mode="trunc"), \
                torch.div(a, b, rounding_mode="floor"), torch.floor_divide(a.float(), b)
        a = torch.tensor([7, -7, 6, -6, 0, 5])
        b = torch.tensor([2, 2, -4, 4, 3, -5])
        self.check(f, (a, b), {"a": {0: "N"}, "b": {0: "N"}},
                   [lambda: (a, b),
                    lambda: (torch.randint(-1000, 1000, (40,)),
                             torch.randint(1, 9, (40,)) * (torch.randint(0, 2, (40,)) * 2 - 1))])


if __name__ == "__main__":
    unittest.main()
