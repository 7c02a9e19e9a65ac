// Minimal preprocessor toolkit for the node table (ir/node_table.def): apply a macro to each
// element of a variadic list of parenthesised tuples.
#pragma once

#define LOOM_PP_CAT(a, b) LOOM_PP_CAT_I(a, b)
#define LOOM_PP_CAT_I(a, b) a##b

// Drops the first element of a comma-separated list: LOOM_PP_TAIL(x, a, b) -> a, b
#define LOOM_PP_TAIL(...) LOOM_PP_TAIL_I(__VA_ARGS__)
#define LOOM_PP_TAIL_I(first, ...) __VA_ARGS__

#define LOOM_PP_NARGS(...) \
  LOOM_PP_NARGS_I(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define LOOM_PP_NARGS_I(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N

// LOOM_PP_FOR_EACH(M, (a, b), (c, d)) -> M(a, b) M(c, d)     (at most 12 elements)
#define LOOM_PP_FOR_EACH(M, ...) \
  LOOM_PP_CAT(LOOM_PP_FE_, LOOM_PP_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define LOOM_PP_FE_1(M, x) M x
#define LOOM_PP_FE_2(M, x, ...) M x LOOM_PP_FE_1(M, __VA_ARGS__)
#define LOOM_PP_FE_3(M, x, ...) M x LOOM_PP_FE_2(M, __VA_ARGS__)
#define LOOM_PP_FE_4(M, x, ...) M x LOOM_PP_FE_3(M, __VA_ARGS__)
#define LOOM_PP_FE_5(M, x, ...) M x LOOM_PP_FE_4(M, __VA_ARGS__)
#define LOOM_PP_FE_6(M, x, ...) M x LOOM_PP_FE_5(M, __VA_ARGS__)
#define LOOM_PP_FE_7(M, x, ...) M x LOOM_PP_FE_6(M, __VA_ARGS__)
#define LOOM_PP_FE_8(M, x, ...) M x LOOM_PP_FE_7(M, __VA_ARGS__)
#define LOOM_PP_FE_9(M, x, ...) M x LOOM_PP_FE_8(M, __VA_ARGS__)
#define LOOM_PP_FE_10(M, x, ...) M x LOOM_PP_FE_9(M, __VA_ARGS__)
#define LOOM_PP_FE_11(M, x, ...) M x LOOM_PP_FE_10(M, __VA_ARGS__)
#define LOOM_PP_FE_12(M, x, ...) M x LOOM_PP_FE_11(M, __VA_ARGS__)
