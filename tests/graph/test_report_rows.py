"""Rows held column by column read back as they were given, whatever their values (of the same type all the way
down); and they are small."""

import tracemalloc

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autonesy.graph.report_rows import RowColumns

# what a JSON line can hold, and what a reader builds from one (tuples); ints past 2**53 and next to bools,
# since True == 1 and (1,) == (True,) in a dict
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**53 + 2),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=5),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner), max_leaves=6)
rows = st.lists(st.dictionaries(st.sampled_from("abcde"), values, max_size=5), max_size=30)


def _same(a, b) -> bool:
    """Equal, and of the same type all the way down (1 is not True, 1.0 is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


@settings(max_examples=300, deadline=None)
@given(rows)
def test_rows_read_back_as_given(given_rows):
    held = RowColumns(given_rows)
    assert len(held) == len(given_rows)
    fields = list(dict.fromkeys(name for row in given_rows for name in row))
    assert held.fields == fields
    for index, row in enumerate(given_rows):
        expected = {name: row.get(name) for name in fields}
        got = held[index]
        assert list(got) == fields and all(_same(got[name], expected[name]) for name in fields), (got, expected)
    order = np.array(list(range(len(given_rows)))[::-1], dtype=np.intp)
    taken = RowColumns(given_rows)
    taken.keep(order)
    for position, index in enumerate(order.tolist()):
        assert all(_same(taken[position][name], held[index][name]) for name in fields)
    for name in fields:
        assert all(_same(a, b) for a, b in zip(taken.values(name), held.values(name, order), strict=True))


def test_many_rows_cost_tens_of_bytes_each():
    """A results row of a large received sweep: 20,000 of them, settings repeated, ids and numbers distinct, held
    in under 120 bytes a row (a dict per row took about 2.5 KB; the ids as str objects and numbers as floats, 130)."""
    names = [f"model-{k:04d}" for k in range(2000)]
    tracemalloc.start()
    held = RowColumns(
        {
            "attempt_id": f"{i:016x}",  # distinct: kept as they are, not coded
            "llm": names[i % 2000],
            "format": ("dimacs", "cpmpy")[i % 2],
            "status": ("accepted", "rejected", "infra_failed")[i % 3],
            "f1": (i % 997) / 997,
            "prompt_tokens": 900 + i,
            "tp": 2**60 + i if i % 100 == 0 else i,  # a few counts past what a float holds exactly
            "autofixes": [],
            "reason": None,
        }
        for i in range(20_000)
    )
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held[100]["tp"] == 2**60 + 100 and held[7]["f1"] == 7 / 997 and held[5]["llm"] == "model-0005"
    # about 99 bytes: the ids' UTF-8 and where each starts (28), the first 4,096 ids coded before the column stops
    # coding, ints in four bytes
    assert size / len(held) < 120, size / len(held)


def test_first_answers_are_read_from_traces_inside_the_sweep_only(tmp_path):
    """A row's run_dir is read below the sweep's folder only: one that leaves it (``..``, an absolute path) or
    reaches a run directory through a link is not read (the first answer unknown), whatever its trace says."""
    from autonesy.graph.report_rows import FIRST_ANSWER_FIELD, with_first_answers
    from autonesy.graph.trace import TRACE_FILE

    sweep, outside = tmp_path / "sweep", tmp_path / "outside"
    for run in (sweep / "attempts" / "a", outside / "b"):
        run.mkdir(parents=True)
        (run / TRACE_FILE).write_text('{"event": "syntax_error", "error": "x"}\n')
    (sweep / "attempts" / "link").symlink_to(outside / "b")
    run_dirs = ["attempts/a", "attempts/../attempts/a", "../outside/b", str(outside / "b"), "attempts/link", "", None]
    read = [row[FIRST_ANSWER_FIELD] for row in with_first_answers([{"run_dir": d} for d in run_dirs], sweep)]
    assert read == [True, True, None, None, None, None, None]
    assert (
        next(with_first_answers([{"run_dir": "attempts/a", FIRST_ANSWER_FIELD: False}], sweep))[FIRST_ANSWER_FIELD]
        is False
    )


odd_values = st.sampled_from(
    [None, True, 0, 2**70, 1.5, float("nan"), "", "x", [], ["a"], [1, 2], {"a": 1}, "accepted", "infra_failed"]
)


@settings(max_examples=100, deadline=None)
@example([("accepted", {"llm": None, "model": None})])  # no LLM and no model: a NaN label stopped the summary
@example([("rejected", {"llm": ["a"], "model": float("nan"), "f1": "x", "max_repairs": 2**70})])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["accepted", "rejected", "infra_failed"]),
            st.dictionaries(
                st.sampled_from(
                    [
                        "llm",
                        "model",
                        "format",
                        "prompt",
                        "detail",
                        "policy",
                        "task",
                        "f1",
                        "status",
                        "failure",
                        "relation",
                        "repair_rounds",
                        "prompt_tokens",
                        "syntax_error",
                        "max_repairs",
                        "benchmark",
                        "reason",
                        "autofixes",
                    ]
                ),
                odd_values,
                max_size=6,
            ),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_tables_of_rows_handed_over_as_they_are_take_any_values(drawn):
    """The viewer hands the report a received file's rows as they are: a value of any type in any field (an LLM
    that is a number, an F1 that is text, a model that is missing) is emptied as the loader empties it, never a
    crash (a row with neither LLM nor model stopped the viewer's summary with a KeyError)."""
    from autonesy.graph.report import report_tables
    from autonesy.graph.results import ROW_FIELDS

    rows = []
    for index, (status, odd) in enumerate(drawn):
        row = dict.fromkeys(ROW_FIELDS)
        row.update(attempt_id=str(index), llm="http://x/v1@m", model="m", task="fashion", task_spec="fashion")
        row.update(format="nat", prompt="zs", detail="detailed", policy="zs", status=status, f1=0.5)
        rows.append({**row, **odd})
    tables, df, _ = report_tables(rows)
    for table in tables:  # every table renders
        assert table.csv() and table.markdown() and table.latex()
    assert len(df) == sum(row["status"] in ("accepted", "rejected") for row in rows)  # the finished ones counted


# small limits, so that a few rows reach every way a column holds its values: codes widened from one byte to two and
# four, and text past the coded values kept as UTF-8 beside them
_SMALL_LIMITS = {"_CODED_AT_MOST": 2, "_CODE_LIMITS": {"B": 2, "H": 4}}
texts = st.one_of(st.text(max_size=4), st.sampled_from(["\ud800", "é", "a\x00", ""]))  # a lone surrogate, as JSON has


def _small_limits():
    from contextlib import ExitStack
    from unittest import mock

    from autonesy.graph import report_rows

    stack = ExitStack()
    for name, value in _SMALL_LIMITS.items():
        stack.enter_context(mock.patch.object(report_rows, name, value))
    return stack


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(scalars, texts, st.integers(min_value=-(2**40), max_value=2**40)), max_size=40))
def test_a_column_of_many_values_reads_back_whatever_the_way_it_holds_them(column):
    with _small_limits():
        held = RowColumns({"x": value} for value in column)
        taken = RowColumns({"x": value} for value in column)
        order = np.arange(len(column), dtype=np.intp)[::-1].copy()
        taken.keep(order)
    assert all(_same(got, want) for got, want in zip(held.values("x"), column, strict=True))
    assert all(_same(got, want) for got, want in zip(taken.values("x"), column[::-1], strict=True))


def _as_text(value, missing):
    return missing if value is None else str(list(value) if isinstance(value, tuple) else value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(scalars, texts, st.lists(st.text(max_size=2), max_size=2)), max_size=40), st.data())
def test_typed_columns_are_the_values_read_as_text_numbers_and_flags(column, data):
    """What a report frames (text a code a row, numbers and flags as floats) is each value as Python reads it."""
    rows = np.array(
        data.draw(st.lists(st.integers(0, max(0, len(column) - 1)), max_size=len(column) and 20)), dtype=np.intp
    )
    with _small_limits():
        held = RowColumns({"x": value} for value in column)
    texts_got = held.texts("x", rows, "—")
    assert list(texts_got.astype(object)) == [_as_text(column[i], "—") for i in rows.tolist()]
    missing = held.texts("x", rows)
    assert [None if isinstance(v, float) else v for v in missing.astype(object)] == [
        None if column[i] is None else _as_text(column[i], None) for i in rows.tolist()
    ]
    numbers = [float(v) if type(v) in (int, float) else None for v in (column[i] for i in rows.tolist())]
    got = held.floats("x", rows)
    assert [None if np.isnan(v) else v for v in got.tolist()] == numbers
    flags = [1.0 if column[i] is True else 0.0 if column[i] is False else None for i in rows.tolist()]
    assert [None if np.isnan(v) else v for v in held.flags("x", rows).tolist()] == flags
