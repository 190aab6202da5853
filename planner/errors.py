"""Exceptions of the sizing core.

Every exception carries the offending values as attributes and renders a short, one-line message: in Excel that
message is exactly what the cell shows, so it must name the argument, what was given and what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class PlannerError(ValueError):
    """Base class of every error the planner raises on purpose."""


class ArgumentError(PlannerError):
    """An argument is missing, of the wrong type, or outside what is allowed.

    Example::

        >>> str(ArgumentError("kv_dtype", "fp9", "one of auto, bf16, fp16, fp8, int8"))
        "kv_dtype: got 'fp9', expected one of auto, bf16, fp16, fp8, int8"
    """

    def __init__(self, argument: str, given: object, allowed: str) -> None:
        self.argument = argument
        self.given = given
        self.allowed = allowed
        super().__init__(f"{argument}: got {given!r}, expected {allowed}")


class Refusal(PlannerError):
    """A function's refusal arriving as an argument of another function: the cell it came from holds the message
    (``"kv_budget: got ..., expected ..."``), and every function that reads that cell shows the same message, so the
    cause travels unchanged through SUMs and lookups to the cells a planner reads.

        >>> str(Refusal("kv_dtype: got 'fp9', expected one of auto, fp8"))
        "kv_dtype: got 'fp9', expected one of auto, fp8"
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (Refusal, (self.message,))


def read_row(value: Any) -> Any:
    """A cell of a keyed column (``Arg(row_errors=True)``) in a row the function reads: a refusal held in place
    there is the function's result; in a row it skips, it is not (another backend's error is not this one's).

        >>> read_row(0.5)
        0.5
        >>> read_row(Refusal("kv_budget: got '-91 GiB', expected a positive KV budget"))
        Traceback (most recent call last):
        ...
        planner.errors.Refusal: kv_budget: got '-91 GiB', expected a positive KV budget
    """
    if isinstance(value, Refusal):
        # a new refusal of the same message, not the held one: raising that would attach this call's traceback to
        # it, and the frames would hold the column that holds it (a reference cycle keeping the whole call stack
        # alive until the cyclic collector runs)
        raise Refusal(value.message)
    return value


def is_refusal_text(value: object) -> bool:
    """True for a cell text that is a planner function's refusal (``"<argument>: got <value>, expected <what>"``).

    >>> is_refusal_text("kv_budget: got '-3 GiB', expected a positive KV budget"), is_refusal_text("fleet")
    (True, False)
    """
    return isinstance(value, str) and ": got " in value and ", expected " in value


class UnknownNameError(ArgumentError):
    """A catalog name (model, GPU, provider, dtype, engine) that is not known."""

    def __init__(self, argument: str, given: object, known: Iterable[str]) -> None:
        names = sorted(set(known))
        shown = ", ".join(names[:12]) + (f" (+{len(names) - 12} more)" if len(names) > 12 else "")
        self.known = tuple(names)
        super().__init__(argument, given, f"one of {shown}")


_INFINITIES = (float("inf"), float("-inf"))
_INF, _NEG_INF = _INFINITIES


def check_number(
    argument: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    integer: bool = False,
) -> float:
    """Return ``value`` as a float, or raise :class:`ArgumentError` naming ``argument``.

    Booleans are refused (Excel's TRUE is not a quantity); NaN and infinities are refused.
    """
    number: float
    if type(value) is float:  # the commonest argument: float(value) is value itself
        number = value
    elif type(value) is int:  # the next commonest (a whole number, as coercion hands it): the branch below's float
        number = float(value)
    else:
        if type(value) is bool or not isinstance(value, (int, float)):  # bool is final: the isinstance test
            raise ArgumentError(argument, value, "a number")
        number = float(value)
    if not _NEG_INF < number < _INF:  # NaN (no comparison holds) or an infinity: one chained test, in C
        raise ArgumentError(argument, value, "a finite number")
    if integer and number != int(number):
        raise ArgumentError(argument, value, "a whole number")
    if minimum is not None:
        if exclusive_minimum and number <= minimum:
            raise ArgumentError(argument, value, f"a number > {_fmt(minimum)}")
        if not exclusive_minimum and number < minimum:
            raise ArgumentError(argument, value, f"a number >= {_fmt(minimum)}")
    if maximum is not None and number > maximum:
        low = "" if minimum is None else f"{_fmt(minimum)} {'<' if exclusive_minimum else '<='} x <= "
        raise ArgumentError(argument, value, f"a number {low or '<= '}{_fmt(maximum)}".replace("<= <=", "<="))
    return number


def check_fraction(argument: str, value: object, *, allow_zero: bool = True) -> float:
    """Return ``value`` as a fraction in [0, 1] (or (0, 1] with ``allow_zero=False``).

    A float in the range is :func:`check_number`'s answer for it (itself: finite, within both bounds), returned
    without the call; anything else goes through it."""
    if type(value) is float and value <= 1.0 and (0.0 <= value if allow_zero else 0.0 < value):
        return value
    return check_number(argument, value, minimum=0.0, maximum=1.0, exclusive_minimum=not allow_zero)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)
