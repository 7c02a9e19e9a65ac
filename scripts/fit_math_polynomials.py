#!/usr/bin/env python3
"""Fits the polynomial coefficients of src/tir/transforms/lower_math_*.cc.

Run with the project's virtualenv (NumPy is the only dependency):
    .venv/bin/python scripts/fit_math_polynomials.py

Each approximation is a near-minimax polynomial of the *relative* error of the function it
serves: a weighted least-squares fit on a dense grid, then Lawson iterations (the weights
grow where the error is largest, which converges toward the equioscillating minimax
solution). Float32 coefficients are then rounded one at a time from the lowest degree up,
refitting the higher ones after each rounding so they absorb its error. The output is C++
hex-float arrays (exact), lowest degree first, with the fit's maximum relative error.
"""

import math

import numpy as np


def lawson_fit(t, target, weight, degree, fixed=None, iterations=60):
    """Coefficients c[0..degree] minimizing max |weight * (sum c_k t^k - target)|.

    `fixed` maps degrees to values that are not fitted (already rounded coefficients)."""
    fixed = dict(fixed or {})
    free = [k for k in range(degree + 1) if k not in fixed]
    rhs = target - sum(v * t ** k for k, v in fixed.items())
    basis = np.stack([t ** k for k in free], axis=1) * weight[:, None]
    goal = rhs * weight
    lawson = np.ones_like(t) / len(t)
    solution = None
    for _ in range(iterations):
        root = np.sqrt(lawson)
        solution, *_ = np.linalg.lstsq(basis * root[:, None], goal * root, rcond=None)
        error = np.abs(basis @ solution - goal)
        lawson = lawson * (error + 1e-300)
        lawson /= lawson.sum()
    coefficients = [0.0] * (degree + 1)
    for k, v in fixed.items():
        coefficients[k] = v
    for k, v in zip(free, solution):
        coefficients[k] = float(v)
    return coefficients


def max_error(t, target, weight, coefficients):
    value = np.polynomial.polynomial.polyval(t, np.array(coefficients))
    return float(np.max(np.abs((value - target) * weight)))


def fit(t, target, weight, degree, single, fixed=None):
    """Fits, then rounds to float32 lowest degree first when `single`."""
    fixed = dict(fixed or {})
    coefficients = lawson_fit(t, target, weight, degree, fixed)
    if single:
        for k in range(degree + 1):
            if k in fixed:
                continue
            fixed[k] = float(np.float32(coefficients[k]))
            if len(fixed) <= degree:
                coefficients = lawson_fit(t, target, weight, degree, fixed)
            else:
                coefficients = [fixed[j] for j in range(degree + 1)]
    return coefficients


def grid(lo, hi, n=20001):
    # Chebyshev-distributed points sample the interval ends, where minimax errors peak.
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.linspace(math.pi, 0, n))


def emit(name, coefficients, single, error):
    suffix = "f" if single else ""
    kind = "float" if single else "double"
    literals = []
    for c in coefficients:
        text = (float(np.float32(c)) if single else c).hex()
        mantissa, exponent = text.split("p")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        literals.append(f"{mantissa}p{exponent}{suffix}")
    print(f"// max relative error of the approximation: {error:.3g} "
          f"(2^{math.log2(error):.1f})")
    print(f"constexpr {kind} {name}[] = {{{', '.join(literals)}}};")


vexp = np.vectorize(math.exp)
vexp2 = np.vectorize(lambda x: 2.0 ** x)
vlog1p = np.vectorize(math.log1p)
vtanh = np.vectorize(math.tanh)
verf = np.vectorize(math.erf)
verfc = np.vectorize(math.erfc)


def fit_exp_family(name, base_exp, half_width, degree, single):
    # base^r ~= 1 + r * P(r): fit P to (base^r - 1) / r, relative to base^r.
    r = grid(-half_width, half_width)
    r = r[np.abs(r) > 1e-12]
    value = base_exp(r)
    target = (value - 1) / r
    weight = np.abs(r) / value
    coefficients = fit(r, target, weight, degree, single)
    emit(name, coefficients, single, max_error(r, target, weight, coefficients))


def fit_log1p_float():
    # log1p(f) ~= f + f^2 * (-1/2 + f * L(f)) on the mantissa range [sqrt(1/2) - 1, sqrt(2) - 1).
    f = grid(math.sqrt(0.5) - 1, math.sqrt(2) - 1)
    f = f[np.abs(f) > 1e-6]
    value = vlog1p(f)
    target = (value - f + f * f / 2) / f ** 3
    weight = np.abs(f ** 3 / value)
    coefficients = fit(f, target, weight, 7, True)
    emit("kLog1pTail", coefficients, True, max_error(f, target, weight, coefficients))


def fit_log1p_double():
    # log1p(f) = 2 atanh(s), s = f / (2 + f): 2s + s^3 * A(s^2), |s| <= 3 - 2 sqrt(2).
    s = grid(1e-6, 3 - 2 * math.sqrt(2))
    f = 2 * s / (1 - s)
    value = vlog1p(f)
    target = (value - 2 * s) / s ** 3
    weight = s ** 3 / value
    coefficients = fit(s * s, target, weight, 4, False)
    emit("kLog1pAtanhTail", coefficients, False,
         max_error(s * s, target, weight, coefficients))


def fit_odd(name, function, upper, degree):
    # function(x) ~= x + x^3 * T(x^2) on [0, upper] (tanh).
    x = grid(1e-4, upper)
    value = function(x)
    target = (value - x) / x ** 3
    weight = x ** 3 / value
    coefficients = fit(x * x, target, weight, degree, True)
    emit(name, coefficients, True, max_error(x * x, target, weight, coefficients))


def fit_erf_small():
    # erf(x) ~= x + x * E(x^2) on [0, 0.875].
    x = grid(1e-4, 0.875)
    value = verf(x)
    target = (value - x) / x
    weight = x / value
    coefficients = fit(x * x, target, weight, 6, True)
    emit("kErfSmall", coefficients, True, max_error(x * x, target, weight, coefficients))


def fit_erfc_scaled():
    # erfc(x) = exp(-x^2) * R(x) on [0.875, 4], R smooth; a polynomial in u = x - 2.4375
    # (the centre) keeps the coefficients well scaled. Relative to erf's ulp: erf = 1 - erfc.
    x = grid(0.875, 4.0)
    u = x - 2.4375
    target = verfc(x) * vexp(x * x)
    weight = vexp(-x * x)  # absolute error of erfc, which is what erf = 1 - erfc sees
    coefficients = fit(u, target, weight, 10, True)
    emit("kErfcScaled", coefficients, True, max_error(u, target, weight, coefficients))


def main():
    print("// Generated by scripts/fit_math_polynomials.py; lowest degree first.")
    fit_exp_family("kExpPoly", vexp, math.log(2) / 2, 5, True)
    fit_exp_family("kExp2Poly", vexp2, 0.5, 5, True)
    fit_log1p_float()
    fit_odd("kTanhSmall", vtanh, 0.625, 5)
    fit_erf_small()
    fit_erfc_scaled()
    fit_log1p_double()
    fit_exp_family("kExp2PolyDouble", vexp2, 0.5, 8, False)


if __name__ == "__main__":
    main()
