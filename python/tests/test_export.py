"""fuserc.export: the graphs it writes are ordinary contract files (`fuserc check` and `fuserc
compile` take them), many ATen ops round-trip, sizes that are products of symbols, and clear
refusals naming the op and the line of the user's code."""
import inspect
import json
import math
import os
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

import fuserc
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
        def running_total(x):
            y = x * 2
            return torch.cumsum(y, dim=-1)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(running_total, (torch.randn(4, 4),))
        msg = str(e.exception)
        self.assertIn("cannot express aten.cumsum.default", msg)
        self.assertIn(line_of(running_total, "torch.cumsum") + " in running_total: "
                      "return torch.cumsum(y, dim=-1)", msg)

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
        layers = ["export", "_module", "_aten", "_aten_nn", "_aten_products", "_aten_shape",
                  "_convert", "_trace", "_graph", "_symbolic"]
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


if __name__ == "__main__":
    unittest.main()
