/* tests/support/each.h: TS_EACH(m, a, b, ...) expands to m(a), m(b), ... (up to 48
 * arguments): the preprocessor's map, with which skip.h's TS_MAIN turns a list of test names
 * into cmocka's table. */
#ifndef ACHILLES_TESTS_SUPPORT_EACH_H
#define ACHILLES_TESTS_SUPPORT_EACH_H

#define TS_EACH_1(m, x) m(x)
#define TS_EACH_2(m, x, ...) m(x), TS_EACH_1(m, __VA_ARGS__)
#define TS_EACH_3(m, x, ...) m(x), TS_EACH_2(m, __VA_ARGS__)
#define TS_EACH_4(m, x, ...) m(x), TS_EACH_3(m, __VA_ARGS__)
#define TS_EACH_5(m, x, ...) m(x), TS_EACH_4(m, __VA_ARGS__)
#define TS_EACH_6(m, x, ...) m(x), TS_EACH_5(m, __VA_ARGS__)
#define TS_EACH_7(m, x, ...) m(x), TS_EACH_6(m, __VA_ARGS__)
#define TS_EACH_8(m, x, ...) m(x), TS_EACH_7(m, __VA_ARGS__)
#define TS_EACH_9(m, x, ...) m(x), TS_EACH_8(m, __VA_ARGS__)
#define TS_EACH_10(m, x, ...) m(x), TS_EACH_9(m, __VA_ARGS__)
#define TS_EACH_11(m, x, ...) m(x), TS_EACH_10(m, __VA_ARGS__)
#define TS_EACH_12(m, x, ...) m(x), TS_EACH_11(m, __VA_ARGS__)
#define TS_EACH_13(m, x, ...) m(x), TS_EACH_12(m, __VA_ARGS__)
#define TS_EACH_14(m, x, ...) m(x), TS_EACH_13(m, __VA_ARGS__)
#define TS_EACH_15(m, x, ...) m(x), TS_EACH_14(m, __VA_ARGS__)
#define TS_EACH_16(m, x, ...) m(x), TS_EACH_15(m, __VA_ARGS__)
#define TS_EACH_17(m, x, ...) m(x), TS_EACH_16(m, __VA_ARGS__)
#define TS_EACH_18(m, x, ...) m(x), TS_EACH_17(m, __VA_ARGS__)
#define TS_EACH_19(m, x, ...) m(x), TS_EACH_18(m, __VA_ARGS__)
#define TS_EACH_20(m, x, ...) m(x), TS_EACH_19(m, __VA_ARGS__)
#define TS_EACH_21(m, x, ...) m(x), TS_EACH_20(m, __VA_ARGS__)
#define TS_EACH_22(m, x, ...) m(x), TS_EACH_21(m, __VA_ARGS__)
#define TS_EACH_23(m, x, ...) m(x), TS_EACH_22(m, __VA_ARGS__)
#define TS_EACH_24(m, x, ...) m(x), TS_EACH_23(m, __VA_ARGS__)
#define TS_EACH_25(m, x, ...) m(x), TS_EACH_24(m, __VA_ARGS__)
#define TS_EACH_26(m, x, ...) m(x), TS_EACH_25(m, __VA_ARGS__)
#define TS_EACH_27(m, x, ...) m(x), TS_EACH_26(m, __VA_ARGS__)
#define TS_EACH_28(m, x, ...) m(x), TS_EACH_27(m, __VA_ARGS__)
#define TS_EACH_29(m, x, ...) m(x), TS_EACH_28(m, __VA_ARGS__)
#define TS_EACH_30(m, x, ...) m(x), TS_EACH_29(m, __VA_ARGS__)
#define TS_EACH_31(m, x, ...) m(x), TS_EACH_30(m, __VA_ARGS__)
#define TS_EACH_32(m, x, ...) m(x), TS_EACH_31(m, __VA_ARGS__)
#define TS_EACH_33(m, x, ...) m(x), TS_EACH_32(m, __VA_ARGS__)
#define TS_EACH_34(m, x, ...) m(x), TS_EACH_33(m, __VA_ARGS__)
#define TS_EACH_35(m, x, ...) m(x), TS_EACH_34(m, __VA_ARGS__)
#define TS_EACH_36(m, x, ...) m(x), TS_EACH_35(m, __VA_ARGS__)
#define TS_EACH_37(m, x, ...) m(x), TS_EACH_36(m, __VA_ARGS__)
#define TS_EACH_38(m, x, ...) m(x), TS_EACH_37(m, __VA_ARGS__)
#define TS_EACH_39(m, x, ...) m(x), TS_EACH_38(m, __VA_ARGS__)
#define TS_EACH_40(m, x, ...) m(x), TS_EACH_39(m, __VA_ARGS__)
#define TS_EACH_41(m, x, ...) m(x), TS_EACH_40(m, __VA_ARGS__)
#define TS_EACH_42(m, x, ...) m(x), TS_EACH_41(m, __VA_ARGS__)
#define TS_EACH_43(m, x, ...) m(x), TS_EACH_42(m, __VA_ARGS__)
#define TS_EACH_44(m, x, ...) m(x), TS_EACH_43(m, __VA_ARGS__)
#define TS_EACH_45(m, x, ...) m(x), TS_EACH_44(m, __VA_ARGS__)
#define TS_EACH_46(m, x, ...) m(x), TS_EACH_45(m, __VA_ARGS__)
#define TS_EACH_47(m, x, ...) m(x), TS_EACH_46(m, __VA_ARGS__)
#define TS_EACH_48(m, x, ...) m(x), TS_EACH_47(m, __VA_ARGS__)
#define TS_EACH_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17,   \
    _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35,      \
    _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, name, ...) name
#define TS_EACH(m, ...) TS_EACH_PICK(__VA_ARGS__, TS_EACH_48, TS_EACH_47, TS_EACH_46,              \
    TS_EACH_45, TS_EACH_44, TS_EACH_43, TS_EACH_42, TS_EACH_41, TS_EACH_40, TS_EACH_39,            \
    TS_EACH_38, TS_EACH_37, TS_EACH_36, TS_EACH_35, TS_EACH_34, TS_EACH_33, TS_EACH_32,            \
    TS_EACH_31, TS_EACH_30, TS_EACH_29, TS_EACH_28, TS_EACH_27, TS_EACH_26, TS_EACH_25,            \
    TS_EACH_24, TS_EACH_23, TS_EACH_22, TS_EACH_21, TS_EACH_20, TS_EACH_19, TS_EACH_18,            \
    TS_EACH_17, TS_EACH_16, TS_EACH_15, TS_EACH_14, TS_EACH_13, TS_EACH_12, TS_EACH_11,            \
    TS_EACH_10, TS_EACH_9, TS_EACH_8, TS_EACH_7, TS_EACH_6, TS_EACH_5, TS_EACH_4, TS_EACH_3,       \
    TS_EACH_2, TS_EACH_1, -)(m, __VA_ARGS__)

#endif
