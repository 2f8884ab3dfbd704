"""Layers of real vision and sequence models as their open implementations write them, each
exported in one call, compiled and called on CPU tensors (the emulator) against PyTorch at more
than one size: upsampling (UNet, FPN), reflection padding (style transfer, GAN generators), pixel shuffle (super-resolution), PReLU, repeat and roll
(Swin), and nn.MultiheadAttention / nn.TransformerEncoderLayer in inference, whose fast paths
(_native_multi_head_attention, _transformer_encoder_layer_fwd) PyTorch takes under no_grad: a
ViT with a class token over a symbolic image size."""
import unittest

import torch

import fuserc

F = torch.nn.functional
TOL = {"rtol": 1e-4, "atol": 1e-5}


def check(test, fn, example, dynamic, others, tol=None):
    """Compiles fn at `example` under no_grad (where PyTorch's layers take their inference fast
    paths) and compares it with PyTorch there and at each of `others`."""
    with torch.no_grad():
        pkg = fuserc.compile(fn, example, dynamic=dynamic, arch=["sm_80"])
    for args in [example] + list(others):
        with torch.no_grad():
            want = fn(*args)
        got = pkg(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for n, (g, w) in enumerate(zip(got, want)):
            torch.testing.assert_close(g, w, **(tol or {}),
                                       msg=lambda m: f"output {n} at {args[0].shape}: {m}")
    return pkg


class ResampleTest(unittest.TestCase):
    def test_upsampling_as_pytorch_computes_it(self):
        """Nearest (scale and size, nearest-exact) and bilinear (align_corners both ways, a
        size that shrinks) over a symbolic batch and image: source indices and weights from
        an iota in f32, as PyTorch's kernels compute them."""
        def up(x):
            return (F.interpolate(x, scale_factor=2, mode="nearest"),
                    F.interpolate(x, size=(7, 3), mode="nearest"),
                    F.interpolate(x, size=(7, 3), mode="nearest-exact"),
                    F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
                    F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
                    F.interpolate(x, size=(3, 2), mode="bilinear"))
        check(self, up, (torch.randn(2, 3, 4, 5),), {"x": {0: "B", 2: "H", 3: "W"}},
              [(torch.randn(1, 3, 6, 9),), (torch.randn(3, 3, 1, 2),)], TOL)

    def test_scales_that_keep_a_size_and_f64(self):
        """A linear dim whose size does not change is copied whatever the scale (1.04 over 20
        gives 20); nearest computes from the scale (2.05 over 10 gives 20, not a plain 2x);
        f64 interpolates with f64 weights."""
        def up(x, y):
            return (F.interpolate(x, scale_factor=1.04, mode="linear"),
                    F.interpolate(y, scale_factor=2.05, mode="nearest"),
                    F.interpolate(y.double(), size=(7, 5), mode="bilinear"))
        check(self, up, (torch.randn(1, 2, 20), torch.randn(1, 2, 6, 10)), None, [], TOL)

    def test_linear_upsampling_of_bf16_rounds_once(self):
        """bf16 is interpolated in f32 and rounded once at the end (as PyTorch's CUDA kernel
        does; its CPU kernel rounds in between, up to an ulp away)."""
        def up(x):
            return F.interpolate(x, scale_factor=2, mode="bilinear")
        x = torch.randn(1, 2, 4, 5).bfloat16()
        pkg = fuserc.compile(up, (x,), arch=["sm_80"])
        torch.testing.assert_close(pkg(x), up(x.float()).bfloat16(), rtol=0, atol=0)

    def test_reflection_and_replication_padding(self):
        def pads(x):
            return (F.pad(x, (1, 2, 3, 1), mode="reflect"),
                    F.pad(x, (2, 1, 0, 3), mode="replicate"),
                    F.pad(x[:, :, 0], (3, 2), mode="reflect"))
        check(self, pads, (torch.randn(2, 3, 5, 6),), {"x": {0: "B", 2: "H", 3: "W"}},
              [(torch.randn(1, 3, 4, 9),)], TOL)

    def test_pixel_shuffle_prelu_repeat_and_roll(self):
        def layers(x, w):
            s = F.pixel_shuffle(x, 2)
            return (s, F.pixel_unshuffle(s, 2), F.prelu(x, w), F.prelu(x, w[:1]),
                    x.repeat(1, 2, 1, 3), torch.roll(x, shifts=(-1, 2), dims=(2, 3)))
        check(self, layers, (torch.randn(2, 8, 3, 5), torch.rand(8)), {"x": {0: "B"}},
              [(torch.randn(1, 8, 3, 5), torch.rand(8))], TOL)


def window_partition(x, ws):  # Swin's (timm, torchvision)
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows, ws, h, w):
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, h, w, c)


class SwinWindows(torch.nn.Module):
    """A Swin block's window round trip (timm's V1: the image a multiple of the window), with
    the cyclic shift of the odd blocks; or torchvision's, which pads the image to whole windows
    and crops it back."""

    def __init__(self, c=16, ws=4, shift=0, pad=False):
        super().__init__()
        self.norm = torch.nn.LayerNorm(c)
        self.fc = torch.nn.Linear(c, c)
        self.ws, self.shift, self.pad = ws, shift, pad

    def forward(self, x):
        b, h, w, c = x.shape
        ws = self.ws
        y = self.norm(x)
        if self.pad:
            y = F.pad(y, (0, 0, 0, (ws - w % ws) % ws, 0, (ws - h % ws) % ws))
        hp, wp = y.shape[1], y.shape[2]
        if self.shift:
            y = torch.roll(y, shifts=(-self.shift, -self.shift), dims=(1, 2))
        y = self.fc(window_partition(y, ws).view(-1, ws * ws, c)).view(-1, ws, ws, c)
        y = window_reverse(y, ws, hp, wp)
        if self.shift:
            y = torch.roll(y, shifts=(self.shift, self.shift), dims=(1, 2))
        return x + y[:, :h, :w, :]


class SwinTest(unittest.TestCase):
    def test_window_partition_over_a_symbolic_image(self):
        """Swin's window_partition: [B, H, W, C] viewed as [B, H//4, 4, W//4, 4, C] traces only
        at multiples of 4, so H is 4 units (H_over_4): the windows view back to the image, and
        fuserc refuses an H that is not a multiple of 4 when it binds."""
        dynamic = {"x": {0: "B", 1: "H", 2: "W"}}
        for shift in (0, 2):
            torch.manual_seed(shift)
            m = SwinWindows(shift=shift).eval()
            pkg = check(self, m, (torch.randn(2, 8, 12, 16),), dynamic,
                        [(torch.randn(1, 4, 16, 16),), (torch.randn(3, 12, 4, 16),)], TOL)
            self.assertEqual(pkg.inputs[0].shape, ["B", "H_over_4 * 4", "W_over_4 * 4", 16])
        with self.assertRaisesRegex(fuserc.FusercError, "no integer H_over_4 makes 6"):
            pkg(torch.randn(1, 6, 16, 16))

    def test_windows_of_an_image_padded_to_whole_windows(self):
        """torchvision's Swin pads the image by (4 - H % 4) % 4 to whole windows: the padded
        extent H + (-H) % 4 is a multiple of 4 that fuserc proves, so any H works, and the
        padded windows' counts are not mistaken for another dim's (at the traced sizes W's
        count was H's plus one)."""
        torch.manual_seed(3)
        m = SwinWindows(pad=True).eval()
        check(self, m, (torch.randn(2, 10, 13, 16),), {"x": {0: "B", 1: "H", 2: "W"}},
              [(torch.randn(1, 8, 8, 16),), (torch.randn(3, 5, 17, 16),),
               (torch.randn(1, 1, 1, 16),)], TOL)


class SwinStem(torch.nn.Module):
    """Swin's patch embedding (4x4, stride 4) then windows of 7 over the H // 4 x W // 4 grid."""

    def __init__(self, c=16, ws=7):
        super().__init__()
        self.pe = torch.nn.Conv2d(3, c, 4, 4)
        self.fc = torch.nn.Linear(c, c)
        self.ws = ws

    def forward(self, img):
        x = self.pe(img).permute(0, 2, 3, 1)
        b, h, w, c = x.shape
        y = self.fc(window_partition(x, self.ws).view(-1, self.ws * self.ws, c))
        return x + window_reverse(y.view(-1, self.ws, self.ws, c), self.ws, h, w)


class SwinStemTest(unittest.TestCase):
    def test_windows_over_the_patch_grid(self):
        """Windows of 7 over H // 4 trace only where H is a multiple of 28: H is 28 units."""
        torch.manual_seed(4)
        m = SwinStem().eval()
        pkg = check(self, m, (torch.randn(2, 3, 56, 84),), {"img": {0: "B", 2: "H", 3: "W"}},
                    [(torch.randn(1, 3, 28, 112),)], TOL)
        self.assertEqual(pkg.inputs[0].shape, ["B", 3, "H_over_28 * 28", "W_over_28 * 28"])


class InstanceNormBlock(torch.nn.Module):
    """CycleGAN's residual block: reflection padding, convolution, instance norm and
    nn.ReLU(inplace=True), which writes into the view PyTorch 1.13's instance norm returns."""

    def __init__(self, c=4):
        super().__init__()
        self.block = torch.nn.Sequential(
            torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(c, c, 3),
            torch.nn.InstanceNorm2d(c, affine=True), torch.nn.ReLU(True))

    def forward(self, x):
        return x + self.block(x)


class InPlaceTest(unittest.TestCase):
    def test_in_place_activation_on_a_view_of_an_intermediate(self):
        torch.manual_seed(4)
        check(self, InstanceNormBlock().eval(), (torch.randn(2, 4, 6, 6),),
              {"x": {0: "B", 2: "H", 3: "W"}}, [(torch.randn(1, 4, 5, 9),)], TOL)

    def test_in_place_activations(self):
        """Activations PyTorch traces through decompositions, in their in-place forms
        (nn.Hardswish(inplace=True) in torchvision's MobileNetV3): each a decomposition
        copied into its tensor."""
        torch.manual_seed(5)
        nn = torch.nn
        acts = [nn.Hardswish(True), nn.Hardsigmoid(True), nn.ELU(inplace=True),
                nn.CELU(inplace=True), nn.SELU(True), nn.Mish(True), nn.Threshold(0.1, 2.0, True),
                nn.LeakyReLU(0.1, True), nn.ReLU6(True)]
        layers = []
        for a in acts:
            layers += [nn.Conv2d(4, 4, 1), a]
        m = nn.Sequential(*layers).eval()
        check(self, m, (torch.randn(2, 4, 5, 5) * 3,), {"input": {0: "B"}},
              [(torch.randn(1, 4, 5, 5) * 3,)], {"rtol": 1e-4, "atol": 1e-5})

    def test_a_write_into_a_view_shows_through_its_tensor(self):
        """A write into y.view(...) is a write into y (read after it); where another view of y
        taken before the write is read after it, the write is refused (that view would not
        see it in the graph)."""
        def shows_through(x):
            y = x * 2
            y.view(2, -1).relu_()
            return y + 1  # reads the write through y
        x = torch.randn(2, 3)
        pkg = fuserc.compile(shows_through, (x,), arch=["sm_80"])
        torch.testing.assert_close(pkg(x), shows_through(x))

        def stale(x):
            y = x * 2
            early = y[:, :1]  # a view of y taken before the write
            y.view(2, -1).relu_()
            return early + 1  # shows the write in PyTorch
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(stale, (torch.randn(2, 3),))
        self.assertIn("updates a view of another tensor in place", str(e.exception))


class RecurrentTest(unittest.TestCase):
    def test_lstm_and_gru_cells_activate_their_gates_in_place(self):
        """PyTorch 1.13's LSTM and GRU cells chunk the gates and activate each piece in place:
        the pieces of a split are apart, so each write is the piece's own new value (was
        refused as a write into a view of another tensor); a write into a piece whose tensor is
        read after it stays refused."""
        torch.manual_seed(6)
        nn = torch.nn
        check(self, nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True).eval(),
              (torch.randn(3, 5, 4),), {"input": {0: "B"}}, [(torch.randn(2, 5, 4),)], TOL)
        check(self, nn.GRUCell(4, 6), (torch.randn(3, 4), torch.randn(3, 6)),
              {"input": {0: "B"}, "hx": {0: "B"}}, [(torch.randn(5, 4), torch.randn(5, 6))],
              TOL)

        def base_read_after(x):
            g = x * 2
            a, _ = g.chunk(2, 1)
            a.sigmoid_()
            return g + 1  # shows the write in PyTorch
        with self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(base_read_after, (torch.randn(3, 4),))
        self.assertIn("updates a view of another tensor in place", str(e.exception))


class ModuleZooTest(unittest.TestCase):
    def test_bilinear_channel_shuffle_rrelu_and_addr(self):
        """nn.Bilinear (aten._trilinear), nn.ChannelShuffle, nn.RReLU in eval (the mean
        slope) and torch.addr (beta 0 ignores x, NaN included): each was refused; RReLU in
        training (random slopes) stays refused, saying why."""
        torch.manual_seed(8)
        nn = torch.nn
        check(self, nn.Bilinear(5, 4, 3), (torch.randn(3, 5), torch.randn(3, 4)),
              {"input1": {0: "B"}, "input2": {0: "B"}},
              [(torch.randn(5, 5), torch.randn(5, 4))], TOL)
        check(self, nn.Sequential(nn.ChannelShuffle(3), nn.RReLU()).eval(),
              (torch.randn(2, 6, 4, 5),), {"input": {0: "B"}}, [(torch.randn(3, 6, 4, 5),)])

        def addr(x, a, b):
            return torch.addr(x, a, b, beta=0.5, alpha=2), torch.addr(x, a, b, beta=0)
        x = torch.randn(3, 4)
        x[0, 0] = float("nan")
        check(self, addr, (x, torch.randn(3), torch.randn(4)), {"x": {0: "B"}, "a": {0: "B"}},
              [(torch.randn(5, 4), torch.randn(5), torch.randn(4))], {"equal_nan": True})
        with self.assertRaisesRegex(fuserc.ExportError, "RReLU in training"):
            fuserc.export(nn.RReLU().train(), (torch.randn(3, 4),))


class UNetStep(torch.nn.Module):
    """One down and up step of the widely copied UNet (milesial's): the upsampled map padded by
    the difference of the two maps' extents, split in halves, then concatenated with the skip."""

    def __init__(self, mode):
        super().__init__()
        self.mode = mode
        self.inc = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.down = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.up = torch.nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.out = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x):
        x1 = F.relu(self.inc(x))
        x2 = F.relu(self.down(F.max_pool2d(x1, 2)))
        if self.mode == "transpose":
            u = self.up(x2)
        else:
            u = F.interpolate(x2[:, :4], scale_factor=2, mode="bilinear", align_corners=True)
        dy, dx = x1.size()[2] - u.size()[2], x1.size()[3] - u.size()[3]
        u = F.pad(u, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.out(torch.cat([x1, u], dim=1))


class UNetTest(unittest.TestCase):
    def test_skip_connections_over_odd_and_even_images(self):
        """The pads are each dim's own difference of extents (H - 2*(H//2) in halves), not
        another symbol's parity that agrees with it in the traces."""
        torch.manual_seed(3)
        for mode in ("transpose", "bilinear"):
            m = UNetStep(mode).eval()
            check(self, m, (torch.randn(2, 3, 16, 12),), {"x": {0: "B", 2: "H", 3: "W"}},
                  [(torch.randn(1, 3, 9, 11),), (torch.randn(3, 3, 10, 7),)], TOL)


class ViT(torch.nn.Module):
    """torchvision's ViT cut down: a patch embedding, a class token and a learned position per
    token added, one encoder layer and the head on the class token."""

    def __init__(self, e=32, heads=4, patch=4, norm_first=True):
        super().__init__()
        self.proj = torch.nn.Conv2d(3, e, patch, stride=patch)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, e))
        self.enc = torch.nn.TransformerEncoderLayer(e, heads, 2 * e, dropout=0.0,
                                                    activation="gelu", batch_first=True,
                                                    norm_first=norm_first)
        self.norm = torch.nn.LayerNorm(e)
        self.head = torch.nn.Linear(e, 10)

    def forward(self, x):
        t = self.proj(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1)
        return self.head(self.norm(self.enc(t)[:, 0]))


class SelfAttention(torch.nn.Module):
    def __init__(self, e=32, heads=4):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(e, heads, batch_first=True)

    def forward(self, x, pad):
        return self.mha(x, x, x, key_padding_mask=pad, need_weights=False)[0]


def _test_library():
    """The library of the test namespace (PyTorch 1.13 has no FRAGMENT kind: one DEF library
    for every op defined there; registrations live as long as it does)."""
    if not hasattr(_test_library, "lib"):
        _test_library.lib = torch.library.Library("fuserc_test", "DEF")
    return _test_library.lib


def _sdpa_op():
    """PyTorch 2's aten.scaled_dot_product_attention; on PyTorch 1.13, which has none, an op of
    the same schema and semantics (without dropout) registered under a test namespace, so that
    the converter's reading of that schema is exercised where CI runs."""
    if hasattr(torch.ops.aten, "scaled_dot_product_attention"):
        return torch.ops.aten.scaled_dot_product_attention.default
    if not hasattr(torch.ops.fuserc_test, "scaled_dot_product_attention"):
        lib = _test_library()
        lib.define("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
                   "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, "
                   "float? scale=None, bool enable_gqa=False) -> Tensor")

        def math_impl(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                      enable_gqa=False):
            s = q @ k.transpose(-2, -1) * (scale if scale is not None else q.shape[-1] ** -0.5)
            if is_causal:
                keep = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
                s = s.masked_fill(keep.logical_not(), float("-inf"))
            if attn_mask is not None:
                s = s.masked_fill(attn_mask.logical_not(), float("-inf")) \
                    if attn_mask.dtype == torch.bool else s + attn_mask
            return torch.softmax(s, -1) @ v

        def meta_impl(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                      enable_gqa=False):
            return q.new_empty(q.shape[:-1] + v.shape[-1:])
        lib.impl("scaled_dot_product_attention", math_impl, "CPU")
        lib.impl("scaled_dot_product_attention", meta_impl, "Meta")
    return torch.ops.fuserc_test.scaled_dot_product_attention.default


def _fused_sdpa_ops():
    """The fused kernels that torch.export on a CUDA tensor lowers attention to, with their
    schemas, registered under the test namespace (math and meta implementations; the
    log-sum-exp and other side results empty): (efficient, flash)."""
    if not hasattr(torch.ops.fuserc_test, "_scaled_dot_product_efficient_attention"):
        lib = _test_library()
        lib.define("_scaled_dot_product_efficient_attention(Tensor query, Tensor key, "
                   "Tensor value, Tensor? attn_bias, bool compute_log_sumexp, "
                   "float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> "
                   "(Tensor output, Tensor log_sumexp, Tensor philox_seed, "
                   "Tensor philox_offset)")
        lib.define("_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, "
                   "float dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, "
                   "*, float? scale=None) -> (Tensor output, Tensor logsumexp, "
                   "Tensor cum_seq_q, Tensor cum_seq_k, int max_q, int max_k, "
                   "Tensor philox_seed, Tensor philox_offset, Tensor debug_attn_mask)")

        def attend(q, k, v, bias, is_causal, scale):
            s = q @ k.transpose(-2, -1) * (scale if scale is not None else q.shape[-1] ** -0.5)
            if is_causal:
                keep = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
                s = s.masked_fill(keep.logical_not(), float("-inf"))
            if bias is not None:
                s = s + bias
            return torch.softmax(s, -1) @ v

        def efficient(q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
                      scale=None):
            e = q.new_empty(0)
            return attend(q, k, v, attn_bias, is_causal, scale), e, e, e

        def efficient_meta(q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0,
                           is_causal=False, scale=None):
            e = q.new_empty(0)
            return q.new_empty(q.shape[:-1] + v.shape[-1:]), e, e, e

        def flash(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, scale=None):
            e = q.new_empty(0)
            return attend(q, k, v, None, is_causal, scale), e, e, e, 0, 0, e, e, e

        def flash_meta(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False,
                       scale=None):
            e = q.new_empty(0)
            return q.new_empty(q.shape[:-1] + v.shape[-1:]), e, e, e, 0, 0, e, e, e
        lib.impl("_scaled_dot_product_efficient_attention", efficient, "CPU")
        lib.impl("_scaled_dot_product_efficient_attention", efficient_meta, "Meta")
        lib.impl("_scaled_dot_product_flash_attention", flash, "CPU")
        lib.impl("_scaled_dot_product_flash_attention", flash_meta, "Meta")
    ns = torch.ops.fuserc_test
    return (ns._scaled_dot_product_efficient_attention.default,
            ns._scaled_dot_product_flash_attention.default)


class AttentionTest(unittest.TestCase):
    def test_scaled_dot_product_attention_maps_to_the_contracts_op(self):
        sdpa = _sdpa_op()

        def attend(q, k, v, keep, bias):
            return (sdpa(q, k, v, is_causal=True), sdpa(q, k, v, keep, scale=0.3),
                    sdpa(q, k, v, bias))
        q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 6)
        keep = torch.rand(5, 7) > 0.3
        keep[:, 0] = True
        bias = torch.randn(5, 7)
        graph = fuserc.export(attend, (q, k, v, keep, bias), tracer="make_fx")
        ops = [op for op in graph["ops"] if op["op"] == "scaled_dot_product_attention"]
        self.assertEqual([(op.get("is_causal"), op.get("scale"), len(op["args"])) for op in ops],
                         [(True, None, 3), (None, 0.3, 4), (None, None, 4)])
        check(self, attend, (q, k, v, keep, bias), {"q": {0: "B", 2: "L"}, "k": {0: "B", 2: "S"},
                                                   "v": {0: "B", 2: "S"}, "keep": {0: "L", 1: "S"},
                                                   "bias": {0: "L", 1: "S"}},
              [(torch.randn(1, 4, 3, 8), torch.randn(1, 4, 6, 8), torch.randn(1, 4, 6, 6),
                torch.ones(3, 6, dtype=torch.bool).tril(), torch.randn(3, 6))], TOL)

    def test_fused_attention_kernels_map_to_the_contracts_op(self):
        """The kernels torch.export on CUDA lowers attention to (efficient with an additive
        bias, flash causal) become the contract's op; their log-sum-exp is refused where
        used."""
        efficient, flash = _fused_sdpa_ops()

        def attend(q, k, v, bias):
            return (efficient(q, k, v, bias, False, scale=0.3)[0],
                    flash(q, k, v, 0.0, True)[0])
        q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 6)
        bias = torch.randn(5, 5)
        graph = fuserc.export(attend, (q, k, v, bias), tracer="make_fx")
        ops = [op for op in graph["ops"] if op["op"] == "scaled_dot_product_attention"]
        self.assertEqual([(op.get("is_causal"), op.get("scale"), len(op["args"])) for op in ops],
                         [(None, 0.3, 4), (True, None, 3)])
        check(self, attend, (q, k, v, bias), {"q": {0: "B"}, "k": {0: "B"}, "v": {0: "B"}},
              [(torch.randn(3, 4, 5, 8), torch.randn(3, 4, 5, 8), torch.randn(3, 4, 5, 6),
                bias)], TOL)
        with self.assertRaisesRegex(fuserc.ExportError, "log-sum-exp, seeds or offsets"):
            fuserc.export(lambda q, k, v: flash(q, k, v, 0.0, True)[1] + 1, (q, k, v),
                          tracer="make_fx")

    def test_vit_over_a_symbolic_image(self):
        """Both orders of the encoder layer's norms; S = (H/4)*(W/4) + 1 tokens, whose layer
        norms and softmax rows span an extent that is a sum."""
        torch.manual_seed(0)
        for norm_first in (True, False):
            m = ViT(norm_first=norm_first).eval()
            with torch.no_grad():
                graph = fuserc.export(m, (torch.randn(2, 3, 16, 16),),
                                      dynamic={"x": {0: "B", 2: "H", 3: "W"}})
            ops = [op["op"] for op in graph["ops"]]
            self.assertEqual(ops.count("scaled_dot_product_attention"), 1)
            self.assertEqual(ops.count("linear"), 5)  # qkv, out, two feed-forward, head
            check(self, m, (torch.randn(2, 3, 16, 16),), {"x": {0: "B", 2: "H", 3: "W"}},
                  [(torch.randn(1, 3, 12, 20),)], {"rtol": 1e-4, "atol": 1e-4})

    def test_multi_head_attention_with_a_key_padding_mask(self):
        """True in the key padding mask leaves a key out (the contract's bool mask keeps what
        is true: the mask is negated)."""
        torch.manual_seed(1)
        m = SelfAttention().eval()
        pad = torch.zeros(2, 6, dtype=torch.bool)
        pad[0, 4:] = True
        pad2 = torch.zeros(3, 5, dtype=torch.bool)
        pad2[1, 1:] = True
        # A float mask: the fast path leaves out every non-zero entry (0.5 too), not adds it.
        padf = torch.zeros(2, 6)
        padf[0, 3], padf[1, 5] = 0.5, float("-inf")
        check(self, m, (torch.randn(2, 6, 32), padf), None, [], TOL)
        check(self, m, (torch.randn(2, 6, 32), pad), {"x": {0: "B", 1: "S"},
                                                     "pad": {0: "B", 1: "S"}},
              [(torch.randn(3, 5, 32), pad2)], TOL)

    def test_attention_weights_are_refused_only_when_used(self):
        m = torch.nn.MultiheadAttention(32, 4, batch_first=True).eval()

        def weights(x):
            return m(x, x, x)[1]
        with torch.no_grad(), self.assertRaises(fuserc.ExportError) as e:
            fuserc.export(weights, (torch.randn(2, 6, 32),))
        self.assertIn("need_weights=False", str(e.exception))


if __name__ == "__main__":
    unittest.main()
