/* tests/support/sanitizer.h: whether this build runs under AddressSanitizer (CI's second suite,
 * clang ASan+UBSan). There every memory access costs several times more and what the suite
 * checks is that none is wrong; a test that repeats the same code over millions of inputs (round
 * trips, long trajectories) may repeat it fewer times there, through the same code paths, and
 * leave the figures that need the full run (a bound on accumulated error, a rate) to the plain
 * build, which runs it all. */
#ifndef ACHILLES_TESTS_SUPPORT_SANITIZER_H
#define ACHILLES_TESTS_SUPPORT_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define TS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_SANITIZED 1
#endif
#endif
#ifndef TS_SANITIZED
#define TS_SANITIZED 0
#endif

/* n in the plain build, n / divisor under the sanitizer */
#define TS_FULL_OR(n, divisor) (TS_SANITIZED ? (n) / (divisor) : (n))

#endif
