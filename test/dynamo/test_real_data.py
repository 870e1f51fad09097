"""Inputs real data has, judged against eager: NaN and infinities, ties, repeated indices,
tensors past 2^16 elements.

The other scenarios draw small, finite, distinct random values. Real inputs are not like
that: a masked attention row is all -inf, log of zero is -inf, padding carries NaN; a
saturated classifier's logits tie; an embedding lookup repeats token ids and a scatter its
indices; an image batch or a sequence of embeddings has far more than a few thousand
elements. Kernels that are wrong only there (a reduction that skips NaN, an accumulating
write that loses duplicates, an arg-reduction that breaks ties the other way, a kernel whose
16-bit index wraps) pass every other scenario.

Each scenario runs twice: on the special inputs and on ordinary ones of the same shape. The
ordinary twin passes on each faulty backend of test/harness/faulty_backends/real_data.py,
which test/proofs/test_real_data_faults.py requires, so a failure of the special one is the
special values' doing. NaN positions must match eager's (assert_close compares with
equal_nan); ties are judged by what torch documents (argmax, argmin, max and min along a
dimension return the first of equal values), never by an order torch leaves open.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from parameterized import parameterized

from harness import dtypes, for_each_backend
from test.dynamo.test_backend_contract import ContractCase

NAN, INF = float("nan"), float("inf")
ROWS, COLUMNS = 6, 10
LARGE = (3, 2 ** 15 + 1000)  # 101 304 elements: past 2^16 in every output that keeps the shape


def _with_special_values(x: torch.Tensor) -> torch.Tensor:
    """Row 0 has a NaN, row 1 +inf, row 2 -inf, row 3 is all -inf (a fully masked row)."""
    x = x.clone()
    x[0, 3] = NAN
    x[1, 5] = INF
    x[2, 1] = -INF
    x[3] = -INF
    return x


def _reductions(x):
    return (x.sum(1), x.mean(0), x.amax(1), x.amin(0), torch.logsumexp(x, 1), x.softmax(-1),
            x.max(1).values, x.nansum(0))


def _masked_attention(q, k, mask):
    scores = (q @ k.t()).masked_fill(mask, -INF)
    return scores.softmax(-1), torch.logsumexp(scores, -1)


def _repeated_values(logits, base, index, src):
    maximum, where_max = logits.max(-1)
    minimum, where_min = logits.min(0)
    return (logits.argmax(-1), logits.argmin(0), maximum, where_max, minimum, where_min, logits.argmax(),
            base.index_add(0, index, src),
            base.index_put((index,), src, accumulate=True),
            base.scatter_add(0, index.unsqueeze(1).expand(-1, base.shape[1]), src))


def _embedding_bag(weight, ids):
    return F.embedding(ids, weight).sum(1)


def _large(x, w):
    # log_softmax and var beside softmax: over 2^15 elements a softmax's values are about 3e-5,
    # where a tolerance's absolute part hides an accumulation in bfloat16; their logarithm and a
    # variance do not.
    return (x.sin() * w + 1, x.sum(1), x.softmax(-1), x.log_softmax(-1), torch.logsumexp(x, 1), x.var(1), x.amax(1),
            x.amin(1), x.cumsum(0))


def _ordinary(_kind: str) -> bool:
    return _kind == "ordinary"


KINDS = [("special",), ("ordinary",)]


@dtypes.numeric
@for_each_backend
class RealDataTests(ContractCase):
    """Each test: ``_special`` with the values real data has, ``_ordinary`` its twin."""

    @parameterized.expand(KINDS)
    def test_nan_and_inf_through_reductions(self, kind):
        def make():
            x = torch.randn(ROWS, COLUMNS)
            return (x if _ordinary(kind) else _with_special_values(x),)
        self.check(_reductions, make)

    @parameterized.expand(KINDS)
    def test_masked_attention_rows(self, kind):
        def make():
            q, k = torch.randn(ROWS, 4), torch.randn(COLUMNS, 4)
            mask = torch.zeros(ROWS, COLUMNS, dtype=torch.bool)
            if not _ordinary(kind):
                mask[:, 3:] = True
                mask[2] = True  # a query that may attend to nothing: NaN, as in eager
            return q.requires_grad_(), k, mask
        self.check(_masked_attention, make, grads=_ordinary(kind))

    @parameterized.expand(KINDS)
    def test_tied_values_and_repeated_indices(self, kind):
        def make():
            logits = torch.randn(ROWS, COLUMNS)
            index = torch.randperm(ROWS)
            if not _ordinary(kind):
                # A saturated classifier: its logits clipped to a few levels, so maxima tie;
                # and a scatter whose indices repeat, so writes to one row must add up.
                logits, index = logits.clamp(-1, 1).round(), torch.tensor([1, 4, 1, 1, 0, 4])
            return logits, torch.randn(ROWS, COLUMNS), index, torch.randn(ROWS, COLUMNS)
        self.check(_repeated_values, make)

    @parameterized.expand(KINDS)
    def test_repeated_token_ids_in_an_embedding(self, kind):
        def make():
            ids = torch.randperm(12)[:8].view(2, 4) if _ordinary(kind) else torch.tensor([[3, 3, 7, 3], [7, 0, 3, 0]])
            return torch.randn(12, 5, requires_grad=True), ids
        self.check(_embedding_bag, make)

    @parameterized.expand(KINDS)
    def test_tensors_past_2_to_the_16_elements(self, kind):
        rows, columns = LARGE if not _ordinary(kind) else (3, 1000)
        self.check(_large, lambda: (torch.randn(rows, columns, requires_grad=True), torch.randn(columns)))
