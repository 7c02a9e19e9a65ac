"""Arithmetic analysis of index expressions, as TVM's ``tvm.arith``::

    from loom import arith, tir
    i = tir.Var("i")
    ana = arith.Analyzer()
    ana.bind(i, tir.Range(0, 16))           # 0 <= i < 16 from now on
    ana.simplify(i // 16)                   # 0
    ana.can_prove(i * 4 + 3 < 64)           # True
    ana.const_int_bound(i * 4 + 3)          # ConstIntBound(min_value=3, max_value=63)
    ana.modular_set(i * 4 + 3)              # ModularSet(coeff=4, base=3)
    with ana.constraint_scope(i < 8):       # a fact holding inside the block only
        ana.can_prove(i < 10)               # True

``can_prove`` returning False means "not proven", never "disproven".
"""
from ._loom import arith as _arith

Analyzer = _arith.Analyzer
ConstIntBound = _arith.ConstIntBound
ModularSet = _arith.ModularSet
IntSet = _arith.IntSet
ConstraintScope = _arith.ConstraintScope

__all__ = ["Analyzer", "ConstIntBound", "ModularSet", "IntSet", "ConstraintScope"]
