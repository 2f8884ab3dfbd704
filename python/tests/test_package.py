"""fuserc.load / Package on CPU tensors (the emulator): arguments by position and name, scalar
inputs, declared strides, outputs written in place, outputs that are inputs or listed twice,
out=, the plan cache across shapes, clear errors, and inspect() against `fuserc inspect --json`."""
import json
import os
import subprocess
import tempfile
import unittest

import torch

import fuserc

# A strided (transposed) input, an output written in place, f32 and i64 scalars, an intermediate
# (segment_set), a grid reduction, an output that is an input, the same output twice.
MIX = {
    "fuserc": 1, "name": "mix",
    "symbols": {"N": {"hint": 300, "max": 100000}, "M": {"hint": 257, "max": 100000}},
    "inputs": [
        {"name": "x", "dtype": "f32", "shape": ["N", "M"], "strides": [1, "N"]},
        {"name": "p", "dtype": "f32", "shape": ["N", "M"]},
        {"name": "lr", "dtype": "f32"},
        {"name": "k", "dtype": "i64"}],
    "ops": [
        {"op": "mul", "args": ["x", "lr"], "out": "a"},
        {"op": "exp", "args": ["a"], "out": "e"},
        {"op": "segment_set", "args": ["e"], "out": "es"},
        {"op": "add", "args": ["es", "k"], "out": "y"},
        {"op": "sum", "args": ["es"], "dims": [0, 1], "out": "s"},
        {"op": "mul", "args": ["es", "lr"], "out": "d"},
        {"op": "sub", "args": ["p", "d"], "out": "p_new"}],
    "outputs": ["y", "s", "p_new", "x", "y"],
    "aliases": {"p_new": "p"},
}


def reference(x, p, lr, k):
    e = torch.exp(x * lr)
    return e + k, e.double().sum().float(), p - e * lr


def strided(n, m, seed=0):
    """An [n, m] f32 tensor laid out with strides (1, n), as the graph declares."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(m, n, generator=g).t()


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="fuserc_test_")
        cls.path = os.path.join(cls.dir, "mix.fpkg")
        cls.pkg = fuserc.compile(MIX, arch=["sm_80"], output=cls.path)

    def test_describes_inputs_outputs_and_symbols(self):
        pkg = self.pkg
        self.assertEqual(pkg.name, "mix")
        self.assertEqual([s["name"] for s in pkg.symbols], ["M", "N"])
        self.assertEqual([repr(s) for s in pkg.inputs],
                         ["x: f32[N, M]", "p: f32[N, M]", "lr: f32 scalar", "k: i64 scalar"])
        self.assertEqual([s.name for s in pkg.outputs], ["y", "s", "p_new", "x", "y"])
        self.assertEqual(pkg.outputs[2].in_place_of, 1)
        self.assertEqual(pkg.outputs[3].source_input, 0)
        self.assertTrue(pkg.inputs[0].has_strides)

    def test_runs_and_updates_in_place(self):
        x, p = strided(40, 33), torch.randn(40, 33)
        p0 = p.clone()
        y, s, p_new, x_out, y2 = self.pkg(x, p, 0.5, 3)
        want_y, want_s, want_p = reference(x, p0, 0.5, 3)
        torch.testing.assert_close(y, want_y)
        torch.testing.assert_close(s, want_s)
        torch.testing.assert_close(p, want_p)
        self.assertIs(p_new, p)  # written in place: the input itself
        self.assertIs(x_out, x)  # an output that is an input
        self.assertIs(y2, y)  # the same output listed twice
        self.assertEqual(s.shape, ())

    def test_arguments_by_name_scalars_as_tensors_and_new_shapes(self):
        for n, m in ((7, 5), (1, 300), (7, 5)):
            x, p = strided(n, m, seed=n), torch.randn(n, m)
            p0 = p.clone()
            y, s, *_ = self.pkg(x, p=p, k=torch.tensor(2), lr=torch.tensor(0.25))
            want_y, want_s, want_p = reference(x, p0, 0.25, 2)
            torch.testing.assert_close(y, want_y)
            torch.testing.assert_close(s, want_s)
            torch.testing.assert_close(p, want_p)

    def test_out_tensors(self):
        x, p = strided(9, 4), torch.randn(9, 4)
        y = torch.empty(9, 4)
        s = torch.empty(())
        got = self.pkg(x, p, 1.0, 0, out=(y, s, None, None, None))
        self.assertIs(got[0], y)
        self.assertIs(got[1], s)
        torch.testing.assert_close(y, torch.exp(x))
        with self.assertRaisesRegex(ValueError, "out= tensor for output 'y' must be contiguous "
                                                r"torch.float32 of shape \(9, 4\)"):
            self.pkg(x, p, 1.0, 0, out=(torch.empty(4, 9), None, None, None, None))
        with self.assertRaisesRegex(ValueError, "output 'p_new' is input 'p' .written in place"):
            self.pkg(x, p, 1.0, 0, out=(None, None, torch.empty(9, 4), None, None))

    def test_clear_errors(self):
        x, p = strided(6, 5), torch.randn(6, 5)
        with self.assertRaisesRegex(ValueError, r"input 'x' has strides \(5, 1\) but the "
                                                r"package needs \(1, 6\)"):
            self.pkg(x.contiguous(), p, 1.0, 0)
        with self.assertRaisesRegex(TypeError, "input 'p' is torch.float64, the package needs "
                                               r"torch.float32 \(p: f32\[N, M\]\)"):
            self.pkg(x, p.double(), 1.0, 0)
        with self.assertRaisesRegex(TypeError, "missing input 'k'"):
            self.pkg(x, p, 1.0)
        with self.assertRaisesRegex(TypeError, "no input named 'q'"):
            self.pkg(x, p, 1.0, 0, q=1)
        with self.assertRaisesRegex(TypeError, "scalar input 'lr' .f32. must be a number"):
            self.pkg(x, p, "fast", 0)
        with self.assertRaises(fuserc.FusercError) as e:
            self.pkg(x, torch.randn(6, 4), 1.0, 0)
        self.assertEqual(e.exception.status, "FUSERC_ERROR_SHAPE")
        self.assertIn("symbol 'M' is bound to two sizes: 5 by input 'x' dimension 1 and 4 by "
                      "input 'p' dimension 1", str(e.exception))

    def test_inspect_is_fuserc_inspect_json(self):
        exe = fuserc.find_executable(fuserc.find_library())
        cli = json.loads(subprocess.run([exe, "inspect", self.path, "--json"], check=True,
                                        capture_output=True, text=True).stdout)
        self.assertEqual(self.pkg.inspect(), cli)
        cli = json.loads(subprocess.run([exe, "inspect", self.path, "--json", "--bind",
                                         "N=4096,M=100"], check=True, capture_output=True,
                                        text=True).stdout)
        self.assertEqual(self.pkg.inspect(N=4096, M=100), cli)
        self.assertIn("bound", cli)
        with self.assertRaisesRegex(ValueError, "no value for symbol 'N'"):
            self.pkg.inspect(M=3)

    def test_load_refuses_what_is_not_a_package(self):
        bad = os.path.join(self.dir, "bad.fpkg")
        with open(bad, "w") as f:
            f.write("not a package at all")
        with self.assertRaises(fuserc.FusercError) as e:
            fuserc.load(bad)
        self.assertEqual(e.exception.status, "FUSERC_ERROR_PACKAGE")
        self.assertIn("not a fuserc package", str(e.exception))


# Sizes as expressions (B solved from B*4, T+1 checked), a scalar that sets K, a size literal,
# constants (one folded into another, one listed as an output).
SHAPES = {
    "fuserc": 1, "name": "shapes",
    "symbols": {"B": {"hint": 3, "max": 64}, "K": {"hint": 2, "max": 16}},
    "inputs": [
        {"name": "x", "dtype": "f32", "shape": ["B*4", 2]},
        {"name": "k", "dtype": "i32", "symbol": "K"},
        {"name": "c", "dtype": "f32", "shape": [2], "data": [0.5, -1]},
        {"name": "m", "dtype": "bool", "shape": [2], "data": [True, False]}],
    "ops": [
        {"op": "reshape", "args": ["x"], "shape": ["B", 4, 2], "out": "x3"},
        {"op": "sum", "args": ["x3"], "dims": [1], "out": "s"},
        {"op": "mul", "args": ["s", {"size": "B*K-1"}], "out": "sk"},
        {"op": "where", "args": ["m", "sk", "c"], "out": "y"},
        {"op": "full", "args": [], "shape": ["K", 2], "value": {"size": "K*K"}, "dtype": "i64",
         "out": "f"}],
    "outputs": ["y", "f", "c"],
}


class ShapesAndConstantsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="fuserc_test_")
        cls.pkg = fuserc.compile(SHAPES, arch=["sm_80"], output=os.path.join(cls.dir, "s.fpkg"))

    def test_describes_symbol_scalars_and_constants(self):
        pkg = self.pkg
        self.assertEqual([repr(s) for s in pkg.inputs],
                         ["x: f32[B * 4, 2]", "k: i32 scalar (sets K)"])
        self.assertEqual([c["name"] for c in pkg.constants], ["c", "m"])
        self.assertEqual(pkg.constants[0]["shape"], (2,))
        self.assertEqual(pkg.constants[0]["bytes"], 8)

    def test_runs_at_sizes_solved_and_set_by_values(self):
        for b, k in ((3, 2), (5, 7), (1, 1)):
            x = torch.randn(b * 4, 2)
            y, f, c = self.pkg(x, k)
            s = x.reshape(b, 4, 2).double().sum(1) * (b * k - 1)
            torch.testing.assert_close(y, torch.where(torch.tensor([True, False]), s,
                                                      torch.tensor([0.5, -1.0],
                                                                   dtype=torch.float64)).float())
            self.assertEqual(f.tolist(), [[k * k, k * k]] * k)
            self.assertEqual(c.tolist(), [0.5, -1.0])

    def test_clear_errors(self):
        with self.assertRaisesRegex(fuserc.FusercError, "which no integer B makes 10"):
            self.pkg(torch.randn(10, 2), 2)
        with self.assertRaisesRegex(fuserc.FusercError, r"symbol 'K' = 0 \(from scalar input 'k'\)"):
            self.pkg(torch.randn(8, 2), 0)
        with self.assertRaisesRegex(TypeError, "'c' is a constant of the package"):
            self.pkg(torch.randn(8, 2), 2, c=torch.zeros(2))


class RMSNorm(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Block(torch.nn.Module):
    """Parameters (an RMSNorm's weight, a Linear's weight and bias) and a causal-mask buffer
    sliced by the sequence length."""

    def __init__(self, d=8, max_len=16):
        super().__init__()
        self.norm = RMSNorm(d)
        self.proj = torch.nn.Linear(d, d)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        s = x.shape[1]
        h = self.proj(self.norm(x))
        scores = (h @ h.transpose(1, 2)).masked_fill(~self.causal[:s, :s], float("-inf"))
        return torch.softmax(scores, dim=-1) @ x


class ModuleTest(unittest.TestCase):
    DYN = {"x": {0: "B", 1: "S"}}
    RANGES = {"S": (1, 16)}  # the mask has 16 rows

    def test_parameters_are_inputs_the_package_passes_itself(self):
        torch.manual_seed(0)
        m = Block()
        x = torch.randn(2, 5, 8)
        g = fuserc.export(m, (x,), dynamic=self.DYN, ranges=self.RANGES)
        inputs = {i["name"]: i for i in g["inputs"]}
        self.assertEqual(list(inputs), ["x", "norm_weight", "proj_weight", "proj_bias",
                                        "causal"])
        self.assertEqual(inputs["x"]["shape"], ["B", "S", 8])
        self.assertEqual(g.parameters, {"norm_weight": "norm.weight",
                                        "proj_weight": "proj.weight", "proj_bias": "proj.bias"})
        self.assertNotIn("data", inputs["proj_weight"])
        self.assertEqual(inputs["causal"]["data"], m.causal.tolist())  # the buffer: a constant
        self.assertEqual(g.constants, {"causal": "causal"})
        self.assertIn("linear", [op["op"] for op in g["ops"]])

        pkg = fuserc.compile(m, (x,), dynamic=self.DYN, ranges=self.RANGES, arch=["sm_80"])
        self.assertEqual([s.name for s in pkg.inputs],
                         ["x", "norm_weight", "proj_weight", "proj_bias"])
        self.assertEqual([c["name"] for c in pkg.constants], ["causal"])
        for b, s in ((2, 5), (3, 16), (1, 1)):
            x = torch.randn(b, s, 8)
            torch.testing.assert_close(pkg(x), m(x), msg=f"B={b}, S={s}")
        # The module's weights as they are at each call: updated in place, or replaced.
        x = torch.randn(2, 7, 8)
        before = pkg(x)
        with torch.no_grad():
            m.proj.weight.mul_(-2.0)
        after = pkg(x)
        torch.testing.assert_close(after, m(x))
        self.assertFalse(torch.allclose(before, after))
        m.norm.weight = torch.nn.Parameter(torch.full((8,), 0.5))
        torch.testing.assert_close(pkg(x), m(x))
        # A parameter may still be given by name (it wins over the module's).
        w = torch.zeros(8, 8)
        torch.testing.assert_close(pkg(x, proj_weight=w),
                                   torch.func.functional_call(m, {"proj.weight": w}, (x,))
                                   if hasattr(torch, "func") else
                                   torch.nn.utils.stateless.functional_call(
                                       m, {"proj.weight": w}, (x,)))

    def test_constants_all_embeds_the_parameters(self):
        torch.manual_seed(1)
        m = Block()
        x = torch.randn(2, 6, 8)
        g = fuserc.export(m, (x,), dynamic=self.DYN, ranges=self.RANGES, constants="all")
        self.assertEqual([i["name"] for i in g["inputs"] if "data" not in i], ["x"])
        self.assertEqual(g.parameters, {})
        self.assertEqual(g.constants, {"norm_weight": "norm.weight", "proj_weight": "proj.weight",
                                       "proj_bias": "proj.bias", "causal": "causal"})
        w = next(i for i in g["inputs"] if i["name"] == "proj_weight")
        self.assertEqual(w["data"], m.proj.weight.tolist())
        pkg = fuserc.compile(m, (x,), dynamic=self.DYN, ranges=self.RANGES, constants="all",
                             arch=["sm_80"])
        self.assertEqual([s.name for s in pkg.inputs], ["x"])
        want = m(x)
        torch.testing.assert_close(pkg(x), want)
        with torch.no_grad():
            m.proj.weight.zero_()
        torch.testing.assert_close(pkg(x), want)  # frozen: the package's own copy

    def test_large_constants_are_saved_as_safetensors_beside_the_graph(self):
        """A frozen model's weights as nested JSON lists are hundreds of megabytes of text: a
        constant of more than 4096 elements is a tensor of <stem>.safetensors, which save()
        writes beside the graph and fuserc maps; small ones stay inline."""
        class Frozen(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = torch.nn.Linear(80, 64)  # 5120 weights
                self.register_buffer("table", torch.randn(5, 1024).bfloat16())

            def forward(self, x):
                return self.proj(x) + self.table[1, :64].float()

        torch.manual_seed(2)
        m = Frozen()
        x = torch.randn(3, 80)
        g = fuserc.export(m, (x,), constants="all")
        with torch.no_grad():
            want = m(x)
            m.proj.weight.mul_(2)  # after export: the graph keeps the values it was made with
        data = {i["name"]: i["data"] for i in g["inputs"] if "data" in i}
        self.assertIsInstance(data["proj_bias"], list)
        self.assertEqual(sorted(g.weights), ["proj_weight", "table"])
        work = tempfile.mkdtemp(prefix="fuserc_weights_")
        path = os.path.join(work, "frozen.json")
        g.save(path)
        self.assertEqual(sorted(os.listdir(work)), ["frozen.json", "frozen.safetensors"])
        with open(path) as f:
            saved = {i["name"]: i.get("data") for i in json.load(f)["inputs"]}
        self.assertEqual(saved["table"], {"file": "frozen.safetensors", "tensor": "table"})
        self.assertLess(os.path.getsize(path), 4096)
        # The CLI compiles the file where it lies; the package holds the weights' values.
        pkg = fuserc.compile(path, arch=["sm_80"])
        torch.testing.assert_close(pkg(x), want, rtol=1e-5, atol=1e-5)
        # The same graph as a plain dict: its weights file is read from the current directory.
        with open(path) as f:
            doc = json.load(f)
        cwd = os.getcwd()
        try:
            os.chdir(work)
            pkg = fuserc.compile(doc, arch=["sm_80"])
        finally:
            os.chdir(cwd)
        torch.testing.assert_close(pkg(x), want, rtol=1e-5, atol=1e-5)
        table = [i["data"] for i in doc["inputs"] if i["name"] == "table"]
        self.assertEqual(table, [{"file": "frozen.safetensors", "tensor": "table"}])  # unedited

    def test_names_of_nested_and_tied_parameters(self):
        class Attn(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c_attn = torch.nn.Linear(4, 4, bias=False)

            def forward(self, x):
                return self.c_attn(x)

        class LM(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(10, 4)
                self.blocks = torch.nn.ModuleList([torch.nn.ModuleDict({"attn": Attn()})])
                self.head = torch.nn.Linear(4, 10, bias=False)
                self.head.weight = self.emb.weight  # tied

            def forward(self, idx, weight):
                h = self.emb(idx)
                return self.head(self.blocks[0]["attn"](h) * weight)

        g = fuserc.export(LM(), (torch.tensor([1, 2, 3]), torch.randn(4)),
                          dynamic={"idx": {0: "T"}})
        self.assertEqual([i["name"] for i in g["inputs"]],
                         ["idx", "weight", "emb_weight", "blocks_0_attn_c_attn_weight"])
        self.assertEqual(g.parameters["blocks_0_attn_c_attn_weight"],
                         "blocks.0.attn.c_attn.weight")
        self.assertEqual([op["args"][0] for op in g["ops"] if op["op"] == "index_select"],
                         ["emb_weight"])
        # The tied head reads the embedding's input.
        self.assertEqual([op["args"][1] for op in g["ops"] if op["op"] == "linear"],
                         ["blocks_0_attn_c_attn_weight", "emb_weight"])

    def test_clear_refusals(self):
        m = Block()
        x = torch.randn(2, 5, 8)
        handle = m.proj.register_forward_hook(lambda mod, args, out: out * 2)
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(m, (x,))
        handle.remove()
        msg = str(e.exception)
        self.assertEqual(msg, "fuserc.export: module 'proj' (Linear) has a forward hook, which "
                              "fuserc does not export: remove it (handle.remove()) or export a "
                              "function that does what the hook does")

        class Branchy(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x.exp()
                return x
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(Branchy(), (torch.randn(3),))
        first = str(e.exception).splitlines()[0]
        self.assertEqual(first, "fuserc.export: tracing Branchy.forward failed: reads a tensor's "
                                "value as a Python number (a scalar input is a tensor while "
                                "tracing; compute with tensor operations)")

        class Counter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("calls", torch.zeros(3))

            def forward(self, x):
                self.calls.add_(1)
                return x + self.calls
        # A buffer that forward updates is an input written in place, passed by the package.
        m, ref = Counter(), Counter()
        pkg = fuserc.compile(m, (torch.randn(3),), arch=["sm_80"])
        self.assertEqual(pkg.buffers, {"calls": "calls"})
        for _ in range(2):
            x = torch.randn(3)
            torch.testing.assert_close(pkg(x), ref(x))
        torch.testing.assert_close(m.calls, torch.full((3,), 2.0))

    def test_closed_over_tensors_are_constants(self):
        table = torch.randn(5, 3)

        def lookup(idx):
            return table[idx] * torch.tensor([1.0, float("-inf"), float("nan")])
        g = fuserc.export(lookup, (torch.tensor([4, 0]),), dynamic={"idx": {0: "K"}})
        data = [i for i in g["inputs"] if "data" in i]
        self.assertEqual([d["data"] for d in data], [table.tolist(), [1.0, "-inf", "nan"]])
        self.assertEqual([i["name"] for i in g["inputs"] if "data" not in i], ["idx"])

        class Scaled(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.tensor(2.5))

            def forward(self, x):
                return x * self.scale
        m = Scaled()
        pkg = fuserc.compile(m, (torch.randn(3),), arch=["sm_80"])
        self.assertEqual(pkg.constants[0]["shape"], ())  # a rank-0 constant, written as [2.5]
        x = torch.randn(4, 3)
        torch.testing.assert_close(pkg(x[0]), m(x[0]))


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device: the CUDA paths run in "
                     "python/tests/gpu_check.py on a GPU machine")
class PackageCudaTest(unittest.TestCase):
    def test_runs_on_the_current_stream(self):
        pkg = fuserc.compile(MIX)
        x, p = strided(40, 33).cuda(), torch.randn(40, 33, device="cuda")
        p0 = p.clone()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            y, s, *_ = pkg(x, p, 0.5, 3)
        stream.synchronize()
        want_y, want_s, want_p = reference(x, p0, 0.5, 3)
        torch.testing.assert_close(y, want_y)
        torch.testing.assert_close(s, want_s)
        torch.testing.assert_close(p, want_p)


if __name__ == "__main__":
    unittest.main()
