"""A calculator tool for react-cli: arithmetic on numbers, safely (no ``eval``).

    react-cli ask --tools-from examples/tools/calculator.py "What is 17% of 2,340?"

The expression is parsed with ``ast`` and only numbers, ``+ - * / // % **``, unary signs and
parentheses are evaluated; anything else (names, calls, attributes) is refused with a message
the model can act on. Sizes are bounded so no expression can take long: 200 characters at
most, exponents up to 1,000, integers up to 1,000 digits.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from react_cli import tool

MAX_CHARS = 200
MAX_EXPONENT = 1000
MAX_DIGITS = 1000

Number = int | float
_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


class CalculationError(ValueError):
    """Why an expression cannot be calculated, in words for the model."""


def _value(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value  # type: ignore[no-any-return]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"an exponent is at most {MAX_EXPONENT}")
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, complex):
            raise CalculationError("the result is not a real number")
        if isinstance(result, int) and result.bit_length() > MAX_DIGITS * 3.33:
            raise CalculationError(f"the result has more than {MAX_DIGITS} digits")
        return result
    raise CalculationError(
        "only numbers, + - * / // % ** and parentheses are allowed, e.g. 2 * (3 + 4)"
    )


def _shown(value: Number) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculationError("the result is not a finite number")
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return str(value)


@tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression, e.g. 2 * (3 + 4) or 0.17 * 2340."""
    text = expression.strip().replace(",", "").replace("×", "*").replace("^", "**")
    if len(text) > MAX_CHARS:
        raise CalculationError(f"the expression is longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError(f"{expression!r} is not an arithmetic expression") from None
    try:
        return _shown(_value(tree.body))
    except ZeroDivisionError:
        raise CalculationError("division by zero") from None
    except OverflowError:
        raise CalculationError("the result is too large") from None
