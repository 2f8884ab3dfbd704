"""Round trips on CPU tensors (the kernels run in fuserc's CUDA emulator): each function of
roundtrip_cases.py is exported, compiled and called at two sizes, against PyTorch's results."""
import unittest

import torch

import fuserc
import roundtrip_cases


class RoundTrip(unittest.TestCase):
    pass


def _make(case):
    def test(self):
        roundtrip_cases.run_case(fuserc, case, "cpu", arch=["sm_80"])
    return test


for _case in roundtrip_cases.CASES:
    setattr(RoundTrip, f"test_{_case['name']}", _make(_case))


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device: the CUDA round trips run in "
                     "python/tests/gpu_check.py on a GPU machine")
class RoundTripCuda(unittest.TestCase):
    def test_all_cases_on_cuda(self):
        for case in roundtrip_cases.CASES:
            with self.subTest(case=case["name"]):
                roundtrip_cases.run_case(fuserc, case, "cuda")


if __name__ == "__main__":
    unittest.main()
