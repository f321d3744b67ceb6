"""Arithmetic over two handwritten digits: addition and multiplication, one-hot and binary.

All four tasks share one shape: two digits a, b ∈ {0, …, 9} (one per image) and a result r = a + b
or r = a · b. The ground truths follow one scheme, which reproduces the published clause counts
exactly and uses no auxiliary variables:

- one-hot tasks (``mn-add``, ``mn-mul``): exactly-one (pairwise) over each of the three groups, plus
  one clause per digit pair, ``a_i ∧ b_j → r_{i∘j}``;
- binary tasks (``mn-add-bin``, ``mn-mul-bin``): one clause per invalid 4-bit pattern (10–15) of
  each digit, blocking it, plus, for each of the 100 digit pairs and each result bit, a clause
  ``(a = i ∧ b = j) → (bit k of r has the value it has in i∘j)``.

Binary codes are written least significant bit first: variable ``..._bit0`` has weight 1,
``..._bit1`` weight 2, and so on; each meaning names the weight.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterator

import numpy as np

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

DIGITS = range(10)
DIGIT_BITS = 4

MNIST_CITATION = (
    "LeCun, Bottou, Bengio, Haffner. Gradient-Based Learning Applied to Document Recognition. "
    "Proceedings of the IEEE 86(11):2278-2324, 1998."
)
RSBENCH_CITATION = (
    "Bortolotti, Marconato, Morettin, Passerini, Teso. A Neuro-Symbolic Benchmark Suite for Concept "
    "Quality and Reasoning Shortcuts. NeurIPS 2024 Datasets and Benchmarks Track."
)
ADDITION_CITATION = (
    "Manhaeve, Dumancic, Kimmig, Demeester, De Raedt. DeepProbLog: Neural Probabilistic Logic "
    "Programming. NeurIPS 2018 (the MNIST-addition task)."
)
DATA_NOTE = (
    "Annotated data: the real handwritten digits bundled with scikit-learn "
    "(sklearn.datasets.load_digits, 8x8 images; UCI Optical Recognition of Handwritten Digits, "
    "Alpaydin & Kaynak 1998), paired at random, so no download is needed."
)
MNIST_LICENCE = "unrestricted (NIST-derived)"

_ONE_HOT_BACKGROUND = (
    "Background facts that must NOT be encoded: the digits are read from handwritten images, and "
    "how often each digit or each {result} occurs in the data is irrelevant; nothing restricts "
    "which two digits may appear together."
)


def _bits(value: int, width: int) -> list[int]:
    """Binary code of ``value``, least significant bit first."""
    return [(value >> k) & 1 for k in range(width)]


def _one_hot(value: int, size: int) -> list[int]:
    row = [0] * size
    row[value] = 1
    return row


# ---------------------------------------------------------------------------------------- one-hot


def _one_hot_variables(result_word: str, result_values: range, verb: str) -> tuple[Variable, ...]:
    first = [Variable(f"first_digit_{d}", f"the first image shows the digit {d}") for d in DIGITS]
    second = [Variable(f"second_digit_{d}", f"the second image shows the digit {d}") for d in DIGITS]
    result = [
        Variable(f"{result_word}_{v}", f"the {result_word} of the two digits ({verb}) is {v}") for v in result_values
    ]
    return tuple(first + second + result)


def _one_hot_encoder(op: Callable[[int, int], int], num_results: int) -> Callable:
    n = 20 + num_results

    def encode():
        builder = ClauseBuilder(n)
        first = [1 + d for d in DIGITS]
        second = [11 + d for d in DIGITS]
        result = [21 + v for v in range(num_results)]
        for group in (first, second, result):
            builder.exactly_one(group)  # pairwise: 1 + C(k, 2) clauses, no auxiliaries
        for a, b in itertools.product(DIGITS, DIGITS):
            builder.implies([first[a], second[b]], [result[op(a, b)]])
        return builder.cnf()

    return encode


def _one_hot_oracle(op: Callable[[int, int], int], num_results: int) -> Callable[[np.ndarray], np.ndarray]:
    def oracle(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=bool)
        first, second, result = x[:, :10], x[:, 10:20], x[:, 20 : 20 + num_results]
        well_formed = (first.sum(axis=1) == 1) & (second.sum(axis=1) == 1) & (result.sum(axis=1) == 1)
        a, b, r = first.argmax(axis=1), second.argmax(axis=1), result.argmax(axis=1)
        return well_formed & (op(a, b) == r)

    return oracle


def _one_hot_valid(op: Callable[[int, int], int], num_results: int) -> Callable[[], Iterator[list[int]]]:
    def enumerate_valid() -> Iterator[list[int]]:
        for a, b in itertools.product(DIGITS, DIGITS):
            yield _one_hot(a, 10) + _one_hot(b, 10) + _one_hot(op(a, b), num_results)

    return enumerate_valid


def mn_add() -> Task:
    """MNIST addition: one-hot sum of two digits (19 values)."""
    variables = _one_hot_variables("sum", range(19), "first digit plus second digit")
    return Task(
        name="mn-add",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Two images each show one handwritten digit from 0 to 9. The first digit is given one-hot by "
                "ten variables (digits 0 to 9), the second digit one-hot by ten variables (digits 0 to 9), and "
                "their sum one-hot by nineteen variables (sums 0 to 18).\n"
                "- Exactly one of the ten first-digit variables is true.\n"
                "- Exactly one of the ten second-digit variables is true.\n"
                "- Exactly one of the nineteen sum variables is true.\n"
                "- The true sum variable is the one whose value equals the first digit plus the second digit "
                "(for example, first digit 3 and second digit 4 require sum 7 and forbid every other sum).\n"
                "- Every pair of digits, including equal digits and 0, is allowed; there is no other rule.\n"
                + _ONE_HOT_BACKGROUND.format(result="sum")
            ),
            not_detailed="Each of the two images shows one handwritten digit, and the sum variables must give the sum of the two digits.",
        ),
        metadata=TaskMetadata(
            source_dataset="MNIST",
            citation=f"{MNIST_CITATION} Task: {ADDITION_CITATION}",
            licence=MNIST_LICENCE,
            published_clauses=364,
            data_provenance="real",
            equivalence_method="construction",
            design_notes=(
                "Variables: first digit one-hot (0-9), second digit one-hot (0-9), sum one-hot (0-18). "
                "Encoding: pairwise exactly-one per group (46 + 46 + 172 clauses) and one clause "
                "first_digit_i AND second_digit_j -> sum_(i+j) per digit pair (100): 364 clauses, as "
                "published, no auxiliaries. " + DATA_NOTE
            ),
        ),
        encode=_one_hot_encoder(operator.add, 19),
        oracle_batch=_one_hot_oracle(operator.add, 19),
        enumerate_valid=_one_hot_valid(operator.add, 19),
    )


def mn_mul() -> Task:
    """MNIST multiplication: one-hot product of two digits (82 values, most unreachable)."""
    variables = _one_hot_variables("product", range(82), "first digit times second digit")
    return Task(
        name="mn-mul",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Two images each show one handwritten digit from 0 to 9. The first digit is given one-hot by "
                "ten variables (digits 0 to 9), the second digit one-hot by ten variables (digits 0 to 9), and "
                "their product one-hot by eighty-two variables (products 0 to 81).\n"
                "- Exactly one of the ten first-digit variables is true.\n"
                "- Exactly one of the ten second-digit variables is true.\n"
                "- Exactly one of the eighty-two product variables is true.\n"
                "- The true product variable is the one whose value equals the first digit times the second "
                "digit (for example, first digit 3 and second digit 4 require product 12 and forbid every other "
                "product; any digit times 0 gives product 0).\n"
                "- Every pair of digits, including equal digits and 0, is allowed; there is no other rule.\n"
                "- As a consequence, a product value that no two digits yield (such as 11, 13, 17, 19, 22, 23, "
                "29, 31, 33 or 37) can never be true.\n" + _ONE_HOT_BACKGROUND.format(result="product")
            ),
            not_detailed="Each of the two images shows one handwritten digit, and the product variables must give the product of the two digits.",
        ),
        metadata=TaskMetadata(
            source_dataset="MNIST (rsbench)",
            citation=f"{MNIST_CITATION} Task: {RSBENCH_CITATION}",
            licence=MNIST_LICENCE,
            published_clauses=3514,
            data_provenance="real",
            equivalence_method="construction",
            design_notes=(
                "Variables: first digit one-hot (0-9), second digit one-hot (0-9), product one-hot (0-81); "
                "the product values no digit pair yields stay as variables (the published count is 102) and "
                "are false in every model. Encoding: pairwise exactly-one per group (46 + 46 + 3322 clauses) "
                "and one clause first_digit_i AND second_digit_j -> product_(i*j) per digit pair (100): "
                "3,514 clauses, as published, no auxiliaries. " + DATA_NOTE
            ),
        ),
        encode=_one_hot_encoder(operator.mul, 82),
        oracle_batch=_one_hot_oracle(operator.mul, 82),
        enumerate_valid=_one_hot_valid(operator.mul, 82),
    )


# ----------------------------------------------------------------------------------------- binary


def _binary_variables(result_word: str, result_bits: int, verb: str) -> tuple[Variable, ...]:
    def group(prefix: str, what: str, width: int) -> list[Variable]:
        return [
            Variable(
                f"{prefix}_bit{k}",
                f"bit {k} (weight {1 << k}{', least significant' if k == 0 else ''}"
                f"{', most significant' if k == width - 1 else ''}) of the binary code of {what}",
            )
            for k in range(width)
        ]

    return tuple(
        group("first_digit", "the first digit", DIGIT_BITS)
        + group("second_digit", "the second digit", DIGIT_BITS)
        + group(result_word, f"the {result_word} of the two digits ({verb})", result_bits)
    )


def _binary_encoder(op: Callable[[int, int], int], result_bits: int) -> Callable:
    n = 2 * DIGIT_BITS + result_bits
    first = list(range(1, DIGIT_BITS + 1))
    second = list(range(DIGIT_BITS + 1, 2 * DIGIT_BITS + 1))
    result = list(range(2 * DIGIT_BITS + 1, n + 1))

    def literals(variables: list[int], value: int) -> list[int]:
        """Literals that hold exactly when ``variables`` spell ``value`` (LSB first)."""
        return [v if bit else -v for v, bit in zip(variables, _bits(value, len(variables)))]

    def encode():
        builder = ClauseBuilder(n)
        for digit in (first, second):
            for invalid in range(10, 1 << DIGIT_BITS):
                builder.add([-lit for lit in literals(digit, invalid)])  # 6 blocking clauses per digit
        for a, b in itertools.product(DIGITS, DIGITS):
            condition = literals(first, a) + literals(second, b)
            for lit in literals(result, op(a, b)):
                builder.implies(condition, [lit])  # one clause per result bit
        return builder.cnf()

    return encode


def _binary_oracle(op: Callable[[int, int], int], result_bits: int) -> Callable[[np.ndarray], np.ndarray]:
    digit_weights = 1 << np.arange(DIGIT_BITS)
    result_weights = 1 << np.arange(result_bits)

    def oracle(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.int64)
        a = x[:, :DIGIT_BITS] @ digit_weights
        b = x[:, DIGIT_BITS : 2 * DIGIT_BITS] @ digit_weights
        r = x[:, 2 * DIGIT_BITS : 2 * DIGIT_BITS + result_bits] @ result_weights
        return (a <= 9) & (b <= 9) & (op(a, b) == r)

    return oracle


def _binary_valid(op: Callable[[int, int], int], result_bits: int) -> Callable[[], Iterator[list[int]]]:
    def enumerate_valid() -> Iterator[list[int]]:
        for a, b in itertools.product(DIGITS, DIGITS):
            yield _bits(a, DIGIT_BITS) + _bits(b, DIGIT_BITS) + _bits(op(a, b), result_bits)

    return enumerate_valid


def _binary_detailed(result_word: str, result_bits: int, max_result: int, verb: str, example: str) -> str:
    width = {5: "five", 7: "seven"}[result_bits]
    return (
        "Two images each show one handwritten digit from 0 to 9. Each digit is written in binary with four "
        f"bits, and their {result_word} in binary with {width} bits. Every binary code is read least "
        "significant bit first: bit k has weight 2^k (bit 0 weighs 1, bit 1 weighs 2, bit 2 weighs 4, and so "
        "on), and a code's value is the sum of the weights of its true bits.\n"
        "- The first digit's four bits must spell a value from 0 to 9: the codes for 10 to 15 are not digits "
        "and are forbidden.\n"
        "- The second digit's four bits must likewise spell a value from 0 to 9 (codes 10 to 15 forbidden).\n"
        f"- The {width} {result_word} bits must spell exactly the value of the first digit {verb} the "
        f"second digit ({example}).\n"
        "- Every pair of digits, including equal digits and 0, is allowed; there is no other rule.\n"
        f"- As a consequence, the {result_word} never exceeds {max_result}, and every {result_word} code that "
        "no two digits yield is impossible.\n"
        "Background facts that must NOT be encoded: the digits are read from handwritten images, and how "
        f"often each digit or each {result_word} occurs in the data is irrelevant."
    )


def mn_add_bin() -> Task:
    """MNIST addition with the sum in binary (5 bits): the constraint is which codes are reachable."""
    return Task(
        name="mn-add-bin",
        variables=_binary_variables("sum", 5, "first digit plus second digit"),
        descriptions=Descriptions(
            detailed=_binary_detailed(
                "sum",
                5,
                18,
                "plus",
                "for example, first digit 3 (bits 1,1,0,0) and second digit 4 (bits 0,0,1,0) require sum 7 "
                "(bits 1,1,1,0,0)",
            ),
            not_detailed="Each of the two images shows one handwritten digit, written in binary, and the sum bits must give the sum of the two digits in binary.",
        ),
        metadata=TaskMetadata(
            source_dataset="MNIST",
            citation=f"{MNIST_CITATION} Task: {ADDITION_CITATION}",
            licence=MNIST_LICENCE,
            published_clauses=512,
            data_provenance="real",
            equivalence_method="exhaustive",
            design_notes=(
                "Variables: 4 bits per digit and 5 sum bits, least significant bit first. Encoding: 6 clauses "
                "per digit blocking the codes 10-15 (12) and, per digit pair (i, j) and sum bit k, the clause "
                "(first = i AND second = j) -> (sum bit k as in i+j) (500): 512 clauses, as published, no "
                "auxiliaries. " + DATA_NOTE
            ),
        ),
        encode=_binary_encoder(operator.add, 5),
        oracle_batch=_binary_oracle(operator.add, 5),
        enumerate_valid=_binary_valid(operator.add, 5),
    )


def mn_mul_bin() -> Task:
    """MNIST multiplication with the product in binary (7 bits)."""
    return Task(
        name="mn-mul-bin",
        variables=_binary_variables("product", 7, "first digit times second digit"),
        descriptions=Descriptions(
            detailed=_binary_detailed(
                "product",
                7,
                81,
                "times",
                "for example, first digit 3 (bits 1,1,0,0) and second digit 4 (bits 0,0,1,0) require product 12 "
                "(bits 0,0,1,1,0,0,0); any digit times 0 gives product 0",
            ),
            not_detailed="Each of the two images shows one handwritten digit, written in binary, and the product bits must give the product of the two digits in binary.",
        ),
        metadata=TaskMetadata(
            source_dataset="MNIST (rsbench)",
            citation=f"{MNIST_CITATION} Task: {RSBENCH_CITATION}",
            licence=MNIST_LICENCE,
            published_clauses=712,
            data_provenance="real",
            equivalence_method="exhaustive",
            design_notes=(
                "Variables: 4 bits per digit and 7 product bits, least significant bit first. Encoding: 6 "
                "clauses per digit blocking the codes 10-15 (12) and, per digit pair (i, j) and product bit k, "
                "the clause (first = i AND second = j) -> (product bit k as in i*j) (700): 712 clauses, as "
                "published, no auxiliaries. " + DATA_NOTE
            ),
        ),
        encode=_binary_encoder(operator.mul, 7),
        oracle_batch=_binary_oracle(operator.mul, 7),
        enumerate_valid=_binary_valid(operator.mul, 7),
    )
