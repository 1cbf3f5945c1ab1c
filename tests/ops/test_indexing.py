"""index_select, gather, scatter*, advanced indexing (index / index_put), index_add against the CPU."""
import pytest
import torch

from harness import check, check_inplace, check_raises_like_cpu, make, to_tpu

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]


def idx(shape, high, seed=0, dtype=torch.int64):
    """Random in-range indices in [0, high)."""
    return make(shape, torch.int64, seed, low=0, high=high - 1).to(dtype)


def perm(n, seed=0):
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


# --- index_select ------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_select_dtypes(dtype):
    x = make((4, 5), dtype)
    check(lambda t, i: t.index_select(0, i), x, idx((6,), 4))
    check(lambda t, i: t.index_select(-1, i), x, idx((3,), 5, dtype=torch.int32))


@pytest.mark.parametrize("shape,dim,ishape", [((5,), 0, (3,)), ((2, 3, 4), 1, (5,)), ((2, 3, 4), 2, ()),
                                              ((2, 3, 4), 0, (0,)), ((0, 3), 1, (2,)), ((), 0, (1,)), ((), 0, ())],
                         ids=str)
def test_index_select_shapes(shape, dim, ishape):
    x = make(shape, torch.float32)
    n = shape[dim] if shape else 1
    check(lambda t, i: torch.index_select(t, dim, i), x, idx(ishape, n))


def test_index_select_variants_and_errors():
    x = make((4, 6), torch.float32, noncontiguous=True)
    i = idx((3,), 6)
    check(lambda t, i: t.index_select(1, i), x, i)
    check(lambda t, i: t.t().index_select(0, i), x, i)
    check(lambda t, i, o: torch.index_select(t, 1, i, out=o), x, i, torch.empty(4, 3))
    check_raises_like_cpu(lambda t, i: t.index_select(0, i), x, torch.tensor([0, 4]))
    check_raises_like_cpu(lambda t, i: t.index_select(0, i), x, torch.tensor([-1]))
    check_raises_like_cpu(lambda t, i: t.index_select(0, i), x, torch.tensor([0.0]))
    check_raises_like_cpu(lambda t, i: t.index_select(2, i), x, torch.tensor([0]))


# --- gather / scatter ----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_dtypes(dtype):
    x = make((4, 5), dtype)
    check(lambda t, i: torch.gather(t, 0, i), x, idx((3, 5), 4))
    check(lambda t, i: torch.gather(t, 1, i), x, idx((2, 7), 5, dtype=torch.int64))


@pytest.mark.parametrize("shape,dim,ishape", [((5,), 0, (8,)), ((2, 3, 4), 1, (2, 5, 3)), ((2, 3, 4), -1, (1, 1, 9)),
                                              ((2, 3), 0, (0, 3)), ((), 0, ()), ((3, 4), 1, (3, 0))], ids=str)
def test_gather_shapes(shape, dim, ishape):
    x = make(shape, torch.float32)
    n = shape[dim] if shape else 1
    check(lambda t, i: torch.gather(t, dim, i), x, idx(ishape, n))
    check(lambda t, i, o: torch.gather(t, dim, i, out=o), x, idx(ishape, n), torch.empty(0))


def test_gather_noncontiguous_and_errors():
    x = make((4, 6), torch.float32, noncontiguous=True)
    i = idx((4, 3), 6).t().contiguous().t()
    check(lambda t, i: torch.gather(t, 1, i), x, i)
    check(lambda t, i: torch.gather(t.t(), 0, i.t()), x, idx((4, 3), 4))
    check_raises_like_cpu(lambda t, i: torch.gather(t, 1, i), x, torch.tensor([[6]]))
    check_raises_like_cpu(lambda t, i: torch.gather(t, 1, i), x, torch.tensor([[-1]]))
    check_raises_like_cpu(lambda t, i: torch.gather(t, 1, i), x, torch.tensor([0]))
    check_raises_like_cpu(lambda t, i: torch.gather(t, 1, i), x, torch.tensor([[0.0]]))


def unique_scatter_index(shape, dim, n, seed=0):
    """An index of `shape` whose entries along `dim` are distinct (n >= shape[dim]): no write races."""
    cols = [perm(n, seed + k)[: shape[dim]] for k in range(int(torch.tensor(shape).prod()) // shape[dim])]
    i = torch.stack(cols, -1).reshape(shape[dim], *[s for d, s in enumerate(shape) if d != dim])
    return i.movedim(0, dim).contiguous()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_scatter_src_value(dtype):
    x = make((5, 4), dtype, 1)
    i = unique_scatter_index((3, 4), 0, 5)
    src = make((6, 6), dtype, 2)  # larger than index: only the index's window is read
    check(lambda t, i, s: t.scatter(0, i, s), x, i, src)
    check(lambda t, i: t.scatter(0, i, 1), x, i)
    check_inplace(lambda t, i, s: t.scatter_(0, i, s), x, i, src)
    j = unique_scatter_index((5, 2), 1, 4)
    check(lambda t, i, s: torch.scatter(t, 1, i, s), x, j, src)


def int_valued(shape, dtype, seed):
    # Integer-valued data: sums of duplicates are exact in every order.
    return make(shape, torch.int64, seed, low=-4, high=4).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64], ids=str)
def test_scatter_add(dtype):
    x, src, i = int_valued((5, 4), dtype, 1), int_valued((6, 4), dtype, 2), idx((6, 4), 5, 3)  # duplicates
    check(lambda t, i, s: t.scatter_add(0, i, s), x, i, src)
    check_inplace(lambda t, i, s: t.scatter_add_(0, i, s), x, i, src)
    check(lambda t, i, s: t.scatter(0, i, s, reduce="add"), x, i, src)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64], ids=str)
def test_scatter_reduce(dtype):
    x, src, i = int_valued((5, 4), dtype, 1), int_valued((6, 4), dtype, 2), idx((6, 4), 5, 3)
    check(lambda t, i, s: t.scatter(0, i, s, reduce="multiply"), x, i, src)
    check(lambda t, i: t.scatter(0, i, 2, reduce="multiply"), x, i)
    for reduce in ("sum", "prod", "amax", "amin", "mean"):
        for include_self in (True, False):
            check(lambda t, i, s: t.scatter_reduce(0, i, s, reduce, include_self=include_self), x, i, src)


@pytest.mark.parametrize("shape,dim,ishape", [((4,), 0, (6,)), ((3, 4, 5), 2, (3, 2, 6)), ((3, 4), 1, (0, 2)),
                                              ((), 0, ()), ((0, 3), 1, (0, 3))], ids=str)
def test_scatter_add_shapes(shape, dim, ishape):
    x = make(shape, torch.int64, 1).double()
    n = shape[dim] if shape else 1
    src = make(ishape, torch.int64, 2).double()
    check(lambda t, i, s: t.scatter_add(dim, i, s), x, idx(ishape, n), src)


def test_scatter_reduce_nan_and_errors():
    x = torch.tensor([1.0, float("nan"), 3.0, 4.0])
    src = torch.tensor([5.0, 1.0, float("nan"), 2.0])
    i = torch.tensor([0, 0, 2, 3])
    for reduce in ("amax", "amin", "sum"):
        check(lambda t, i, s: t.scatter_reduce(0, i, s, reduce), x, i, src)
    check_raises_like_cpu(lambda t, i, s: t.scatter_add(0, i, s), x, torch.tensor([4]), src)
    check_raises_like_cpu(lambda t, i: t.scatter(0, i, 1.0), x, torch.tensor([-1]))
    check_raises_like_cpu(lambda t, i, s: t.scatter(0, i, s), x, i, src.double())


# --- advanced indexing: x[i], x[i] = v ----------------------------------------

IDX_CASES = [
    # (self shape, index builder) -- None entries are full slices
    ((5,), lambda: (idx((3,), 5),)),
    ((5, 4), lambda: (idx((2, 3), 5),)),
    ((5, 4), lambda: (slice(None), idx((3,), 4))),
    ((5, 4, 3), lambda: (idx((2,), 5), idx((2,), 4))),
    ((5, 4, 3), lambda: (idx((2, 1), 5), idx((1, 3), 4))),          # broadcast indices
    ((5, 4, 3), lambda: (slice(None), idx((2,), 4), idx((2,), 3))),  # adjacent, not first
    ((5, 4, 3), lambda: (idx((2,), 5), slice(None), idx((2,), 3))),  # separated: batch dims first
    ((5, 4, 3), lambda: (idx((2,), 5), slice(1, 3), idx((2,), 3))),
    ((5, 4, 3), lambda: (Ellipsis, idx((4,), 3))),
    ((5, 4, 3), lambda: (None, idx((2,), 5))),
    ((5, 4), lambda: (torch.tensor([-1, -5, 2]),)),                   # negative indices wrap
    ((5, 4), lambda: (torch.tensor([], dtype=torch.int64),)),
    ((0, 4), lambda: (slice(None), idx((2,), 4))),
    ((5, 4), lambda: (idx((), 5), idx((3,), 4))),
]


def tpu_index(index):
    return tuple(to_tpu(e) if isinstance(e, torch.Tensor) else e for e in index)


@pytest.mark.parametrize("case", range(len(IDX_CASES)))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_index_get(case, dtype):
    shape, build = IDX_CASES[case]
    x = make(shape, dtype)
    index = build()
    got = to_tpu(x)[tpu_index(index)]
    assert got.device.type == "tpu"
    torch.testing.assert_close(got.cpu(), x[index])


@pytest.mark.parametrize("case", range(len(IDX_CASES)))
def test_index_put(case):
    shape, build = IDX_CASES[case]
    x = make(shape, torch.float64, 1)
    index = build()
    # Distinct values where the targets are distinct; one value where some
    # repeat (which duplicate wins is unspecified on every backend).
    targets = torch.arange(x.numel()).reshape(shape)[index]
    unique = targets.unique().numel() == targets.numel()
    values = torch.arange(targets.numel(), dtype=torch.float64).reshape(targets.shape) + 100 if unique \
        else torch.tensor(7.0, dtype=torch.float64)

    def setitem(t, v):
        t[tpu_index(index) if t.device.type == "tpu" else index] = v
        return t

    check(setitem, x, values)
    # accumulate=True through index_put (slices as None): integer values keep sums exact.
    if all(isinstance(e, torch.Tensor) or e == slice(None) for e in index):
        as_list = [e if isinstance(e, torch.Tensor) else None for e in index]
        acc = make(targets.shape, torch.int64, 2).double()

        def put(t, v):
            ii = [to_tpu(e) for e in as_list] if t.device.type == "tpu" else as_list
            return torch.ops.aten.index_put(t, ii, v, True)

        check(put, x, acc)


def test_index_put_dtypes_broadcast_and_scalars():
    for dtype in (torch.float32, torch.bfloat16, torch.int32, torch.uint8, torch.bool):
        x = make((4, 3), dtype, 1)
        i = torch.tensor([2, 0])
        check_inplace(lambda t, i, v: t.index_put_((i,), v), x, i, make((3,), dtype, 2))
        check_inplace(lambda t, i, v: t.index_put_((i,), v), x, i, make((), dtype, 3))
        check_inplace(lambda t, i, v: t.index_put_((i,), v, accumulate=dtype != torch.bool), x, i, make((2, 1), dtype, 4))

    def setitem(t, i):
        t[i, 1:] = 2.5
        return t

    check(setitem, make((4, 3), torch.float32), torch.tensor([3, 1]))
    check(lambda t, i: torch.ops.aten._index_put_impl_(t.clone(), (i,), t[:2].clone(), True, True),
          make((4, 3), torch.float32), torch.tensor([1, 1]))


def test_index_errors():
    x = make((4, 3), torch.float32)
    check_raises_like_cpu(lambda t, i: t[i], x, torch.tensor([4]))
    check_raises_like_cpu(lambda t, i: t[i], x, torch.tensor([-5]))
    check_raises_like_cpu(lambda t, i: t.index_put_((i,), torch.zeros((), device=t.device)), x, torch.tensor([9]))
    check_raises_like_cpu(lambda t, i: t.index_put_((i,), torch.zeros(2, 3, dtype=torch.float64, device=t.device)),
                          x, torch.tensor([0, 1]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("shape,mask_dims,lead", [((6,), 1, 0), ((4, 3), 2, 0), ((4, 3), 1, 0), ((2, 4, 3), 2, 1),
                                                  ((0, 3), 1, 0)], ids=str)
def test_index_put_bool_mask(dtype, shape, mask_dims, lead):
    x = make(shape, dtype, 1)
    mask = make(shape[lead:lead + mask_dims], torch.bool, 2)
    pre = (slice(None),) * lead
    nnz = int(mask.sum())
    after = shape[lead + mask_dims:]

    def put(t, m, v, acc=False):
        return torch.ops.aten.index_put_(t, [None] * lead + [m], v, acc)

    check_inplace(lambda t, m, v: put(t, m, v), x, mask, make((), dtype, 3))
    check_inplace(lambda t, m, v: put(t, m, v), x, mask, make((*shape[:lead], nnz, *after), dtype, 4))
    if after:
        check_inplace(lambda t, m, v: put(t, m, v), x, mask, make(after, dtype, 5))
    if dtype != torch.bool:
        check_inplace(lambda t, m, v: put(t, m, v, True), x, mask, make((*shape[:lead], nnz, *after), dtype, 6))

    def setitem(t, m):
        t[pre + (m,)] = 0 if dtype != torch.bool else False
        return t

    check(setitem, x, mask)


# --- index_add ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int32, torch.int64], ids=str)
def test_index_add(dtype):
    x = make((5, 4), torch.int64, 1, low=-8, high=8).to(dtype)
    src = make((6, 4), torch.int64, 2, low=-8, high=8).to(dtype)
    i = idx((6,), 5, 3)  # duplicates: integer values keep the sums exact
    check(lambda t, i, s: t.index_add(0, i, s), x, i, src)
    check(lambda t, i, s: t.index_add(0, i, s, alpha=3), x, i, src)
    check_inplace(lambda t, i, s: t.index_add_(0, i, s), x, i, src)
    check(lambda t, i, s: t.index_add(1, i, s), x, idx((2,), 4), make((5, 2), dtype, 4))
    check(lambda t, i, s: t.index_add(0, i, s), make((), dtype), torch.tensor([0]), make((), dtype, 2))


def test_index_add_bool_with_alpha():
    # bool: self or (source and alpha); alpha=False adds nothing (it was ignored).
    x, src = make((5, 4), torch.bool), make((6, 4), torch.bool, 2)
    i = idx((6,), 5, 3)
    for alpha in (True, False):
        check(lambda t, i, s: t.index_add(0, i, s, alpha=alpha), x, i, src)
        check(lambda t, i, s: t.index_add(1, i, s, alpha=alpha), x.T, idx((2,), 5), src[:2, :4].T)  # transposed


def test_index_add_errors():
    x = make((5, 4), torch.float32)
    check_raises_like_cpu(lambda t, i, s: t.index_add(0, i, s), x, torch.tensor([5]), torch.ones(1, 4))
    check_raises_like_cpu(lambda t, i, s: t.index_add(0, i, s), x, torch.tensor([0]), torch.ones(1, 3))


# --- backward -------------------------------------------------------------------

def grads(fn, *inputs):
    """Gradients of fn's output (weighted by a fixed tensor) w.r.t. the float inputs."""
    def run(*xs):
        xs = [x.clone().requires_grad_() if x.is_floating_point() else x for x in xs]
        out = fn(*xs)
        w = torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape).to(out.device)
        out.backward(w)
        return tuple(x.grad for x in xs if x.is_floating_point())
    return run


def test_backward():
    x = make((5, 4), torch.float32, 1)
    check(grads(lambda t, i: t.index_select(0, i), x, None), x, torch.tensor([1, 3, 1]))
    check(grads(lambda t, i: torch.gather(t, 1, i), x, None), x, idx((5, 6), 4))
    check(grads(lambda t, i, j: t[i, j], x, None), x, torch.tensor([0, 0, 4]), torch.tensor([1, 1, 2]))
    check(grads(lambda t, i: t[:, i], x, None), x, torch.tensor([3, 0, 3]))
    check(grads(lambda t, i, s: t.scatter_add(0, i, s), x, None), x, idx((2, 4), 5), make((2, 4), torch.float32, 2))
    check(grads(lambda t, i, s: t.index_put((i,), s, accumulate=True), x, None), x, torch.tensor([1, 1]),
          make((2, 4), torch.float32, 3))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int64], ids=str)
def test_index_put_mask_accumulate(dtype):
    # Boolean-mask index_put with accumulate: bool `+=` is a logical or on the CPU.
    x = make((4, 3), dtype, 1)
    mask = make((4, 3), torch.bool, 2)
    vals = make((int(mask.sum()),), dtype, 3)
    check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=True), x, mask, vals)
    check(lambda t, m, v: torch.index_put(t, (m,), v, accumulate=True), x, mask, make((), dtype, 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_index_fill_and_take(dtype):
    x = make((4, 5), dtype, 1)
    idx = torch.tensor([3, -1, 0, 3])
    check(lambda t, i: t.index_fill(1, i, 2), x, idx)
    check(lambda t, i: t.index_fill(0, i, torch.tensor(1, dtype=dtype)), x, idx)
    check(lambda t, i: t.index_fill(-1, i, 0), x.t(), idx)
    check(lambda t, i: t.index_fill(0, i, 1), make((), dtype, 2), torch.tensor([0]))
    check(lambda t, i: t.index_fill(1, i, 1), x, torch.tensor([], dtype=torch.int64))
    check_inplace(lambda t, i: t.index_fill_(1, i, 3), x, idx)
    check(torch.take, x, torch.tensor([[0, 19], [-1, 7]]))
    check(torch.take, x.t(), torch.tensor([5, 2, -20]))
    check(torch.take, make((), dtype, 3), torch.tensor(0))
    check(torch.take, x, torch.tensor([], dtype=torch.int64))


def test_index_fill_and_take_out_of_range():
    x = make((4, 5), torch.float32, 1)
    check_raises_like_cpu(lambda t, i: t.index_fill(1, i, 2), x, torch.tensor([5]))
    check_raises_like_cpu(torch.take, x, torch.tensor([20]))
