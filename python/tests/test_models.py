"""Whole models (models.py) exported in one call each, compiled, and called on CPU tensors (the
emulator) at several sizes of their symbolic extents: a GPT-2 and a LLaMA written as nanoGPT and
LLaMA's reference code write them, forward(idx, targets) -> (logits, loss) with a symbolic batch
and sequence, and a torchvision-style ResNet in inference with a symbolic batch."""
import collections
import copy
import functools
import unittest

import torch

import fuserc
import models

# f32 throughout; the package's products and reductions run in another order than PyTorch's.
TOL = {"rtol": 1e-4, "atol": 1e-5}
SEQ = {"S": (1, 16)}  # the models' tables (positions, causal mask, rotary) have 16 rows


def tokens(b, s, vocab=64, seed=0, ignore=False):
    g = torch.Generator().manual_seed(seed * 1000 + b * 31 + s)
    idx = torch.randint(0, vocab, (b, s), generator=g)
    targets = torch.randint(0, vocab, (b, s), generator=g)
    if ignore and targets.numel() > 1:
        targets[0, 0] = -1  # ignore_index=-1: left out of the mean
    return idx, targets


def op_counts(graph):
    return collections.Counter(op["op"] for op in graph["ops"])


class LanguageModelTest(unittest.TestCase):
    SIZES = ((2, 8), (3, 16), (1, 5))

    def check_language_model(self, m, first):
        """Exports m in one call with a symbolic batch and sequence, compiles it, and compares
        pkg(idx, targets) with m(idx, targets) at SIZES; then changes a weight in place."""
        dynamic = {first: {0: "B", 1: "S"}, "targets": {0: "B", 1: "S"}}
        example = tokens(2, 8)
        graph = fuserc.export(m, example, dynamic=dynamic, ranges=SEQ)
        self.assertEqual([i["shape"] for i in graph["inputs"][:2]], [["B", "S"], ["B", "S"]])
        self.assertEqual(graph["symbols"]["S"], {"hint": 8, "min": 1, "max": 16})
        self.assertEqual(len(graph["outputs"]), 2)  # logits, loss
        pkg = fuserc.compile(m, example, dynamic=dynamic, ranges=SEQ, arch=["sm_80"])
        self.assertEqual([s.name for s in pkg.inputs[:2]], [first, "targets"])
        self.assertEqual(set(pkg.parameters.values()), {q for q, _ in m.named_parameters()})
        for b, s in self.SIZES:
            idx, targets = tokens(b, s, ignore=True)
            logits, loss = pkg(idx, targets)
            with torch.no_grad():
                want_logits, want_loss = m(idx, targets)
            self.assertEqual(tuple(logits.shape), (b, s, 64))
            torch.testing.assert_close(logits, want_logits, **TOL, msg=f"logits at B={b}, S={s}")
            torch.testing.assert_close(loss, want_loss, **TOL, msg=f"loss at B={b}, S={s}")
        # The package reads the module's parameters at each call.
        idx, targets = tokens(2, 6, seed=1)
        before = pkg(idx, targets)[0]
        head = m.lm_head if hasattr(m, "lm_head") else m.output
        with torch.no_grad():
            head.weight.mul_(1.5)
            want = m(idx, targets)
        after = pkg(idx, targets)
        self.assertFalse(torch.allclose(before, after[0]))
        torch.testing.assert_close(after[0], want[0], **TOL)
        torch.testing.assert_close(after[1], want[1], **TOL)
        return graph

    def test_gpt2(self):
        torch.manual_seed(0)
        m = models.GPT()
        graph = self.check_language_model(m, "idx")
        ops = op_counts(graph)
        # Per block: c_attn, c_proj, c_fc, mlp c_proj; and the tied lm_head.
        self.assertEqual(ops["linear"], 4 * 2 + 1)
        self.assertEqual(ops["matmul"], 2 * 2)  # q @ k^T, att @ v per block
        self.assertEqual(ops["gelu"], 2)
        self.assertEqual(ops["gather"], 1)  # cross-entropy
        names = [i["name"] for i in graph["inputs"]]
        self.assertIn("transformer_wte_weight", names)  # the tied weight: one input
        self.assertNotIn("lm_head_weight", names)
        masks = [i for i in graph["inputs"] if "data" in i]
        self.assertEqual([i["name"] for i in masks],
                         ["transformer_h_0_attn_bias", "transformer_h_1_attn_bias"])

    def test_gpt2_without_targets(self):
        """nanoGPT's generation step: the logits of the last position (x[:, [-1], :], a
        negative index) and no loss."""
        torch.manual_seed(0)
        m = models.GPT()
        idx = tokens(2, 8)[0]
        pkg = fuserc.compile(m, (idx,), dynamic={"idx": {0: "B", 1: "S"}}, ranges=SEQ,
                             arch=["sm_80"])
        for b, s in ((2, 8), (3, 16)):
            idx = tokens(b, s)[0]
            logits, loss = pkg(idx)
            self.assertIsNone(loss)
            with torch.no_grad():
                want = m(idx)[0]
            self.assertEqual(tuple(logits.shape), (b, 1, 64))
            torch.testing.assert_close(logits, want, **TOL, msg=f"B={b}, S={s}")

    def test_llama(self):
        torch.manual_seed(0)
        m = models.Llama()
        graph = self.check_language_model(m, "tokens")
        ops = op_counts(graph)
        self.assertEqual(ops["linear"], 7 * 2 + 1)  # wq wk wv wo w1 w2 w3 per layer, output
        self.assertEqual(ops["silu"], 2)
        self.assertEqual([i["name"] for i in graph["inputs"] if "data" in i],
                         ["rope_cos", "rope_sin"])  # the rotary tables: constants
        self.assertTrue(any(op["op"] == "iota" for op in graph["ops"]))  # triu's mask


class LabelSmoothingTest(unittest.TestCase):
    def test_cross_entropy_with_label_smoothing(self):
        """PyTorch 1.13 writes it with index_put_ (a boolean mask, a number: a `where`) and
        masked_select(...).mean(), whose extent depends on the mask: written as
        sum(where(mask, x, 0)) / sum(mask)."""
        def loss(x, t, reduction):
            return torch.nn.functional.cross_entropy(x, t, label_smoothing=0.1, ignore_index=-1,
                                                     reduction=reduction)
        x, t = torch.randn(4, 5), torch.randint(0, 5, (4,))
        dynamic = {"x": {0: "N"}, "t": {0: "N"}}
        for reduction in ("mean", "sum"):
            fn = functools.partial(loss, reduction=reduction)
            graph = fuserc.export(fn, (x, t), dynamic=dynamic, name="ce")
            pkg = fuserc.compile(graph, arch=["sm_80"])
            for n, ignored in ((4, 0), (7, 3), (3, 3)):  # none, some, all ignored
                x, t = torch.randn(n, 5), torch.randint(0, 5, (n,))
                t[:ignored] = -1
                torch.testing.assert_close(pkg(x, t), fn(x, t), **TOL, equal_nan=True,
                                           msg=f"{reduction} at N={n}, {ignored} ignored")

        def fill(x, m):
            x = x.clone()
            x[m] = 0.5  # index_put_ with a boolean mask over the leading dims
            return x, x.masked_select(m.unsqueeze(-1)).sum()
        x, m = torch.randn(4, 3), torch.tensor([True, False, True, False])
        for got, want in zip(fuserc.compile(fill, (x, m), arch=["sm_80"])(x, m), fill(x, m)):
            torch.testing.assert_close(got, want)

        def selected(x):
            return torch.masked_select(x, x > 0) * 2
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(selected, (torch.randn(4),))
        msg = str(e.exception).splitlines()
        self.assertEqual(len(msg), 2)
        self.assertIn("aten.masked_select.default ('masked_select'): cannot express "
                      "masked_select (its extent depends on the mask's values)", msg[0])
        self.assertRegex(msg[1], r"test_models\.py:\d+ in selected: return torch\.masked_select")


class ResNetTest(unittest.TestCase):
    def test_resnet_in_inference(self):
        torch.manual_seed(0)
        m = models.ResNet().eval()
        x = torch.randn(2, 3, 32, 32)
        dynamic = {"x": {0: "B"}}
        graph = fuserc.export(m, (x,), dynamic=dynamic, constants="all")
        self.assertEqual([i["name"] for i in graph["inputs"] if "data" not in i], ["x"])
        ops = op_counts(graph)
        self.assertEqual(ops["conv"], 6)  # stem, 2 per block, the projection
        self.assertEqual(ops["maximum"], 8)  # a 3x3 max pool: 9 windows
        self.assertEqual(ops["mean"], 1)  # adaptive average pooling to 1x1
        self.assertEqual(ops["rsqrt"], 6)  # one per batch norm
        pad = next(op for op in graph["ops"] if op["op"] == "pad")
        self.assertEqual(pad["value"], "-inf")
        pkg = fuserc.compile(m, (x,), dynamic=dynamic, constants="all", arch=["sm_80"])
        self.assertEqual([s.name for s in pkg.inputs], ["x"])
        # The compiler folds each batch norm into the constant weights of its conv (the
        # running statistics are gone from the package's constants).
        constants = [c["name"] for c in pkg.constants]
        self.assertEqual(sum(n.endswith("_weight_bn") for n in constants), 6, constants)
        self.assertFalse([n for n in constants if "running" in n], constants)
        for b in (2, 3, 1):
            x = torch.randn(b, 3, 32, 32)
            with torch.no_grad():
                want = m(x)
            torch.testing.assert_close(pkg(x), want, rtol=1e-4, atol=1e-4, msg=f"B={b}")

    def test_pooling_variants(self):
        def pools(x, y):
            F = torch.nn.functional
            return (F.max_pool2d(x, 3, stride=2, ceil_mode=True),
                    F.max_pool2d(x, (2, 3), stride=(1, 2), padding=1, dilation=2),
                    F.max_pool1d(y, 2), F.adaptive_avg_pool1d(y, 1),
                    # average pooling: the divisor counts the padding, or not, and never
                    # what ceil_mode's last window reaches past it
                    F.avg_pool2d(x, 3, stride=2, padding=1),
                    F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                    F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False),
                    F.avg_pool2d(x, (2, 3), stride=(1, 2), divisor_override=5),
                    F.avg_pool1d(y, 3, stride=2, padding=1, count_include_pad=False),
                    F.adaptive_avg_pool2d(x, (4, 3)), F.adaptive_avg_pool1d(y, 7))
        x, y = torch.randn(2, 3, 8, 9), torch.randn(2, 4, 7)
        pkg = fuserc.compile(pools, (x, y), dynamic={"x": {0: "B"}, "y": {0: "B"}},
                             arch=["sm_80"])
        for b in (2, 1):
            x, y = torch.randn(b, 3, 8, 9), torch.randn(b, 4, 7)
            for n, (got, want) in enumerate(zip(pkg(x, y), pools(x, y))):
                torch.testing.assert_close(got, want, msg=f"output {n} at B={b}")

    def test_ceil_mode_pooling_over_symbolic_images(self):
        """GoogLeNet's pools with a symbolic image size: ceil_mode's last window reaches past
        the padding at odd sizes (not counted by the average); the least size is raised to
        where PyTorch gives one window."""
        def pools(x):
            F = torch.nn.functional
            return (F.max_pool2d(x, 3, stride=2, ceil_mode=True),
                    F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
                    F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False))
        graph = fuserc.export(pools, (torch.randn(2, 3, 9, 12),),
                                 dynamic={"x": {2: "H", 3: "W"}})
        self.assertEqual(graph["symbols"]["H"]["min"], 2)
        pkg = fuserc.compile(pools, (torch.randn(2, 3, 9, 12),),
                             dynamic={"x": {2: "H", 3: "W"}}, arch=["sm_80"])
        for h, w in ((9, 12), (10, 7), (2, 3)):
            x = torch.randn(2, 3, h, w)
            for n, (got, want) in enumerate(zip(pkg(x), pools(x))):
                torch.testing.assert_close(got, want, msg=f"output {n} at {h}x{w}")

    def test_batch_norm_in_training_updates_the_buffers(self):
        """conv-bn-relu in train(): the batch's statistics normalize, and the running
        statistics and num_batches_tracked are inputs written in place (aliases) that the
        package passes itself, so pkg(x) updates the module's buffers as forward does."""
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                                torch.nn.ReLU()).train()
        ref = copy.deepcopy(m)
        x = torch.randn(2, 3, 5, 5)
        dynamic = {"input": {0: "N"}}
        graph = fuserc.export(m, (x,), dynamic=dynamic)
        state = ["p_1_num_batches_tracked", "p_1_running_mean", "p_1_running_var"]
        self.assertEqual(graph.buffers, {"p_1_num_batches_tracked": "1.num_batches_tracked",
                                         "p_1_running_mean": "1.running_mean",
                                         "p_1_running_var": "1.running_var"})
        self.assertEqual(sorted(graph["aliases"].values()), state)
        self.assertFalse([i["name"] for i in graph["inputs"] if "data" in i])
        # The unbiased variance: the biased one times n / (n - 1), n = N*5*5 a size literal.
        sizes = [a["size"] for op in graph["ops"] for a in op["args"] if isinstance(a, dict)]
        self.assertEqual(sizes, ["25*N", "25*N-1"])
        pkg = fuserc.compile(m, (x,), dynamic=dynamic, arch=["sm_80"])
        self.assertEqual([s.name for s in pkg.inputs][-3:], state)
        for b in (2, 3):
            x = torch.randn(b, 3, 5, 5)
            y = pkg(x)
            want = ref(x).detach()
            torch.testing.assert_close(y, want, **TOL, msg=f"output at N={b}")
            for (n, got), (_, want) in zip(m.named_buffers(), ref.named_buffers()):
                torch.testing.assert_close(got, want, **TOL, msg=f"{n} after N={b}")
        self.assertEqual(int(m[1].num_batches_tracked), 2)

        def batch_statistics(x):  # no running statistics: nothing updated
            return torch.nn.functional.batch_norm(x, None, None, training=True)
        x = torch.randn(2, 3, 4)
        torch.testing.assert_close(fuserc.compile(batch_statistics, (x,), arch=["sm_80"])(x),
                                   batch_statistics(x), **TOL)

    def test_group_norm(self):
        """native_group_norm, decomposed while tracing (var and mean over each group)."""
        torch.manual_seed(0)
        w, b = torch.randn(6), torch.randn(6)

        def norms(x, y):
            F = torch.nn.functional
            return F.group_norm(x, 2, w, b, eps=1e-5), F.group_norm(y, 3)
        x, y = torch.randn(2, 6, 3, 4), torch.randn(2, 6, 5)
        dynamic = {"x": {0: "N"}, "y": {0: "N", 2: "L"}}
        pkg = fuserc.compile(norms, (x, y), dynamic=dynamic, arch=["sm_80"])
        for n, length in ((2, 5), (3, 7), (1, 2)):
            x, y = torch.randn(n, 6, 3, 4), torch.randn(n, 6, length)
            for k, (got, want) in enumerate(zip(pkg(x, y), norms(x, y))):
                torch.testing.assert_close(got, want, **TOL, msg=f"output {k} at N={n}, "
                                                                 f"L={length}")

    def test_refusals_name_the_op_and_line(self):
        counter = torch.zeros(3)

        def updates_a_closed_over_tensor(x):
            counter.add_(1)  # neither an input nor a module's buffer
            return x + counter
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(updates_a_closed_over_tensor, (torch.randn(3),))
        msg = str(e.exception).splitlines()
        self.assertEqual(len(msg), 2)
        self.assertIn("aten.add_.Tensor ('add_'): updates a tensor in place, which is neither an "
                      "input of the function nor a buffer of the module", msg[0])
        self.assertRegex(msg[1], r"test_models\.py:\d+ in updates_a_closed_over_tensor: "
                                 r"counter\.add_\(1\)")

        def pooled(x):
            return torch.nn.functional.adaptive_max_pool2d(x, (3, 3), return_indices=True)[1]
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(pooled, (torch.randn(1, 2, 8, 8),))
        msg = str(e.exception).splitlines()
        self.assertEqual(len(msg), 2)
        self.assertIn("cannot express the indices of adaptive max pooling in a fuserc graph",
                      msg[0])
        self.assertRegex(msg[1], r"test_models\.py:\d+ in pooled: return torch\.nn\.functional"
                                 r"\.adaptive_max_pool2d\(x, \(3, 3\), return_indices=True\)")


if __name__ == "__main__":
    unittest.main()
